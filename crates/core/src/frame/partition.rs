//! Which output partition each row of a shuffled frame goes to, and the
//! rows cut by output. Keys are arrow-row bytes: a hash of them for a hash
//! shuffle, their byte order (which is the sort order the options ask for)
//! for a range shuffle.
//!
//! One hash per row: a stage hashes each row's key bytes once, with XXH3 and
//! a seed fixed across workers (so every worker, and a groupBy's splitOut,
//! sends a key to the same output), and every use reads that one hash by
//! different bits: the output is `hash % n` (the low bits when n is a power
//! of two), a grace bucket the top bits (grace.rs `bucket_of`), and a hash
//! table `table_hash(hash)`, a bijective remix. The remix is what keeps
//! partitions from crowding a table: all of output p's rows share their
//! hash's low bits, and a grace bucket's its top ones, while hashbrown picks
//! the slot by the low bits and the tag by the top 7; fed the raw hash, a
//! table in one output of 64 would start every probe in 1/64 of its slots.

use arrow_array::{ArrayRef, RecordBatch};
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{DataType, SortOptions};
use serde::Deserialize;
use twox_hash::XxHash3_64;

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
    conv.convert_columns(&super::canonical::canonical_all(keys)).map_err(frame_err("keying rows"))
}

/// The seed of the row hash: fixed, so every worker agrees on a key's output.
pub(crate) const SPLIT_SEED: u64 = 0x5eed_f4a3_e5;

/// The fixed-seed hash of one key row: the same on every worker.
#[inline]
pub fn row_hash(bytes: &[u8]) -> u64 {
    XxHash3_64::oneshot_with_seed(SPLIT_SEED, bytes)
}

/// A row hash's output among `n`.
#[inline]
pub fn output_of(hash: u64, n: u64) -> u32 {
    (hash % n) as u32
}

/// A row hash as a hash table takes it: MurmurHash3's 64-bit finalizer, a
/// bijection (no two keys' hashes collide that did not already) whose every
/// bit depends on every bit in, so the bits an output or a grace bucket fixed
/// are spread again over the table's slots and tags.
#[inline]
pub fn table_hash(hash: u64) -> u64 {
    let mut h = hash;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Each row's output among `n` by the hash of its keys.
pub fn hash_outputs(keys: &[ArrayRef], n: u64) -> Result<Vec<u32>> {
    let types: Vec<DataType> = keys.iter().map(|a| a.data_type().clone()).collect();
    let rows = key_rows(&types, keys)?;
    Ok(rows.iter().map(|r| output_of(row_hash(r.as_ref()), n)).collect())
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
    if let Some(out) = super::sort_keys::range_outputs(keys, sort, boundaries) {
        return Ok(out);
    }
    range_outputs_by_rows(keys, sort, boundaries)
}

/// range_outputs over arrow-row bytes: any key types.
pub(crate) fn range_outputs_by_rows(keys: &[ArrayRef], sort: &[SortKey], boundaries: &[ArrayRef]) -> Result<Vec<u32>> {
    let types: Vec<DataType> = keys.iter().map(|a| a.data_type().clone()).collect();
    let conv = sort_converter(&types, sort)?;
    let bounds = conv.convert_columns(&super::canonical::canonical_all(boundaries)).map_err(frame_err("reading sort boundaries"))?;
    let rows = conv.convert_columns(&super::canonical::canonical_all(keys)).map_err(frame_err("ordering rows"))?;
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

/// The rows of `batches` grouped by output (`outputs[b][i]` is batch b's row
/// i's) into one batch, in one pass: output 0's rows first, then 1's, each in
/// input order; and how many rows each output has.
pub fn group_rows(batches: &[RecordBatch], outputs: &[Vec<u32>], n: usize) -> Result<(RecordBatch, Vec<usize>)> {
    let mut counts = vec![0usize; n];
    for (i, &p) in outputs.iter().flatten().enumerate() {
        *counts.get_mut(p as usize).ok_or_else(|| frame_error(format!("row {i} sent to output {p} of {n}")))? += 1;
    }
    let mut next: Vec<usize> = counts.iter().scan(0, |at, &c| Some(std::mem::replace(at, *at + c))).collect();
    let mut idx = vec![(0usize, 0usize); counts.iter().sum()];
    for (b, outs) in outputs.iter().enumerate() {
        for (i, &p) in outs.iter().enumerate() {
            idx[next[p as usize]] = (b, i);
            next[p as usize] += 1;
        }
    }
    let refs: Vec<&RecordBatch> = batches.iter().collect();
    let grouped = match refs.as_slice() {
        [] => return Err(frame_error("grouping rows of no batches")),
        // One batch all of one output is itself.
        [one] if counts.iter().any(|&c| c == one.num_rows()) => (*one).clone(),
        _ => arrow_select::interleave::interleave_record_batch(&refs, &idx).map_err(frame_err("cutting rows by output"))?,
    };
    Ok((grouped, counts))
}

#[cfg(test)]
#[path = "partition_tests.rs"]
mod tests;
