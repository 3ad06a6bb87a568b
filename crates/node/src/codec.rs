use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::codec::{self, Codec, Filter, Method};
use spillway_core::pool;

use crate::error::to_js;

/// Codec names compiled into this build ('auto' resolves to 'lz4'); each
/// but 'none' is also accepted with '+shuffle'.
#[napi]
pub fn available_codecs() -> Vec<String> {
    codec::available().into_iter().map(String::from).collect()
}

/// An element size from JS: 0..=255, 0 meaning unknown.
pub(crate) fn element_size(v: Option<u32>) -> Result<u8> {
    match v {
        None => Ok(0),
        Some(n) if n <= 255 => Ok(n as u8),
        Some(n) => Err(to_js(spillway_core::Error::invalid("elementSize", format!("{n} is not a byte count of one element")))),
    }
}

/// The codec and filter an exact `compress` uses: 'auto' is lz4 alone, as
/// before; a '+shuffle' name shuffles for the element size given (8 when
/// unknown, as Blosc does).
fn resolve(name: &str, element_size: Option<u32>) -> Result<(Codec, Filter)> {
    let method = Method::parse(name).map_err(to_js)?;
    let filter = match method.shuffle {
        codec::Shuffle::Always => method.filter_for(crate::codec::element_size(element_size)? as usize),
        _ => Filter::None,
    };
    Ok((method.codec, filter))
}

pub struct CompressTask {
    data: Buffer,
    codec: Codec,
    filter: Filter,
    level: Option<i32>,
}

impl Task for CompressTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        codec::encode_to_vec_filtered(&self.data, self.codec, self.filter, self.level).map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// Compresses `data` into a spillway frame with exactly this codec;
/// `element_size` is the unit of a '+shuffle' codec.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn compress(data: Buffer, codec: String, level: Option<i32>, element_size: Option<u32>) -> Result<AsyncTask<CompressTask>> {
    let (codec, filter) = resolve(&codec, element_size)?;
    codec.resolve_level(level).map_err(to_js)?;
    pool::reserve(codec::max_frame_len_filtered(codec, filter, data.len()), false);
    Ok(AsyncTask::new(CompressTask { data, codec, filter, level }))
}

/// `compress` on the calling thread, with no hop to the thread pool: for
/// small inputs, or callers that already run off the main thread.
#[napi(ts_return_type = "Buffer")]
pub fn compress_sync(env: Env, data: Buffer, codec: String, level: Option<i32>, element_size: Option<u32>) -> Result<Unknown<'static>> {
    let (codec, filter) = resolve(&codec, element_size)?;
    let out = codec::encode_to_vec_filtered(&data, codec, filter, level).map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}

/// `decompress` on the calling thread.
#[napi(ts_return_type = "Buffer")]
pub fn decompress_sync(env: Env, data: Buffer) -> Result<Unknown<'static>> {
    let out = codec::decode(&data).map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}

pub struct DecompressTask {
    data: Buffer,
}

impl Task for DecompressTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        codec::decode(&self.data).map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// Verifies and decodes a spillway frame.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn decompress(data: Buffer) -> AsyncTask<DecompressTask> {
    // A forged length only reserves what the pool would hold anyway. No
    // huge-page advice on codec output (see `pool::fresh`).
    if let Ok(h) = codec::FrameHeader::parse(&data) {
        pool::reserve(h.decoded_len as usize, false);
    }
    AsyncTask::new(DecompressTask { data })
}

#[napi(object)]
pub struct FrameInfo {
    /// The codec's name, with '+shuffle' for a shuffled frame.
    pub codec: String,
    /// Bytes per element the shuffle regrouped; 1 when not shuffled.
    pub element_size: u32,
    pub level: i32,
    pub decoded_length: f64,
    pub payload_length: f64,
}

/// Reads a frame's header (without verifying the payload).
#[napi]
pub fn frame_info(data: Buffer) -> Result<FrameInfo> {
    let h = codec::FrameHeader::parse(&data).map_err(to_js)?;
    let shuffled = h.filter != Filter::None;
    Ok(FrameInfo {
        codec: if shuffled { format!("{}+shuffle", h.codec.name()) } else { h.codec.name().to_string() },
        element_size: h.filter.element_size() as u32,
        level: h.level as i32,
        decoded_length: h.decoded_len as f64,
        payload_length: h.payload_len as f64,
    })
}

pub struct StreamTask {
    data: Buffer,
    format: codec::stream::StreamFormat,
    decode: bool,
    level: Option<i32>,
    max_output: Option<usize>,
}

impl Task for StreamTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        if self.decode {
            codec::stream::decode_stream(self.format, &self.data, self.max_output).map_err(to_js)
        } else {
            codec::stream::encode_stream(self.format, &self.data, self.level).map_err(to_js)
        }
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// The content of a standard compressed file ('zstd': .zst, 'lz4': an LZ4 frame stream), off the JS thread.
/// With `max_output`, rejects with ERR_SPILLWAY_TOO_LARGE as soon as the content passes that many bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn decompress_file(data: Buffer, format: String, max_output: Option<f64>) -> Result<AsyncTask<StreamTask>> {
    let format = codec::stream::StreamFormat::parse(&format).map_err(to_js)?;
    // A bound past the address space is no bound.
    let max_output = max_output.map(|v| crate::error::to_u64("maxOutput", v)).transpose()?.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    Ok(AsyncTask::new(StreamTask { data, format, decode: true, level: None, max_output }))
}

/// `data` as a standard compressed file ('zstd' or 'lz4'), off the JS thread.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn compress_file(data: Buffer, format: String, level: Option<i32>) -> Result<AsyncTask<StreamTask>> {
    let format = codec::stream::StreamFormat::parse(&format).map_err(to_js)?;
    Ok(AsyncTask::new(StreamTask { data, format, decode: false, level, max_output: None }))
}

/// One block of `codec` without spillway's frame (a Parquet page: a zstd
/// frame, an LZ4 block, a snappy block), `decoded_length` bytes once
/// decoded. On the calling thread: hyparquet calls its decompressors
/// synchronously, one page (about a MiB) at a time.
#[napi(ts_return_type = "Buffer")]
pub fn decompress_block_sync(env: Env, data: Buffer, codec: String, decoded_length: f64) -> Result<Unknown<'static>> {
    let codec = Codec::parse(&codec).map_err(to_js)?;
    let len = crate::error::to_u64("decodedLength", decoded_length)?;
    let len = usize::try_from(len).map_err(|_| to_js(spillway_core::Error::invalid("decodedLength", format!("{len} is past the address space"))))?;
    let out = codec::decode_block(codec, &data, len).map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}

/// `data` as one block of `codec`, without spillway's frame (a Parquet page's payload), on the calling thread.
#[napi(ts_return_type = "Buffer")]
pub fn compress_block_sync(env: Env, data: Buffer, codec: String, level: Option<i32>) -> Result<Unknown<'static>> {
    let codec = Codec::parse(&codec).map_err(to_js)?;
    let out = codec::encode_block(codec, &data, level).map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}
