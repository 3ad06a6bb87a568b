use super::*;
use std::collections::BTreeMap;

use arrow_array::{Int32Array, StringArray};

fn spec(keys: &[&str]) -> AggSpec {
    let agg = |name: &str, func: &str, column: Option<&str>| AggExpr { name: name.into(), func: func.into(), column: column.map(Into::into) };
    AggSpec {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        aggs: vec![agg("n", "count", None), agg("nv", "count", Some("v")), agg("s", "sum", Some("v")), agg("m", "mean", Some("v")), agg("lo", "min", Some("f")), agg("hi", "max", Some("v"))],
    }
}

fn batch(k: Vec<Option<&str>>, g: Vec<Option<i32>>, v: Vec<Option<i32>>, f: Vec<Option<f64>>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, true), Field::new("g", DataType::Int32, true), Field::new("v", DataType::Int32, true), Field::new("f", DataType::Float64, true)]));
    RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(k)), Arc::new(Int32Array::from(g)), Arc::new(Int32Array::from(v)), Arc::new(Float64Array::from(f))]).unwrap()
}

/// Group -> (n, nv, s, m, lo, hi) the slow, obvious way.
type Row = (i64, i64, Option<i64>, Option<f64>, Option<f64>, Option<i64>);

fn reference(batches: &[RecordBatch]) -> BTreeMap<(Option<String>, Option<i32>), Row> {
    let mut out: BTreeMap<_, Row> = BTreeMap::new();
    for b in batches {
        let (k, g, v, f) = (b.column(0).as_string::<i32>(), b.column(1).as_primitive::<arrow_array::types::Int32Type>(), b.column(2).as_primitive::<arrow_array::types::Int32Type>(), b.column(3).as_primitive::<Float64Type>());
        for i in 0..b.num_rows() {
            let e = out.entry((k.is_valid(i).then(|| k.value(i).to_string()), g.is_valid(i).then(|| g.value(i)))).or_insert((0, 0, None, None, None, None));
            e.0 += 1;
            if v.is_valid(i) {
                let x = v.value(i) as i64;
                e.1 += 1;
                e.2 = Some(e.2.unwrap_or(0) + x);
                e.5 = Some(e.5.map_or(x, |h| h.max(x)));
            }
            if f.is_valid(i) {
                e.4 = Some(e.4.map_or(f.value(i), |l: f64| l.min(f.value(i))));
            }
        }
    }
    for e in out.values_mut() {
        e.3 = e.2.map(|s| s as f64 / e.1 as f64);
    }
    out
}

fn collect(b: &RecordBatch) -> BTreeMap<(Option<String>, Option<i32>), Row> {
    let k = b.column(0).as_string::<i32>();
    let g = b.column(1).as_primitive::<arrow_array::types::Int32Type>();
    let i64s = |c: usize| b.column(c).as_primitive::<Int64Type>().clone();
    let f64s = |c: usize| b.column(c).as_primitive::<Float64Type>().clone();
    let (n, nv, s, m, lo, hi) = (i64s(2), i64s(3), i64s(4), f64s(5), f64s(6), i64s(7));
    (0..b.num_rows())
        .map(|i| {
            let key = (k.is_valid(i).then(|| k.value(i).to_string()), g.is_valid(i).then(|| g.value(i)));
            (key, (n.value(i), nv.value(i), s.is_valid(i).then(|| s.value(i)), m.is_valid(i).then(|| m.value(i)), lo.is_valid(i).then(|| lo.value(i)), hi.is_valid(i).then(|| hi.value(i))))
        })
        .collect()
}

/// Seeded random batches: few keys so they repeat, nulls everywhere.
fn random_batches(seed: u64, count: usize, rows: usize) -> Vec<RecordBatch> {
    let mut x = seed;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let names = ["a", "b", "", "ä, \"q\""];
    (0..count)
        .map(|_| {
            let mut cols = (vec![], vec![], vec![], vec![]);
            for _ in 0..rows {
                cols.0.push((next(5) != 0).then(|| names[next(4) as usize]));
                cols.1.push((next(4) != 0).then(|| next(3) as i32 - 1));
                cols.2.push((next(3) != 0).then(|| next(2000) as i32 - 1000));
                cols.3.push((next(3) != 0).then(|| (next(1000) as f64) / 8.0 - 50.0));
            }
            batch(cols.0, cols.1, cols.2, cols.3)
        })
        .collect()
}

