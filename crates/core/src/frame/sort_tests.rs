use super::*;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Int64Array, StringArray};
use arrow_schema::Field;

fn batch(k: Vec<Option<&str>>, v: Vec<Option<i64>>, i: Vec<i64>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, true), Field::new("v", DataType::Int64, true), Field::new("i", DataType::Int64, false)]));
    RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(k)), Arc::new(Int64Array::from(v)), Arc::new(Int64Array::from(i))]).unwrap()
}

fn sk(name: &str, descending: bool, nulls_last: bool) -> SortKey {
    SortKey { name: name.into(), descending, nulls_last }
}

#[test]
fn sorts_by_two_keys_stably_with_nulls_either_end() {
    let b = batch(vec![Some("b"), None, Some("a"), Some("b"), Some("a"), Some("b")], vec![Some(1), Some(2), None, Some(1), Some(3), Some(2)], vec![0, 1, 2, 3, 4, 5]);
    let out = sort_batches(&b.schema(), &[b.slice(0, 3), b.slice(3, 3)], &[sk("k", false, true), sk("v", true, false)]).unwrap();
    let order: Vec<i64> = out.column(2).as_primitive::<Int64Type>().values().to_vec();
    // a: v desc nulls first → (null: 2), 3: 4; b: 2: 5, then the tie 1,1 in input order 0, 3; the null k last.
    assert_eq!(order, vec![2, 4, 5, 0, 3, 1]);
    let out = sort_batches(&b.schema(), &[b.clone()], &[sk("k", true, false)]).unwrap();
    assert_eq!(out.column(2).as_primitive::<Int64Type>().values().to_vec(), vec![1, 0, 3, 5, 2, 4]);
}

#[test]
fn samples_and_boundaries_cut_even_ranges() {
    let n = 100;
    let b = batch((0..n).map(|_| Some("x")).collect(), (0..n).map(|i| Some(99 - i)).collect(), (0..n).collect());
    let s = sample(&b.schema(), &[b.clone()], &[sk("v", false, false)], 10).unwrap();
    assert_eq!(s.num_rows(), 10);
    assert_eq!(s.num_columns(), 1);
    let bounds = boundaries(&s.schema(), &[s.clone()], &[sk("v", false, false)], 4).unwrap();
    let v: Vec<i64> = bounds.column(0).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(v.len(), 3);
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "{v:?}");
    let none = sample(&b.schema(), &[], &[sk("v", false, false)], 10).unwrap();
    assert_eq!(none.num_rows(), 0);
    assert_eq!(boundaries(&none.schema(), &[none.clone()], &[sk("v", false, false)], 4).unwrap().num_rows(), 0);
    assert!(bounds.column(0).null_count() == 0);
}

#[test]
fn top_n_per_partition_then_over_their_outputs_is_the_sorts_first_n_ties_in_input_order() {
    // Few distinct keys, many ties, nulls: every n from none to past the rows.
    let rows = 200i64;
    let k: Vec<Option<&str>> = (0..rows).map(|i| [Some("a"), Some("b"), None, Some("c")][(i * 7 % 4) as usize]).collect();
    let v: Vec<Option<i64>> = (0..rows).map(|i| if i % 11 == 0 { None } else { Some(i * 37 % 13) }).collect();
    let b = batch(k, v, (0..rows).collect());
    let parts = [b.slice(0, 70), b.slice(70, 0), b.slice(70, 90), b.slice(160, 40)];
    for keys in [vec![sk("v", false, true)], vec![sk("k", true, false), sk("v", false, true)]] {
        let whole = sort_batches(&b.schema(), &parts, &keys).unwrap();
        for n in [0usize, 1, 5, 13, 64, 199, 200, 500] {
            let partials: Vec<RecordBatch> = parts.iter().map(|p| top_n(&b.schema(), std::slice::from_ref(p), &keys, n).unwrap()).collect();
            assert!(partials.iter().all(|p| p.num_rows() <= n));
            let got = top_n(&b.schema(), &partials, &keys, n).unwrap();
            let want = whole.slice(0, n.min(whole.num_rows()));
            assert_eq!(got.column(2).as_primitive::<Int64Type>().values().to_vec(), want.column(2).as_primitive::<Int64Type>().values().to_vec(), "n = {n}, keys {keys:?}");
        }
    }
}
