//! Which output partition each row of a shuffled frame goes to, and the
//! rows cut by output. Keys are arrow-row bytes: a hash of them (XXH3 with
//! the seed the groupBy's splitOut uses, so a frame hash-partitioned by its
//! keys and a groupBy's outputs agree) for a hash shuffle, their byte order
//! (which is the sort order the options ask for) for a range shuffle.

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{DataType, SortOptions};
use arrow_select::take::take_record_batch;
use serde::Deserialize;
use twox_hash::XxHash3_64;

pub(crate) use super::aggregate::SPLIT_SEED;
use super::{frame_err, frame_error};
use crate::Result;

/// One sort key: a column and its order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SortKey {
    pub name: String,
    #[serde(default)]
    pub descending: bool,
    #[serde(default)]
    pub nulls_last: bool,
}

/// The columns `names` of `b`, or an error naming the one missing and those there are.
pub fn columns(b: &RecordBatch, names: &[String], what: &str) -> Result<Vec<ArrayRef>> {
    names
        .iter()
        .map(|n| {
            b.column_by_name(n).cloned().ok_or_else(|| {
                let there: Vec<_> = b.schema().fields().iter().map(|f| format!("{:?}", f.name())).collect();
                frame_error(format!("{what}: no column {n:?}; the columns are {}", there.join(", ")))
            })
        })
        .collect()
}

/// Key rows in the plain (ascending, nulls first) order: hashed and compared for equality.
pub fn key_rows(types: &[DataType], keys: &[ArrayRef]) -> Result<Rows> {
    let conv = RowConverter::new(types.iter().cloned().map(SortField::new).collect()).map_err(frame_err("keying rows"))?;
    conv.convert_columns(keys).map_err(frame_err("keying rows"))
}

/// The fixed-seed hash of one key row: the same on every worker.
#[inline]
pub fn row_hash(bytes: &[u8]) -> u64 {
    XxHash3_64::oneshot_with_seed(SPLIT_SEED, bytes)
}

/// Each row's output among `n` by the hash of its keys.
pub fn hash_outputs(keys: &[ArrayRef], n: u64) -> Result<Vec<u32>> {
    let types: Vec<DataType> = keys.iter().map(|a| a.data_type().clone()).collect();
    let rows = key_rows(&types, keys)?;
    Ok(rows.iter().map(|r| (row_hash(r.as_ref()) % n) as u32).collect())
}

/// A converter whose row bytes sort as `sort` asks (descending, nulls last per key).
pub fn sort_converter(types: &[DataType], sort: &[SortKey]) -> Result<RowConverter> {
    let fields = types.iter().zip(sort).map(|(t, k)| SortField::new_with_options(t.clone(), SortOptions { descending: k.descending, nulls_first: !k.nulls_last })).collect();
    RowConverter::new(fields).map_err(frame_err("ordering rows"))
}

/// Each row's output by range: the number of `boundaries` (sorted, key
/// columns in `sort`'s order) at or before it, so ties of a boundary all go
/// to the output after it.
pub fn range_outputs(keys: &[ArrayRef], sort: &[SortKey], boundaries: &[ArrayRef]) -> Result<Vec<u32>> {
    let types: Vec<DataType> = keys.iter().map(|a| a.data_type().clone()).collect();
    let conv = sort_converter(&types, sort)?;
    let bounds = conv.convert_columns(boundaries).map_err(frame_err("reading sort boundaries"))?;
    let rows = conv.convert_columns(keys).map_err(frame_err("ordering rows"))?;
    let nb = bounds.num_rows();
    Ok(rows
        .iter()
        .map(|r| {
            let (mut lo, mut hi) = (0, nb);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if bounds.row(mid) <= r {
                    lo = mid + 1
                } else {
                    hi = mid
                }
            }
            lo as u32
        })
        .collect())
}

/// `b`'s rows cut by output (`outputs[i]` is row i's), in row order within each; empty outputs are None.
pub fn split_rows(b: &RecordBatch, outputs: &[u32], n: usize) -> Result<Vec<Option<RecordBatch>>> {
    let mut idx: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, &p) in outputs.iter().enumerate() {
        idx.get_mut(p as usize).ok_or_else(|| frame_error(format!("row {i} sent to output {p} of {n}")))?.push(i as u32);
    }
    idx.into_iter()
        .map(|rows| {
            if rows.is_empty() {
                return Ok(None);
            }
            if rows.len() == b.num_rows() {
                return Ok(Some(b.clone()));
            }
            take_record_batch(b, &UInt32Array::from(rows)).map(Some).map_err(frame_err("cutting rows by output"))
        })
        .collect()
}

/// Batches cut into slices of about `max_bytes` (by their in-memory size), so no shard part outgrows a message.
pub fn slices(batches: &[RecordBatch], max_bytes: usize) -> Vec<Vec<RecordBatch>> {
    let mut out: Vec<Vec<RecordBatch>> = vec![Vec::new()];
    let mut size = 0;
    for b in batches {
        let bytes = b.get_array_memory_size().max(1);
        let per = (b.num_rows() * max_bytes / bytes).max(1);
        let mut at = 0;
        while at < b.num_rows() {
            let len = per.min(b.num_rows() - at);
            let piece = b.slice(at, len);
            let pb = bytes * len / b.num_rows();
            if size > 0 && size + pb > max_bytes {
                out.push(Vec::new());
                size = 0;
            }
            out.last_mut().expect("one slice at least").push(piece);
            size += pb;
            at += len;
        }
    }
    out
}

#[cfg(test)]
#[path = "partition_tests.rs"]
mod tests;
