use super::*;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int64Array, StringArray};
use arrow_schema::{Field, Schema};

fn key(d: bool, nl: bool) -> SortKey {
    SortKey { name: "k".into(), descending: d, nulls_last: nl }
}

#[test]
fn hash_outputs_agree_across_batches_and_with_the_group_by_split() {
    let a: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("b"), None, Some("a")]));
    let out = hash_outputs(&[a.clone()], 7).unwrap();
    assert_eq!(out[0], out[3]);
    assert!(out.iter().all(|&p| p < 7));
    // The same rows as the groupBy keys them: the same hash, so the same output.
    let rows = key_rows(&[DataType::Utf8], &[a]).unwrap();
    assert_eq!((XxHash3_64::oneshot_with_seed(SPLIT_SEED, rows.row(1).as_ref()) % 7) as u32, out[1]);
}

#[test]
fn range_outputs_put_ties_after_their_boundary_in_every_order() {
    let k: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), None, Some(1), Some(3), Some(9), Some(3)]));
    let b: ArrayRef = Arc::new(Int64Array::from(vec![3, 6]));
    assert_eq!(range_outputs(&[k.clone()], &[key(false, false)], &[b]).unwrap(), vec![1, 0, 0, 1, 2, 1]);
    assert_eq!(range_outputs(&[k.clone()], &[key(false, true)], &[Arc::new(Int64Array::from(vec![3, 6])) as ArrayRef]).unwrap(), vec![1, 2, 0, 1, 2, 1]);
    // Descending: boundaries are in descending order too.
    let b: ArrayRef = Arc::new(Int64Array::from(vec![6, 3]));
    assert_eq!(range_outputs(&[k], &[key(true, true)], &[b]).unwrap(), vec![1, 2, 2, 2, 0, 2]);
}

#[test]
fn split_rows_and_slices_keep_every_row_once_in_order() {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
    let b = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from((0..100).collect::<Vec<i64>>()))]).unwrap();
    let outs: Vec<u32> = (0..100).map(|i| (i % 3) as u32).collect();
    let parts = split_rows(&b, &outs, 4).unwrap();
    assert!(parts[3].is_none());
    let p1 = parts[1].as_ref().unwrap().column(0).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(p1, (0..100).filter(|i| i % 3 == 1).collect::<Vec<i64>>());
    let cut = slices(&[b.clone(), b], 300);
    assert!(cut.len() > 2);
    let all: Vec<i64> = cut.iter().flatten().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect();
    assert_eq!(all.len(), 200);
    assert_eq!(&all[..100], &(0..100).collect::<Vec<i64>>()[..]);
    assert!(cut.iter().flatten().all(|b| b.column(0).len() > 0));
}
