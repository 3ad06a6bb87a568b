//! A frame's sort: each input partition gives a sample of its sort keys,
//! the samples give n-1 range boundaries (partition.rs sends each row to its
//! range), and each range is sorted here. Rows compare by their arrow-row
//! bytes under the sort's options, the same order the range partitioner
//! uses, and the sort is stable: ties keep their input order, and inputs
//! arrive in order, so the whole sort is stable.

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Schema, SchemaRef};
use arrow_select::concat::concat_batches;
use arrow_select::take::{take, take_record_batch};

use arrow_select::interleave::interleave_record_batch;

use super::partition::{columns, sort_converter, SortKey};
use super::sort_keys;
use super::{frame_err, frame_error};
use crate::Result;

fn names(sort: &[SortKey]) -> Vec<String> {
    sort.iter().map(|k| k.name.clone()).collect()
}

/// Row indices of `b` in sorted order (stable): the general path, for any key types.
pub(crate) fn order(b: &RecordBatch, sort: &[SortKey]) -> Result<Vec<u32>> {
    let keys = columns(b, &names(sort), "sortBy")?;
    let types: Vec<DataType> = keys.iter().map(|a| a.data_type().clone()).collect();
    let rows = sort_converter(&types, sort)?.convert_columns(&super::canonical::canonical_all(&keys)).map_err(frame_err("ordering rows"))?;
    // Unstable pdqsort with ties broken by index: the stable order, without merge sort's buffer.
    let mut idx: Vec<u32> = (0..b.num_rows() as u32).collect();
    idx.sort_unstable_by(|&x, &y| rows.row(x as usize).cmp(&rows.row(y as usize)).then(x.cmp(&y)));
    Ok(idx)
}

/// Batches of `schema` as one batch, sorted.
pub fn sort_batches(schema: &SchemaRef, batches: &[RecordBatch], sort: &[SortKey]) -> Result<RecordBatch> {
    if sort.is_empty() {
        return Err(frame_error("sortBy needs at least one key"));
    }
    let types = match batches.first() {
        Some(b) => columns(b, &names(sort), "sortBy")?.iter().map(|a| a.data_type().clone()).collect(),
        None => Vec::new(),
    };
    if let Some(pos) = sort_keys::sorted_positions(batches, sort, &types)? {
        return gather_rows(schema, batches, &pos);
    }
    let all = concat_batches(schema, batches).map_err(frame_err("gathering rows to sort"))?;
    let idx = order(&all, sort)?;
    take_record_batch(&all, &UInt32Array::from(idx)).map_err(frame_err("sorting rows"))
}

/// The first `n` rows of the stable sort of `batches`: a `sortBy().head(n)`
/// without sorting everything. Each partition keeps its own first n and one
/// task takes the first n of those (in partition order, so ties still keep
/// the input order): a selection, O(rows), then a sort of n.
pub fn top_n(schema: &SchemaRef, batches: &[RecordBatch], sort: &[SortKey], n: usize) -> Result<RecordBatch> {
    if sort.is_empty() {
        return Err(frame_error("sortBy needs at least one key"));
    }
    let all = concat_batches(schema, batches).map_err(frame_err("gathering rows to sort"))?;
    if n == 0 || all.num_rows() == 0 {
        return Ok(all.slice(0, 0));
    }
    let keys = columns(&all, &names(sort), "sortBy")?;
    let types: Vec<DataType> = keys.iter().map(|a| a.data_type().clone()).collect();
    let rows = sort_converter(&types, sort)?.convert_columns(&super::canonical::canonical_all(&keys)).map_err(frame_err("ordering rows"))?;
    let cmp = |x: &u32, y: &u32| rows.row(*x as usize).cmp(&rows.row(*y as usize)).then(x.cmp(y));
    let mut idx: Vec<u32> = (0..all.num_rows() as u32).collect();
    if n < idx.len() {
        idx.select_nth_unstable_by(n - 1, cmp);
        idx.truncate(n);
    }
    idx.sort_unstable_by(cmp);
    take_record_batch(&all, &UInt32Array::from(idx)).map_err(frame_err("sorting rows"))
}

/// The rows at `pos` (batch, row) as one batch of `schema`: no concatenated copy of the inputs first.
fn gather_rows(schema: &SchemaRef, batches: &[RecordBatch], pos: &[(usize, usize)]) -> Result<RecordBatch> {
    let cols = match batches {
        [] => return Ok(RecordBatch::new_empty(schema.clone())),
        [one] => take_record_batch(one, &UInt32Array::from_iter_values(pos.iter().map(|&(_, r)| r as u32))).map_err(frame_err("sorting rows"))?,
        _ => interleave_record_batch(&batches.iter().collect::<Vec<_>>(), pos).map_err(frame_err("sorting rows"))?,
    }
    .columns()
    .to_vec();
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(pos.len()));
    RecordBatch::try_new_with_options(schema.clone(), cols, &opts).map_err(frame_err("sorting rows"))
}

/// Up to `per` rows' keys, evenly spaced over the batches: a partition's sample.
pub fn sample(schema: &SchemaRef, batches: &[RecordBatch], sort: &[SortKey], per: usize) -> Result<RecordBatch> {
    let all = concat_batches(schema, batches).map_err(frame_err("gathering rows to sample"))?;
    let keys = columns(&all, &names(sort), "sortBy")?;
    let n = all.num_rows();
    let k = per.min(n);
    let idx = UInt32Array::from((0..k).map(|i| (i * n / k.max(1)) as u32).collect::<Vec<_>>());
    let cols = keys.iter().map(|a| take(a.as_ref(), &idx, None)).collect::<std::result::Result<Vec<ArrayRef>, _>>().map_err(frame_err("sampling rows"))?;
    let fields: Vec<_> = sort.iter().zip(&keys).map(|(s, a)| arrow_schema::Field::new(&s.name, a.data_type().clone(), true)).collect();
    RecordBatch::try_new_with_options(std::sync::Arc::new(Schema::new(fields)), cols, &arrow_array::RecordBatchOptions::new().with_row_count(Some(k))).map_err(frame_err("sampling rows"))
}

/// The `n - 1` boundaries of `n` ranges holding about as many sampled keys each (fewer when the samples are fewer).
pub fn boundaries(schema: &SchemaRef, samples: &[RecordBatch], sort: &[SortKey], n: usize) -> Result<RecordBatch> {
    let sorted = sort_batches(schema, samples, sort)?;
    let m = sorted.num_rows();
    let idx: Vec<u32> = if m == 0 { Vec::new() } else { (1..n).map(|k| (k * m / n) as u32).collect() };
    take_record_batch(&sorted, &UInt32Array::from(idx)).map_err(frame_err("choosing sort boundaries"))
}

#[cfg(test)]
#[path = "sort_tests.rs"]
mod tests;
