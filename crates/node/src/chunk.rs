use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::chunk::{self, ChunkSpec, Dtype, Op, Partial};

use crate::error::{invalid, to_js, to_u64};

/// A chunk to generate: `kind` is 'random' (float64 in [0, 1)) or 'randint'
/// (int64 in [low, high)).
#[napi(object)]
pub struct JsChunkSpec {
    pub kind: String,
    pub seed: f64,
    pub chunk_id: f64,
    pub len: f64,
    pub low: Option<i64>,
    pub high: Option<i64>,
}

pub(crate) fn to_spec(s: &JsChunkSpec) -> Result<ChunkSpec> {
    let seed = to_u64("seed", s.seed)?;
    let chunk_id = to_u64("chunkId", s.chunk_id)?;
    let len = to_u64("len", s.len)? as usize;
    match s.kind.as_str() {
        "random" => Ok(ChunkSpec::Random { seed, chunk_id, len }),
        "randint" => {
            let low = s.low.ok_or_else(|| invalid("low", "randint needs low"))?;
            let high = s.high.ok_or_else(|| invalid("high", "randint needs high"))?;
            Ok(ChunkSpec::Randint { seed, chunk_id, len, low, high })
        }
        other => Err(invalid("kind", format!("{other:?} is not one of 'random', 'randint'"))),
    }
}

pub struct GenerateTask(ChunkSpec);

impl Task for GenerateTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        self.0.generate().map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// Generates one chunk's bytes (little-endian values).
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn generate_chunk(spec: JsChunkSpec) -> Result<AsyncTask<GenerateTask>> {
    let spec = to_spec(&spec)?;
    spillway_core::pool::reserve(spec.byte_len(), true);
    Ok(AsyncTask::new(GenerateTask(spec)))
}

/// `generate_chunk` on the calling thread.
#[napi(ts_return_type = "Buffer")]
pub fn generate_chunk_sync(env: Env, spec: JsChunkSpec) -> Result<Unknown<'static>> {
    let out = to_spec(&spec)?.generate().map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}

/// A reduction partial. `intSum` is the exact sum of int64 data, as a
/// decimal string since it can exceed 2^53.
#[napi(object)]
#[derive(Clone)]
pub struct JsPartial {
    pub count: f64,
    pub sum: f64,
    pub comp: f64,
    pub int_sum: Option<String>,
    pub min: f64,
    pub max: f64,
    pub m2: f64,
}

pub(crate) fn from_partial(p: Partial) -> JsPartial {
    JsPartial {
        count: p.count as f64,
        sum: p.sum,
        comp: p.comp,
        int_sum: p.int_sum.map(|s| s.to_string()),
        min: p.min,
        max: p.max,
        m2: p.m2,
    }
}

fn to_partial(p: &JsPartial) -> Result<Partial> {
    Ok(Partial {
        count: to_u64("count", p.count)?,
        sum: p.sum,
        comp: p.comp,
        int_sum: match &p.int_sum {
            Some(s) => Some(s.parse::<i128>().map_err(|_| invalid("intSum", format!("{s:?} is not an integer")))?),
            None => None,
        },
        min: p.min,
        max: p.max,
        m2: p.m2,
    })
}

pub(crate) fn parse_op(dtype: &str, op: &str) -> Result<(Dtype, Op)> {
    Ok((Dtype::parse(dtype).map_err(to_js)?, Op::parse(op).map_err(to_js)?))
}

pub struct ReduceTask {
    data: Buffer,
    dtype: Dtype,
    op: Op,
}

impl Task for ReduceTask {
    type Output = Partial;
    type JsValue = JsPartial;

    fn compute(&mut self) -> Result<Partial> {
        chunk::partial(&self.data, self.dtype, self.op).map_err(to_js)
    }

    fn resolve(&mut self, _: Env, p: Partial) -> Result<JsPartial> {
        Ok(from_partial(p))
    }
}

/// The partial of one chunk of `dtype` ('float64' | 'int64') values for `op`.
#[napi(ts_return_type = "Promise<JsPartial>")]
pub fn reduce_chunk(data: Buffer, dtype: String, op: String) -> Result<AsyncTask<ReduceTask>> {
    let (dtype, op) = parse_op(&dtype, &op)?;
    Ok(AsyncTask::new(ReduceTask { data, dtype, op }))
}

/// `reduce_chunk` on the calling thread: a sum of a 32 MB chunk takes about
/// as long as the hop to the thread pool and back.
#[napi]
pub fn reduce_chunk_sync(data: Buffer, dtype: String, op: String) -> Result<JsPartial> {
    let (dtype, op) = parse_op(&dtype, &op)?;
    chunk::partial(&data, dtype, op).map(from_partial).map_err(to_js)
}

/// Combines partials (in any grouping) into one.
#[napi]
pub fn combine_partials(partials: Vec<JsPartial>) -> Result<JsPartial> {
    let partials = partials.iter().map(to_partial).collect::<Result<Vec<_>>>()?;
    Partial::combine_all(&partials).map(from_partial).map_err(to_js)
}

/// The final value of `op` over a combined partial.
#[napi]
pub fn finish_partial(partial: JsPartial, op: String) -> Result<f64> {
    let op = Op::parse(&op).map_err(to_js)?;
    Ok(to_partial(&partial)?.finish(op))
}