#[test]
fn partials_merged_equal_one_aggregation_and_the_reference() {
    let sp = spec(&["k", "g"]);
    for seed in [1u64, 7, 42, 99] {
        let parts: Vec<Vec<RecordBatch>> = (0..4).map(|p| random_batches(seed * 31 + p, 3, 200 * p as usize)).collect();
        let schema = parts[0][0].schema();
        let partials: Vec<RecordBatch> = parts.iter().map(|p| partial(&sp, &schema, p).unwrap()).collect();
        let merged = merge(&sp, &partials[0].schema(), &partials, None).unwrap();
        let all: Vec<RecordBatch> = parts.concat();
        assert_eq!(collect(&finish(&sp, &merged).unwrap()), reference(&all), "seed {seed}");
        // Split four ways, every group lands in exactly one piece.
        let mut pieces = BTreeMap::new();
        for i in 0..4 {
            let piece = merge(&sp, &partials[0].schema(), &partials, Some((4, i))).unwrap();
            for (k, v) in collect(&finish(&sp, &piece).unwrap()) {
                assert!(pieces.insert(k, v).is_none());
            }
        }
        assert_eq!(pieces, reference(&all), "seed {seed} split");
    }
}

#[test]
fn each_group_keeps_the_one_row_hash_its_keys_are_cut_by() {
    use crate::frame::partition::key_rows;
    let sp = spec(&["k", "g"]);
    let parts = random_batches(5, 3, 300);
    let mut agg = Aggregator::partial(&sp, &parts[0].schema()).unwrap();
    parts.iter().for_each(|b| agg.update(b).unwrap());
    let stored = agg.key_hashes().unwrap().to_vec();
    let state = agg.finish().unwrap();
    // Keys of two types with nulls: the state's keys, hashed afresh, give the stored hash of each group, in order.
    let rows = key_rows(&[DataType::Utf8, DataType::Int32], &state.columns()[..2]).unwrap();
    assert_eq!(rows.iter().map(|r| row_hash(r.as_ref())).collect::<Vec<_>>(), stored);
    assert!(stored.len() > 10 && Aggregator::partial(&spec(&[]), &parts[0].schema()).unwrap().key_hashes().is_none());
}

#[test]
fn an_empty_partition_gives_an_empty_state_of_the_right_schema() {
    let sp = spec(&["k"]);
    let schema = random_batches(3, 1, 1)[0].schema();
    let p = partial(&sp, &schema, &[]).unwrap();
    assert_eq!(p.num_rows(), 0);
    let names: Vec<_> = p.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["k", "n", "nv", "s", "m__sum", "m__count", "lo", "hi"]);
    let out = finish(&sp, &merge(&sp, &p.schema(), &[p.clone()], None).unwrap()).unwrap();
    assert_eq!((out.num_rows(), out.num_columns()), (0, 7));
}

#[test]
fn bad_specs_are_coded_errors_naming_the_column() {
    let schema = random_batches(3, 1, 1)[0].schema();
    let bad = AggSpec { keys: vec!["k".into()], aggs: vec![AggExpr { name: "x".into(), func: "sum".into(), column: Some("k".into()) }] };
    let e = partial(&bad, &schema, &[]).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_FRAME");
    assert!(e.to_string().contains("sum(\"k\") needs a numeric column"), "{e}");
    let e = partial(&AggSpec { keys: vec!["zz".into()], aggs: vec![] }, &schema, &[]).unwrap_err();
    assert!(e.to_string().contains("\"zz\""), "{e}");
}

#[test]
fn an_integer_sum_past_int64_is_an_error_naming_the_aggregate_in_a_partial_and_in_a_merge() {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, false), Field::new("v", DataType::Int64, false)]));
    let b = |v: Vec<i64>| RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(vec!["a"; v.len()])), Arc::new(Int64Array::from(v))]).unwrap();
    let spec = AggSpec { keys: vec!["k".into()], aggs: vec![AggExpr { name: "total".into(), func: "sum".into(), column: Some("v".into()) }] };
    let mut one = Aggregator::partial(&spec, &schema).unwrap();
    let err = one.update(&b(vec![i64::MAX - 1, 1, 1])).unwrap_err().to_string();
    assert!(err.contains("\"total\" sums integers past int64's range"), "{err}");
    // Each partial fits; their merge does not.
    let mut half = Aggregator::partial(&spec, &schema).unwrap();
    half.update(&b(vec![i64::MAX / 2 + 1])).unwrap();
    let state = half.finish().unwrap();
    let mut merge = Aggregator::merging(&spec, state.schema().as_ref(), None).unwrap();
    merge.update(&state).unwrap();
    assert!(merge.update(&state).unwrap_err().to_string().contains("past int64's range"));
}

