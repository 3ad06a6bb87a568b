use super::*;
use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Int64Array;
use arrow_schema::{DataType, Field, Schema};

use crate::frame::partition::hash_outputs;
use crate::frame::shuffle::run_collect;

fn batch(k: Vec<i64>, x: Vec<i64>, xname: &str) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true), Field::new(xname, DataType::Int64, true)]));
    RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(k)), Arc::new(Int64Array::from(x))]).unwrap()
}

fn ints(b: &RecordBatch, c: usize) -> Vec<i64> {
    b.column(c).as_primitive::<Int64Type>().values().to_vec()
}

fn keys() -> Vec<String> {
    vec!["k".to_string()]
}

#[test]
fn buckets_split_an_output_by_bits_disjoint_from_those_that_chose_it() {
    for n in [4u64, 3, 1] {
        let all = batch((0..20_000).collect(), vec![0; 20_000], "x");
        // The rows of output 0 of n only, as one collect receives them.
        let out = hash_outputs(&[Arc::clone(all.column(0))], n).unwrap();
        let mine: Vec<i64> = (0..20_000).filter(|&i| out[i as usize] == 0).collect();
        let b = batch(mine.clone(), vec![0; mine.len()], "x");
        let of = buckets(&b, &keys(), 3, 0).unwrap();
        let mut per = vec![Vec::new(); 8];
        for (i, &bk) in of.iter().enumerate() {
            per[bk as usize].push(mine[i]);
        }
        // Every bucket holds a fair share: had the bits overlapped the output's, some would be empty.
        for (bk, rows) in per.iter().enumerate() {
            assert!(rows.len() > mine.len() / 16, "n {n}: bucket {bk} has {} of {} rows", rows.len(), mine.len());
            let back = hash_outputs(&[Arc::new(Int64Array::from(rows.clone())) as _], n).unwrap();
            assert!(back.iter().all(|&o| o == 0), "a row of bucket {bk} left output 0 of {n}");
        }
        // Every row in exactly one bucket.
        let mut union: Vec<i64> = per.concat();
        union.sort();
        assert_eq!(union, mine);
        // A bucket's rows split again by the next bits, into every sub-bucket.
        let b0 = batch(per[0].clone(), vec![0; per[0].len()], "x");
        let subs = buckets(&b0, &keys(), 3, 1).unwrap();
        assert_eq!((0..8).filter(|s| subs.contains(s)).count(), 8);
    }
    assert_eq!(bucket_of(u64::MAX, 2, 0), 3);
    assert_eq!(bucket_of(1 << 61, 2, 1), 2);
    assert_eq!(bucket_of(0xF, 4, 15), 15);
}

fn agg_plan(dir: &Path, budget: u64) -> serde_json::Value {
    serde_json::json!({
        "then": { "kind": "agg", "agg": { "keys": ["k"], "aggs": [{ "name": "n", "func": "count" }, { "name": "s", "func": "sum", "column": "x" }, { "name": "f", "func": "first", "column": "x" }] } },
        "schemas": [[{ "name": "k", "type": "int64" }, { "name": "x", "type": "int64" }]],
        "sides": [0],
        "grace": { "dir": dir, "bits": 2, "budget": budget },
    })
}

fn route(plan: &serde_json::Value, side: usize, shards: &[Vec<u8>]) {
    let route = serde_json::json!({ "grace": plan["grace"], "then": plan["then"], "side": side });
    run_route(&route.to_string(), &shards.iter().map(Vec::as_slice).collect::<Vec<_>>()).unwrap();
}

/// Five shards of 2 000 rows; a groupBy's (`xname` "x") tagged as rows, as a split whose keys barely repeat sends them.
fn shards(key: impl Fn(i64) -> i64, xname: &str) -> Vec<Vec<u8>> {
    (0..5)
        .map(|s| {
            let mut b = batch((0..2_000).map(|i| key(s * 2_000 + i)).collect(), (0..2_000).map(|i| s * 2_000 + i).collect(), xname);
            if xname == "x" {
                let tagged = b.schema().as_ref().clone().with_metadata([(agg_shuffle::ROWS_TAG.to_string(), "rows".to_string())]);
                b = b.with_schema(Arc::new(tagged)).unwrap();
            }
            ipc::encode(&b.schema(), &[b]).unwrap()
        })
        .collect()
}

/// (count, sum, first) per key, the obvious way.
fn want(key: impl Fn(i64) -> i64) -> BTreeMap<i64, (i64, i64, i64)> {
    let mut m = BTreeMap::new();
    for i in 0..10_000 {
        let e = m.entry(key(i)).or_insert((0, 0, i));
        e.0 += 1;
        e.1 += i;
    }
    m
}

