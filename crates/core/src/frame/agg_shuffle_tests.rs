use super::*;
use crate::frame::partition::{hash_outputs, output_of};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, Float64Array, Int64Array, StringArray};
use arrow_schema::{DataType, Field};

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true), Field::new("s", DataType::Utf8, true), Field::new("x", DataType::Float64, true)]))
}

fn batch(k: Vec<Option<i64>>, s: Vec<Option<&str>>, x: Vec<Option<f64>>) -> RecordBatch {
    RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(k)), Arc::new(StringArray::from(s)), Arc::new(Float64Array::from(x))]).unwrap()
}

fn split(probe_rows: usize) -> AggSplit {
    serde_json::from_value(serde_json::json!({ "probeRows": probe_rows, "agg": { "keys": ["k"], "aggs": [
        { "name": "n", "func": "count" }, { "name": "t", "func": "sum", "column": "x" }, { "name": "m", "func": "mean", "column": "x" },
        { "name": "lo", "func": "min", "column": "x" }, { "name": "u", "func": "nUnique", "column": "s" },
        { "name": "f", "func": "first", "column": "s" }, { "name": "l", "func": "last", "column": "s" }, { "name": "v", "func": "var", "column": "x" }] } }))
    .unwrap()
}

fn ipc_of((schema, batches, _): SplitBatches) -> Vec<u8> {
    ipc::encode(&schema, &batches).unwrap()
}

#[test]
fn the_skip_decision_is_groups_per_row_above_the_ratio() {
    assert!(skips_partial(90, 100, 0.8));
    assert!(!skips_partial(80, 100, 0.8));
    assert!(!skips_partial(0, 0, 0.8));
    // Keys that never repeat: rows, tagged, only the keys and aggregated columns (each once).
    let distinct = batch((0..6).map(Some).collect(), vec![Some("a"); 6], vec![Some(1.0); 6]);
    let (s, b, h) = states_or_rows(&split(4), &schema(), vec![distinct.clone()]).unwrap();
    assert!(is_rows(&s) && h.is_none());
    assert_eq!(s.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["k", "x", "s"]);
    assert_eq!(b[0].num_rows(), 6);
    // The same rows under the probe: states, whatever the ratio.
    let (s, b, _) = states_or_rows(&split(100), &schema(), vec![distinct]).unwrap();
    assert!(!is_rows(&s) && b[0].num_rows() == 6 && s.field_with_name("m__sum").is_ok());
    // Keys that repeat: states.
    let few = batch(vec![Some(1), Some(1), Some(2), Some(1), Some(2), Some(2)], vec![Some("a"); 6], vec![Some(1.0); 6]);
    let (s, b, h) = states_or_rows(&split(4), &schema(), vec![few]).unwrap();
    assert!(!is_rows(&s));
    assert_eq!(b[0].num_rows(), 2);
    // The states carry the hashes their groups were probed with: those the split would get hashing the state's keys.
    assert_eq!(h.map(|h| h.iter().map(|&h| output_of(h, 7)).collect::<Vec<_>>()), Some(hash_outputs(&[Arc::clone(b[0].column(0))], 7).unwrap()));
}

#[test]
fn rows_and_states_merge_in_input_order_to_the_one_pass_answer() {
    let parts = [
        batch(vec![Some(1), Some(2), None, Some(1)], vec![None, Some("p"), Some("z"), Some("q")], vec![Some(1.0), None, Some(3.0), Some(2.0)]),
        batch(vec![Some(2), Some(1), Some(3)], vec![Some("r"), Some("s"), None], vec![Some(5.0), Some(4.0), None]),
        batch(vec![Some(1), Some(2), None], vec![Some("t"), Some("p"), None], vec![Some(8.0), Some(6.0), None]),
    ];
    let a = split(2);
    let whole = aggregate::finish(&a.agg, &aggregate::partial(&a.agg, &schema(), &parts).unwrap()).unwrap();
    // Probe 2 (the first batch whole): input 0 repeats key 1 (3 groups in 4 rows) and sends states, 1 and 2 rows; probe 100: all states.
    for probe in [2, 100] {
        let a = split(probe);
        let shards: Vec<Vec<u8>> = parts.iter().map(|p| ipc_of(states_or_rows(&a, &schema(), vec![p.clone()]).unwrap())).collect();
        let kinds: Vec<bool> = shards.iter().map(|s| is_rows(&ipc::decode(s).unwrap().0)).collect();
        assert_eq!(kinds, if probe == 2 { [false, true, true] } else { [false, false, false] });
        let refs: Vec<&[u8]> = shards.iter().map(Vec::as_slice).collect();
        let out = collect(&a.agg, &[], &refs).unwrap();
        let find = |b: &RecordBatch, k: Option<i64>| (0..b.num_rows()).find(|&i| b.column(0).as_primitive::<Int64Type>().iter().nth(i).unwrap() == k).unwrap();
        assert_eq!(out.num_rows(), whole.num_rows());
        for k in [Some(1), Some(2), Some(3), None] {
            let (i, j) = (find(&out, k), find(&whole, k));
            for c in 1..whole.num_columns() {
                let (a, b, name) = (out.column(c).slice(i, 1), whole.column(c).slice(j, 1), whole.schema().field(c).name().clone());
                if a.data_type() == &DataType::Float64 && a.is_valid(0) {
                    // Merged moments differ from one pass in the last bit.
                    let (x, y) = (a.as_primitive::<Float64Type>().value(0), b.as_primitive::<Float64Type>().value(0));
                    assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "column {name} key {k:?}: {x} vs {y}");
                } else {
                    assert_eq!(a.to_data(), b.to_data(), "column {name} key {k:?}");
                }
            }
        }
        let (i, c) = (find(&out, Some(1)), |n: &str| out.column_by_name(n).unwrap().clone());
        assert_eq!((c("f").as_string::<i32>().value(i), c("l").as_string::<i32>().value(i)), ("q", "t"));
        assert_eq!((c("n").as_primitive::<Int64Type>().value(i), c("u").as_primitive::<Int64Type>().value(i)), (4, 3));
        assert!((c("m").as_primitive::<Float64Type>().value(i) - 15.0 / 4.0).abs() < 1e-12);
    }
}

#[test]
fn an_output_no_shard_reached_has_the_aggregated_columns() {
    let a = split(2);
    let declared = types::to_specs(&schema()).unwrap();
    let out = collect(&a.agg, &declared, &[]).unwrap();
    assert_eq!(out.num_rows(), 0);
    let names: Vec<_> = out.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["k", "n", "t", "m", "lo", "u", "f", "l", "v"]);
}
