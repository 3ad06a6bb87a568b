use super::*;
use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Int64Array, StringArray};

fn side(k1: Vec<Option<i64>>, k2: Vec<Option<&str>>, v: Vec<i64>, vname: &str) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("k1", DataType::Int64, true), Field::new("k2", DataType::Utf8, true), Field::new(vname, DataType::Int64, false)]));
    RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(k1)), Arc::new(StringArray::from(k2)), Arc::new(Int64Array::from(v))]).unwrap()
}

fn spec(how: How) -> JoinSpec {
    let key = |c: &str| OutCol::Key { left: c.into(), right: c.into(), name: c.into() };
    let mut columns = vec![key("k1"), key("k2"), OutCol::Left { column: "a".into(), name: "a".into() }];
    if !matches!(how, How::Semi | How::Anti) {
        columns.push(OutCol::Right { column: "b".into(), name: "b".into() });
    }
    JoinSpec { left_on: vec!["k1".into(), "k2".into()], right_on: vec!["k1".into(), "k2".into()], how, columns }
}

type Row = (Option<i64>, Option<String>, Option<i64>, Option<i64>);

fn rows(b: &RecordBatch) -> Vec<Row> {
    let k1 = b.column(0).as_primitive::<Int64Type>();
    let k2 = b.column(1).as_string::<i32>();
    let a = b.column(2).as_primitive::<Int64Type>();
    let bv = (b.num_columns() > 3).then(|| b.column(3).as_primitive::<Int64Type>().clone());
    let mut out: Vec<Row> = (0..b.num_rows())
        .map(|i| (k1.is_valid(i).then(|| k1.value(i)), k2.is_valid(i).then(|| k2.value(i).to_string()), a.is_valid(i).then(|| a.value(i)), bv.as_ref().and_then(|c| c.is_valid(i).then(|| c.value(i)))))
        .collect();
    out.sort();
    out
}

/// Every kind the slow, obvious way: nested loops, a null key matching nothing.
fn reference(how: How, l: &RecordBatch, r: &RecordBatch) -> Vec<Row> {
    let (lr, rr) = (rows_of(l), rows_of(r));
    let eq = |x: &Row, y: &Row| x.0.is_some() && x.1.is_some() && x.0 == y.0 && x.1 == y.1;
    let mut out = Vec::new();
    let mut matched = vec![false; rr.len()];
    for x in &lr {
        let ms: Vec<usize> = (0..rr.len()).filter(|&j| eq(x, &rr[j])).collect();
        match how {
            How::Semi if !ms.is_empty() => out.push((x.0, x.1.clone(), x.2, None)),
            How::Anti if ms.is_empty() => out.push((x.0, x.1.clone(), x.2, None)),
            How::Semi | How::Anti => {}
            _ => {
                for &j in &ms {
                    matched[j] = true;
                    out.push((x.0, x.1.clone(), x.2, rr[j].2));
                }
                if ms.is_empty() && matches!(how, How::Left | How::Outer) {
                    out.push((x.0, x.1.clone(), x.2, None));
                }
            }
        }
    }
    if matches!(how, How::Right | How::Outer) {
        for (j, y) in rr.iter().enumerate() {
            if !matched[j] {
                out.push((y.0, y.1.clone(), None, y.2));
            }
        }
    }
    out.sort();
    out
}

fn rows_of(b: &RecordBatch) -> Vec<Row> {
    let k1 = b.column(0).as_primitive::<Int64Type>();
    let k2 = b.column(1).as_string::<i32>();
    let v = b.column(2).as_primitive::<Int64Type>();
    (0..b.num_rows()).map(|i| (k1.is_valid(i).then(|| k1.value(i)), k2.is_valid(i).then(|| k2.value(i).to_string()), Some(v.value(i)), None)).collect()
}

