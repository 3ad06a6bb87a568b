//! A broadcast join task: one partition of the large side, read by its own
//! plan in this task (never stored as a task's output first), probed a piece
//! at a time against the small side's hash table into the IPC it returns,
//! each piece of the partition dropped once probed. The small side's table
//! is built once per worker process and kept for the tasks after (keyed by
//! the bytes of its inputs, so a file rewritten under the same task keys
//! cannot be served stale): a broadcast join runs one such task per
//! partition of the large side, each with the same small side.

use std::sync::{Arc, Mutex};

use arrow_array::{RecordBatch, UInt32Array};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::SchemaRef;
use serde::Deserialize;
use twox_hash::XxHash3_128;

use super::join::{build_keys, checked_keys, output, probe, Built, How, JoinSpec, NONE, PROBE_ROWS};
use super::partition::{columns, key_rows};
use super::types::{self, FieldSpec};
use super::{frame_err, frame_error, plan};
use crate::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Small {
    Left,
    Right,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastPlan {
    /// A `frame.partition` plan: the large side's partition, over the first `partition_inputs` inputs.
    pub partition: serde_json::Value,
    pub partition_inputs: usize,
    pub join: JoinSpec,
    /// Which side is whole in every task (its partitions are the inputs after the partition's).
    pub small: Small,
    /// The small side's columns, for a small side with no rows.
    pub small_schema: Vec<FieldSpec>,
}

/// The small side concatenated and its keys in a table.
struct SmallSide {
    batch: RecordBatch,
    built: Built,
}

/// What a cached small side is for: its inputs' bytes (hash and length each), its keys and which side it is.
type CacheKey = (Vec<(u128, usize)>, Vec<String>, Small);

/// Small sides kept for the next tasks: the last few, each at most CACHE_BYTES (they sit outside managed memory).
static CACHE: Mutex<Vec<(CacheKey, Arc<SmallSide>)>> = Mutex::new(Vec::new());
const CACHE_ENTRIES: usize = 2;
const CACHE_BYTES: usize = 64 << 20;

fn small_side(plan: &BroadcastPlan, big: &SchemaRef, inputs: &[&[u8]]) -> Result<Arc<SmallSide>> {
    let keys = match plan.small {
        Small::Left => &plan.join.left_on,
        Small::Right => &plan.join.right_on,
    };
    let id: CacheKey = (inputs.iter().map(|b| (XxHash3_128::oneshot(b), b.len())).collect(), keys.clone(), plan.small);
    if let Some((_, s)) = CACHE.lock().map_err(|_| frame_error("a broadcast join's cache was poisoned by a panic"))?.iter().find(|(k, _)| *k == id) {
        return Ok(Arc::clone(s));
    }
    let (schema, batches) = plan::inputs(inputs)?;
    let schema = match schema {
        Some(s) => s,
        None => types::from_specs(&plan.small_schema)?,
    };
    let batch = arrow_select::concat::concat_batches(&schema, &batches).map_err(frame_err("gathering a join side"))?;
    drop(batches);
    let big = RecordBatch::new_empty(Arc::clone(big));
    let types = match plan.small {
        Small::Right => checked_keys(&plan.join, &big, &batch)?,
        Small::Left => checked_keys(&plan.join, &batch, &big)?,
    };
    let built = build_keys(types, &columns(&batch, keys, "join key")?, batch.num_rows())?;
    let side = Arc::new(SmallSide { batch, built });
    let bytes = side.batch.get_array_memory_size() + side.built.rows.size() + 8 * side.built.next.len();
    if bytes <= CACHE_BYTES {
        let mut cache = CACHE.lock().map_err(|_| frame_error("a broadcast join's cache was poisoned by a panic"))?;
        if cache.len() >= CACHE_ENTRIES {
            cache.remove(0);
        }
        cache.push((id, Arc::clone(&side)));
    }
    Ok(side)
}

/// Output row pairs for `right`'s rows probing a left side's table (an inner or right join whose left side is the small one), in right order.
fn probe_right(spec: &JoinSpec, b: &Built, right: &RecordBatch) -> Result<(UInt32Array, UInt32Array)> {
    let rk = columns(right, &spec.right_on, "join right key")?;
    let rows = key_rows(&b.types, &rk)?;
    let valid = super::join::all_valid(&rk, right.num_rows());
    let (mut li, mut ri): (Vec<Option<u32>>, Vec<Option<u32>>) = (Vec::new(), Vec::new());
    for j in 0..right.num_rows() {
        match (valid[j].then(|| b.group(rows.row(j))).flatten(), spec.how) {
            (Some(g), _) => {
                let mut i = b.heads[g as usize];
                while i != NONE {
                    li.push(Some(i));
                    ri.push(Some(j as u32));
                    i = b.next[i as usize];
                }
            }
            (None, How::Right) => {
                li.push(None);
                ri.push(Some(j as u32));
            }
            (None, _) => {}
        }
    }
    Ok((UInt32Array::from(li), UInt32Array::from(ri)))
}

/// A broadcast join task's output: its partition of the large side joined with the whole small side, as an IPC stream.
pub fn run_broadcast(plan_json: &str, inputs: &[&[u8]]) -> Result<Vec<u8>> {
    let plan: BroadcastPlan = serde_json::from_str(plan_json).map_err(|e| frame_error(format!("a broadcast join plan that is not one: {e}")))?;
    let spec = &plan.join;
    if plan.partition_inputs > inputs.len() {
        return Err(frame_error(format!("a broadcast join of {} inputs told its partition reads {}", inputs.len(), plan.partition_inputs)));
    }
    if plan.small == Small::Left && !matches!(spec.how, How::Inner | How::Right) || plan.small == Small::Right && matches!(spec.how, How::Right | How::Outer) {
        return Err(frame_error(format!("a {:?} join cannot broadcast its {:?} side: that side's unmatched rows would come out once per task", spec.how, plan.small)));
    }
    let (big_inputs, small_inputs) = inputs.split_at(plan.partition_inputs);
    let (schema, batches) = plan::partition_batches(&plan.partition.to_string(), big_inputs)?;
    let small = small_side(&plan, &schema, small_inputs)?;
    let empty = RecordBatch::new_empty(Arc::clone(&schema));
    let none = UInt32Array::from(Vec::<u32>::new());
    let out_schema = match plan.small {
        Small::Right => output(spec, &empty, &small.batch, &none, &none)?.schema(),
        Small::Left => output(spec, &small.batch, &empty, &none, &none)?.schema(),
    };
    let mut w = StreamWriter::try_new(Vec::new(), &out_schema).map_err(frame_err("encoding IPC"))?;
    // Each batch of the partition is dropped once probed: the output grows as the input shrinks.
    for b in batches {
        let mut at = 0;
        while at < b.num_rows() {
            let piece = b.slice(at, PROBE_ROWS.min(b.num_rows() - at));
            at += piece.num_rows();
            let joined = match plan.small {
                Small::Right => {
                    let (li, ri) = probe(spec, &small.built, &piece, &mut [])?;
                    (!li.is_empty()).then(|| output(spec, &piece, &small.batch, &li, &ri)).transpose()?
                }
                Small::Left => {
                    let (li, ri) = probe_right(spec, &small.built, &piece)?;
                    (!ri.is_empty()).then(|| output(spec, &small.batch, &piece, &li, &ri)).transpose()?
                }
            };
            if let Some(j) = joined {
                w.write(&j).map_err(frame_err("encoding IPC"))?;
            }
        }
    }
    let mut out = w.into_inner().map_err(frame_err("encoding IPC"))?;
    // The slack past its length would stay with the bytes for as long as the worker keeps them.
    out.shrink_to_fit();
    Ok(out)
}

#[cfg(test)]
#[path = "broadcast_tests.rs"]
mod tests;