#[test]
fn a_uint64_past_int64_is_an_error_naming_the_aggregate_not_a_null_that_is_skipped() {
    // pyarrow's uint64 columns (hashes, ids) hold values ≥ 2^63; Arrow's safe cast made them nulls and the sum 0 or null.
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::UInt64, true)]));
    let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(arrow_array::UInt64Array::from(vec![Some(1), None, Some(1 << 63)]))]).unwrap();
    for func in ["sum", "min", "max"] {
        let spec = AggSpec { keys: vec![], aggs: vec![AggExpr { name: "t".into(), func: func.into(), column: Some("v".into()) }] };
        let err = partial(&spec, &schema, &[b.clone()]).unwrap_err().to_string();
        assert!(err.contains("the aggregate \"t\": the uint64 value 9223372036854775808 (row 2 of the partition) does not fit int64"), "{func}: {err}");
    }
    // Values that fit sum exactly.
    let small = RecordBatch::try_new(schema.clone(), vec![Arc::new(arrow_array::UInt64Array::from(vec![Some(1), None, Some(1 << 62)]))]).unwrap();
    let spec = AggSpec { keys: vec![], aggs: vec![AggExpr { name: "t".into(), func: "sum".into(), column: Some("v".into()) }] };
    let state = partial(&spec, &schema, &[small]).unwrap();
    assert_eq!(state.column_by_name("t").unwrap().as_primitive::<Int64Type>().value(0), (1 << 62) + 1);
}

#[test]
fn decimals_aggregate_as_float64() {
    // DuckDB writes computed figures (i * 1.5) and money as DECIMAL; pyarrow decimal128(38, 10).
    let schema = Arc::new(Schema::new(vec![Field::new("d", DataType::Decimal128(38, 10), true)]));
    let d = arrow_array::Decimal128Array::from(vec![Some(15_000_000_000i128), None, Some(-2_500_000_000)]).with_precision_and_scale(38, 10).unwrap();
    let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(d)]).unwrap();
    let agg = |name: &str, func: &str| AggExpr { name: name.into(), func: func.into(), column: Some("d".into()) };
    let spec = AggSpec { keys: vec![], aggs: vec![agg("s", "sum"), agg("lo", "min"), agg("hi", "max"), agg("m", "mean")] };
    let out = finish(&spec, &partial(&spec, &schema, &[b]).unwrap()).unwrap();
    let f = |c: &str| out.column_by_name(c).unwrap().as_primitive::<Float64Type>().value(0);
    assert_eq!((f("s"), f("lo"), f("hi"), f("m")), (1.25, -0.25, 1.5, 0.625));
}

#[test]
fn max_is_nan_where_a_nan_is_and_min_skips_it_in_partials_and_merges_as_duckdb() {
    let agg = |name: &str, func: &str| AggExpr { name: name.into(), func: func.into(), column: Some("f".into()) };
    let sp = AggSpec { keys: vec!["k".into()], aggs: vec![agg("lo", "min"), agg("hi", "max")] };
    // Group a: NaN last; b: NaN first; c: no NaN; d: only NaN. Split over two partitions so merges see NaN on either side.
    let one = batch(vec![Some("a"), Some("b"), Some("c"), Some("a")], vec![None; 4], vec![None; 4], vec![Some(1.0), Some(f64::NAN), Some(2.0), Some(3.0)]);
    let two = batch(vec![Some("a"), Some("b"), Some("c"), Some("d")], vec![None; 4], vec![None; 4], vec![Some(f64::NAN), Some(-1.0), Some(5.0), Some(f64::NAN)]);
    let schema = one.schema();
    let partials = vec![partial(&sp, &schema, &[one.clone()]).unwrap(), partial(&sp, &schema, &[two.clone()]).unwrap()];
    for out in [finish(&sp, &merge(&sp, &partials[0].schema(), &partials, None).unwrap()).unwrap(), finish(&sp, &partial(&sp, &schema, &[one, two]).unwrap()).unwrap()] {
        let k = out.column(0).as_string::<i32>();
        let (lo, hi) = (out.column(1).as_primitive::<Float64Type>(), out.column(2).as_primitive::<Float64Type>());
        let got: BTreeMap<&str, (f64, f64)> = (0..out.num_rows()).map(|i| (k.value(i), (lo.value(i), hi.value(i)))).collect();
        let show = |(l, h): (f64, f64)| format!("{l} {h}");
        assert_eq!(show(got["a"]), "1 NaN");
        assert_eq!(show(got["b"]), "-1 NaN");
        assert_eq!(show(got["c"]), "2 5");
        assert_eq!(show(got["d"]), "NaN NaN");
    }
}