#[test]
fn every_kind_matches_nested_loops_with_nulls_duplicates_and_two_keys() {
    let l = side(vec![Some(1), Some(1), Some(2), None, Some(3), Some(1), Some(4)], vec![Some("x"), Some("x"), Some("y"), Some("x"), None, Some("z"), Some("w")], vec![10, 11, 12, 13, 14, 15, 16], "a");
    let r = side(vec![Some(1), Some(1), Some(2), None, Some(3), Some(5), Some(1)], vec![Some("x"), Some("x"), Some("y"), Some("x"), None, Some("q"), Some("y")], vec![20, 21, 22, 23, 24, 25, 26], "b");
    for how in [How::Inner, How::Left, How::Right, How::Outer, How::Semi, How::Anti] {
        let out = join(&spec(how), &l, &r).unwrap();
        assert_eq!(rows(&out), reference(how, &l, &r), "{how:?}");
    }
    // Duplicates on both sides multiply: (1, "x") is 2 × 2 rows.
    let inner = join(&spec(How::Inner), &l, &r).unwrap();
    assert_eq!(inner.num_rows(), 5);
    let outer = join(&spec(How::Outer), &l, &r).unwrap();
    // Unmatched right rows keep their keys (coalesced), nulls included.
    assert!(rows(&outer).contains(&(Some(5), Some("q".into()), None, Some(25))));
    assert!(rows(&outer).contains(&(None, Some("x".into()), None, Some(23))));
    assert!(outer.schema().field(2).is_nullable() && outer.schema().field(3).is_nullable());
}

#[test]
fn empty_sides_and_a_type_mismatch() {
    let l = side(vec![Some(1)], vec![Some("x")], vec![1], "a");
    let empty = side(vec![], vec![], vec![], "b");
    assert_eq!(join(&spec(How::Inner), &l, &empty).unwrap().num_rows(), 0);
    assert_eq!(rows(&join(&spec(How::Left), &l, &empty).unwrap()), vec![(Some(1), Some("x".into()), Some(1), None)]);
    assert_eq!(join(&spec(How::Anti), &l, &empty).unwrap().num_rows(), 1);
    let schema = Arc::new(Schema::new(vec![Field::new("k1", DataType::Utf8, true), Field::new("k2", DataType::Utf8, true), Field::new("b", DataType::Int64, false)]));
    let r = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(vec!["1"])), Arc::new(StringArray::from(vec!["x"])), Arc::new(Int64Array::from(vec![1]))]).unwrap();
    let e = join(&spec(How::Inner), &l, &r).unwrap_err().to_string();
    assert!(e.contains("\"k1\" (Int64)") && e.contains("(Utf8)"), "{e}");
}

#[test]
fn a_large_join_agrees_with_a_map() {
    let n = 5000i64;
    let l = side((0..n).map(|i| Some(i % 97)).collect(), (0..n).map(|i| Some(if i % 2 == 0 { "e" } else { "o" })).collect(), (0..n).collect(), "a");
    let r = side((0..200).map(|i| Some(i % 50)).collect(), (0..200).map(|i| Some(if i % 4 < 2 { "e" } else { "o" })).collect(), (0..200).collect(), "b");
    let mut counts: BTreeMap<(i64, bool), usize> = BTreeMap::new();
    for i in 0..200 {
        *counts.entry((i % 50, i % 4 < 2)).or_default() += 1;
    }
    let expected: usize = (0..n).map(|i| counts.get(&(i % 97, i % 2 == 0)).copied().unwrap_or(0)).sum();
    assert_eq!(join(&spec(How::Inner), &l, &r).unwrap().num_rows(), expected);
}

/// The IPC output, made a piece at a time, holds the same rows as the one-batch join, for every kind, with the right side in several batches.
#[test]
fn join_ipc_matches_join_for_every_kind() {
    let l = side((0..300_000).map(|i| Some(i % 1000)).collect(), (0..300_000).map(|i| Some(if i % 7 == 0 { "x" } else { "y" })).collect(), (0..300_000).collect(), "a");
    let r = side((0..1500).map(|i| if i % 50 == 0 { None } else { Some(i % 1200) }).collect(), (0..1500).map(|_| Some("y")).collect(), (0..1500).collect(), "b");
    let (rs, rb) = (r.schema(), vec![r.slice(0, 700), r.slice(700, 800)]);
    for how in [How::Inner, How::Left, How::Right, How::Outer, How::Semi, How::Anti] {
        let s = spec(how);
        let whole = join(&s, &l, &r).unwrap();
        let (schema, batches) = super::super::ipc::decode(&join_ipc(&s, (&l.schema(), &[l.clone()]), (&rs, &rb)).unwrap()).unwrap();
        assert_eq!(schema, whole.schema(), "{how:?}");
        assert!(batches.len() > 1 || whole.num_rows() < PROBE_ROWS, "{how:?}: pieces");
        let all = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
        assert_eq!(rows(&all), rows(&whole), "{how:?}");
    }
}
