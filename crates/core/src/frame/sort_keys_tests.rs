// The fast path against the general (arrow-row) path on random rows: the
// same order, position for position, and the same range of every row.
use super::*;
use std::sync::Arc;

use arrow_array::{BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{Field, Schema};
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;
use proptest::prelude::*;

use crate::frame::partition::range_outputs_by_rows;
use crate::frame::sort::{order, sort_batches};

const I64: [i64; 7] = [i64::MIN, i64::MIN + 1, -1, 0, 1, 7, i64::MAX];
const F64: [f64; 10] = [f64::NAN, -f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -2.5, f64::MIN_POSITIVE, f64::MAX];
const F32: [f32; 8] = [f32::NAN, -f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 1.5, -2.5];
const I32: [i32; 5] = [i32::MIN, -3, 0, 3, i32::MAX];
const U64: [u64; 4] = [0, 1, 1 << 63, u64::MAX];
const STR: [&str; 5] = ["", "a", "ab", "b", "é"];

/// Row r's column c: None one time in five, else a pick from c's small domain (ties abound).
fn table(cells: &[Vec<u8>]) -> RecordBatch {
    let col = |c: usize| cells.iter().map(move |r| if r[c] % 5 == 0 { None } else { Some(r[c] as usize / 5) });
    let names = ["i64", "f64", "f32", "i32", "u64", "bool", "str"];
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(col(0).map(|v| v.map(|i| I64[i % 7])).collect::<Vec<_>>())),
        Arc::new(Float64Array::from(col(1).map(|v| v.map(|i| F64[i % 10])).collect::<Vec<_>>())),
        Arc::new(Float32Array::from(col(2).map(|v| v.map(|i| F32[i % 8])).collect::<Vec<_>>())),
        Arc::new(Int32Array::from(col(3).map(|v| v.map(|i| I32[i % 5])).collect::<Vec<_>>())),
        Arc::new(UInt64Array::from(col(4).map(|v| v.map(|i| U64[i % 4])).collect::<Vec<_>>())),
        Arc::new(BooleanArray::from(col(5).map(|v| v.map(|i| i % 2 == 1)).collect::<Vec<_>>())),
        Arc::new(StringArray::from(col(6).map(|v| v.map(|i| STR[i % 5])).collect::<Vec<_>>())),
    ];
    let schema = Arc::new(Schema::new(names.iter().zip(&cols).map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect::<Vec<_>>()));
    RecordBatch::try_new(schema, cols).unwrap()
}

fn keys_of(spec: &[(usize, bool, bool)]) -> Vec<SortKey> {
    let names = ["i64", "f64", "f32", "i32", "u64", "bool", "str"];
    spec.iter().map(|&(c, descending, nulls_last)| SortKey { name: names[c].into(), descending, nulls_last }).collect()
}

/// The table cut into batches at `cuts` (empty batches included).
fn cut(t: &RecordBatch, cuts: &[usize]) -> Vec<RecordBatch> {
    let mut at: Vec<usize> = cuts.iter().map(|&c| c % (t.num_rows() + 1)).collect();
    at.push(0);
    at.push(t.num_rows());
    at.sort();
    at.windows(2).map(|w| t.slice(w[0], w[1] - w[0])).collect()
}

fn rows() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 7), 0..80)
}

fn fast_keys() -> impl Strategy<Value = Vec<(usize, bool, bool)>> {
    prop::collection::vec((0usize..6, any::<bool>(), any::<bool>()), 1..=4)
}

proptest! {
    #[test]
    fn the_fast_order_is_the_row_format_order(cells in rows(), spec in fast_keys(), cuts in prop::collection::vec(0usize..100, 0..4)) {
        let t = table(&cells);
        let sort = keys_of(&spec);
        let batches = cut(&t, &cuts);
        let types: Vec<DataType> = columns(&t, &key_names(&sort), "test").unwrap().iter().map(|a| a.data_type().clone()).collect();
        let pos = sorted_positions(&batches, &sort, &types).unwrap().expect("fixed-width keys take the fast path");
        let starts: Vec<usize> = batches.iter().scan(0, |at, b| Some(std::mem::replace(at, *at + b.num_rows()))).collect();
        let fast: Vec<u32> = pos.iter().map(|&(b, r)| (starts[b] + r) as u32).collect();
        prop_assert_eq!(fast, order(&t, &sort).unwrap());
        // And the sorted batch, every column (strings too) gathered across batches, is the general path's.
        let out = sort_batches(&t.schema(), &batches, &sort).unwrap();
        let want = take_record_batch(&concat_batches(&t.schema(), &batches).unwrap(), &UInt32Array::from(order(&t, &sort).unwrap())).unwrap();
        prop_assert_eq!(out, want);
    }

    #[test]
    fn the_fast_ranges_are_the_row_format_ranges(cells in rows(), spec in fast_keys(), picks in prop::collection::vec(0usize..80, 0..6)) {
        let t = table(&cells);
        let sort = keys_of(&spec);
        let keys = columns(&t, &key_names(&sort), "test").unwrap();
        // Boundaries: some of the rows' keys, sorted as the boundaries task sorts them.
        let picked: Vec<u32> = if t.num_rows() == 0 { Vec::new() } else { picks.iter().map(|&p| (p % t.num_rows()) as u32).collect() };
        let sample = take_record_batch(&t, &UInt32Array::from(picked)).unwrap();
        let bounds = take_record_batch(&sample, &UInt32Array::from(order(&sample, &sort).unwrap())).unwrap();
        let bounds = columns(&bounds, &key_names(&sort), "test").unwrap();
        let fast = range_outputs(&keys, &sort, &bounds).expect("fixed-width keys take the fast path");
        prop_assert_eq!(fast, range_outputs_by_rows(&keys, &sort, &bounds).unwrap());
    }
}

#[test]
fn string_keys_take_the_general_path() {
    let t = table(&[vec![1, 2, 3, 4, 5, 6, 7]]);
    let sort = keys_of(&[(0, false, true), (6, true, false)]);
    assert!(sorted_positions(&[t.clone()], &sort, &[DataType::Int64, DataType::Utf8]).unwrap().is_none());
    assert!(range_outputs(&columns(&t, &key_names(&sort), "test").unwrap(), &sort, &[]).is_none());
}