fn got(out: &[u8]) -> BTreeMap<i64, (i64, i64, i64)> {
    let (_, batches) = ipc::decode(out).unwrap();
    let mut m = BTreeMap::new();
    for b in batches {
        let (k, n, s, f) = (ints(&b, 0), ints(&b, 1), ints(&b, 2), ints(&b, 3));
        for i in 0..k.len() {
            assert!(m.insert(k[i], (n[i], s[i], f[i])).is_none(), "key {} twice", k[i]);
        }
    }
    m
}

#[test]
fn a_groupby_through_buckets_is_exact_with_skew_and_leaves_no_file() {
    // Spread keys, a budget small enough that buckets are routed again, and one key holding most rows.
    for key in [(|i: i64| i * 7 % 3_001) as fn(i64) -> i64, |i| if i % 10 == 0 { i } else { 42 }] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("grace");
        fs::create_dir(&dir).unwrap();
        let plan = agg_plan(&dir, 4_000);
        route(&plan, 0, &shards(key, "x"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let f = fs::read_dir(&dir).unwrap().next().unwrap().unwrap();
            assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        }
        let out = run_collect(&plan.to_string(), &[]).unwrap();
        assert_eq!(got(&out), want(key));
        assert!(!dir.exists(), "the grace directory is removed");
    }
}

#[test]
fn an_empty_collect_has_the_declared_columns_and_a_bad_bucket_is_an_error_that_removes_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("grace");
    fs::create_dir(&dir).unwrap();
    let plan = agg_plan(&dir, 1 << 20);
    let (schema, batches) = ipc::decode(&run_collect(&plan.to_string(), &[]).unwrap()).unwrap();
    assert_eq!((schema.fields().len(), batches.iter().map(|b| b.num_rows()).sum::<usize>()), (4, 0));
    fs::create_dir(&dir).unwrap();
    route(&plan, 0, &shards(|i| i, "x"));
    let mut f = OpenOptions::new().append(true).open(dir.join("s0-b2")).unwrap();
    f.write_all(&[9, 0, 0, 0, 0, 0, 0, 0, 1, 2]).unwrap();
    let e = run_collect(&plan.to_string(), &[]).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_FRAME");
    assert!(e.to_string().contains("s0-b2") && e.to_string().contains("cut short"), "{e}");
    assert!(!dir.exists(), "the grace directory is removed on error too");
}

#[test]
fn a_join_through_buckets_pairs_every_key_as_the_plain_join() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("grace");
    fs::create_dir(&dir).unwrap();
    let then = serde_json::json!({ "kind": "join", "join": { "leftOn": ["k"], "rightOn": ["k"], "how": "outer", "columns": [
        { "from": "key", "left": "k", "right": "k", "name": "k" }, { "from": "left", "column": "x", "name": "x" }, { "from": "right", "column": "y", "name": "y" }] } });
    let schemas = serde_json::json!([[{ "name": "k", "type": "int64" }, { "name": "x", "type": "int64" }], [{ "name": "k", "type": "int64" }, { "name": "y", "type": "int64" }]]);
    let (left, right) = (shards(|i| i % 4_000, "x"), shards(|i| i % 5_000 + 2_000, "y"));
    let plain = serde_json::json!({ "then": then, "schemas": schemas, "sides": [5, 5] });
    let all: Vec<&[u8]> = left.iter().chain(&right).map(Vec::as_slice).collect();
    let plan = serde_json::json!({ "then": then, "schemas": schemas, "sides": [0, 0], "grace": { "dir": dir, "bits": 2, "budget": 20_000 } });
    route(&plan, 0, &left);
    route(&plan, 1, &right);
    let rows = |out: &[u8]| {
        let (_, batches) = ipc::decode(out).unwrap();
        let mut v: Vec<(Option<i64>, Option<i64>, Option<i64>)> = batches
            .iter()
            .flat_map(|b| {
                let c = |j: usize| b.column(j).as_primitive::<Int64Type>().iter().collect::<Vec<_>>();
                let (k, x, y) = (c(0), c(1), c(2));
                (0..b.num_rows()).map(move |i| (k[i], x[i], y[i])).collect::<Vec<_>>()
            })
            .collect();
        v.sort();
        v
    };
    let want = rows(&run_collect(&plain.to_string(), &all).unwrap());
    assert!(want.len() > 10_000);
    assert_eq!(rows(&run_collect(&plan.to_string(), &[]).unwrap()), want);
    assert!(!dir.exists());
}
