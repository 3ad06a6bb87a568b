//! Steps over a partition's batches as a whole rather than batch by batch:
//! `head`/`tail` (its first or last n rows) and `describe`'s reshaping of a
//! one-row aggregate into one row per statistic.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_cast::cast;
use arrow_schema::{DataType, Field, Schema};

use super::{frame_err, frame_error};
use crate::Result;

/// The first (or, `tail`, last) `n` rows of the batches, in order.
pub(crate) fn limit(batches: Vec<RecordBatch>, n: usize, tail: bool) -> Vec<RecordBatch> {
    let mut left = n;
    let mut out = Vec::new();
    let mut take = |b: &RecordBatch| {
        let k = b.num_rows().min(left);
        left -= k;
        if k > 0 {
            out.push(if tail { b.slice(b.num_rows() - k, k) } else { b.slice(0, k) });
        }
    };
    if tail {
        batches.iter().rev().for_each(&mut take);
        out.reverse();
    } else {
        batches.iter().for_each(&mut take);
    }
    out
}

pub(crate) const STATISTICS: [&str; 6] = ["count", "null_count", "mean", "std", "min", "max"];

/// `describe`'s table from the one-row aggregate of `columns` (for column i:
/// `{i}_count`, `{i}_rows`, `{i}_mean`, `{i}_std`, `{i}_min`, `{i}_max`):
/// a `statistic` column, then one float64 column per described column.
pub(crate) fn describe(b: &RecordBatch, columns: &[String]) -> Result<RecordBatch> {
    let mut fields = vec![Field::new("statistic", DataType::Utf8, false)];
    fields.extend(columns.iter().map(|c| Field::new(c, DataType::Float64, true)));
    let schema = Arc::new(Schema::new(fields));
    if b.num_rows() == 0 {
        return Ok(RecordBatch::new_empty(schema));
    }
    let get = |i: usize, s: &str| -> Result<Option<f64>> {
        let a = b.column_by_name(&format!("{i}_{s}")).ok_or_else(|| frame_error(format!("describe: no state {i}_{s}")))?;
        let f = cast(a, &DataType::Float64).map_err(frame_err("describing"))?;
        let f = f.as_any().downcast_ref::<arrow_array::Float64Array>().expect("cast to float64");
        Ok(if arrow_array::Array::is_null(f, 0) { None } else { Some(f.value(0)) })
    };
    let mut out: Vec<ArrayRef> = vec![Arc::new(StringArray::from(STATISTICS.to_vec()))];
    for i in 0..columns.len() {
        let (count, rows) = (get(i, "count")?, get(i, "rows")?);
        let nulls = match (rows, count) {
            (Some(r), Some(c)) => Some(r - c),
            _ => None,
        };
        let values = vec![count, nulls, get(i, "mean")?, get(i, "std")?, get(i, "min")?, get(i, "max")?];
        out.push(Arc::new(arrow_array::Float64Array::from(values)));
    }
    RecordBatch::try_new(schema, out).map_err(frame_err("describing"))
}
