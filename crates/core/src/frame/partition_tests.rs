use super::*;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Int64Array, StringArray};
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
fn group_rows_keeps_every_row_once_by_output_in_input_order() {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
    let b = |from: i64| RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from((from..from + 100).collect::<Vec<i64>>()))]).unwrap();
    let outs: Vec<u32> = (0..100).map(|i| (i % 3) as u32).collect();
    let (g, counts) = group_rows(&[b(0), b(100)], &[outs.clone(), outs], 4).unwrap();
    assert_eq!(counts, vec![68, 66, 66, 0]);
    let all = g.column(0).as_primitive::<Int64Type>().values().to_vec();
    let want: Vec<i64> = (0..3).flat_map(|p| (0..200).filter(move |i| (i % 100) % 3 == p)).collect();
    assert_eq!(all, want);
    // One batch all of one output comes back as it is.
    let (g, counts) = group_rows(&[b(0)], &[vec![2; 100]], 3).unwrap();
    assert_eq!((g, counts), (b(0), vec![0, 0, 100]));
    assert!(group_rows(&[b(0)], &[vec![5; 100]], 3).unwrap_err().to_string().contains("output 5 of 3"));
}
