use super::*;
use crate::frame::ipc;
use crate::frame::join::{join, OutCol};
use arrow_array::{Int64Array, StringArray};
use arrow_schema::{DataType, Field, Schema};

fn side(n: usize, seed: i64, v: &str) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true), Field::new("s", DataType::Utf8, true), Field::new(v, DataType::Int64, false)]));
    let k: Int64Array = (0..n as i64).map(|i| ((i * 7 + seed) % 11 != 0).then_some((i * 13 + seed) % 17)).collect();
    let s: StringArray = (0..n as i64).map(|i| Some(format!("s{}", (i + seed) % 3))).collect();
    RecordBatch::try_new(schema, vec![Arc::new(k), Arc::new(s), Arc::new(Int64Array::from_iter_values(0..n as i64))]).unwrap()
}

fn spec(how: How) -> JoinSpec {
    let mut columns = vec![OutCol::Key { left: "k".into(), right: "k".into(), name: "k".into() }, OutCol::Left { column: "s".into(), name: "s".into() }, OutCol::Left { column: "a".into(), name: "a".into() }];
    if !matches!(how, How::Semi | How::Anti) {
        columns.push(OutCol::Right { column: "s".into(), name: "s_right".into() });
        columns.push(OutCol::Right { column: "b".into(), name: "b".into() });
    }
    JoinSpec { left_on: vec!["k".into(), "s".into()], right_on: vec!["k".into(), "s".into()], how, columns }
}


/// Rows as sorted debug strings: the same multiset whatever the order.
fn sorted(b: &RecordBatch) -> Vec<String> {
    let mut out: Vec<String> = (0..b.num_rows()).map(|i| b.columns().iter().map(|c| format!("{:?}", c.slice(i, 1))).collect::<Vec<_>>().join("|")).collect();
    out.sort();
    out
}

fn run(how: How, small: Small, big: &[RecordBatch], whole: &RecordBatch) -> RecordBatch {
    let plan = serde_json::json!({
        "partition": { "source": { "kind": "inputs" }, "schema": types::to_specs(&big[0].schema()).unwrap().iter().map(|f| serde_json::json!({ "name": f.name, "type": f.ty })).collect::<Vec<_>>(), "steps": [] },
        "partitionInputs": big.len(),
        "join": spec_json(how),
        "small": if small == Small::Left { "left" } else { "right" },
        "smallSchema": [],
    });
    let mut bytes: Vec<Vec<u8>> = big.iter().map(|b| ipc::encode(&b.schema(), std::slice::from_ref(b)).unwrap()).collect();
    bytes.push(ipc::encode(&whole.schema(), std::slice::from_ref(whole)).unwrap());
    let refs: Vec<&[u8]> = bytes.iter().map(|b| b.as_slice()).collect();
    let (schema, out) = ipc::decode(&run_broadcast(&plan.to_string(), &refs).unwrap()).unwrap();
    arrow_select::concat::concat_batches(&schema, &out).unwrap()
}

fn spec_json(how: How) -> serde_json::Value {
    let s = spec(how);
    let cols: Vec<serde_json::Value> = s
        .columns
        .iter()
        .map(|c| match c {
            OutCol::Key { left, right, name } => serde_json::json!({ "from": "key", "left": left, "right": right, "name": name }),
            OutCol::Left { column, name } => serde_json::json!({ "from": "left", "column": column, "name": name }),
            OutCol::Right { column, name } => serde_json::json!({ "from": "right", "column": column, "name": name }),
        })
        .collect();
    let how = format!("{how:?}").to_lowercase();
    serde_json::json!({ "leftOn": s.left_on, "rightOn": s.right_on, "how": how, "columns": cols })
}

#[test]
fn every_kind_either_side_small_matches_the_one_batch_join_and_reuses_the_small_side() {
    let (l1, l2, r) = (side(70_000, 1, "a"), side(900, 5, "a"), side(300, 2, "b"));
    let big = [l1.clone(), l2.clone()];
    let left = arrow_select::concat::concat_batches(&l1.schema(), &big).unwrap();
    for how in [How::Inner, How::Left, How::Semi, How::Anti] {
        let want = sorted(&join(&spec(how), &left, &r).unwrap());
        // Twice: the second run takes the cached table.
        for _ in 0..2 {
            assert_eq!(sorted(&run(how, Small::Right, &big, &r)), want, "{how:?}, right small");
        }
    }
    let (small, bigs) = (side(300, 3, "a"), [side(70_000, 4, "b"), side(10, 6, "b")]);
    let right = arrow_select::concat::concat_batches(&bigs[0].schema(), &bigs).unwrap();
    for how in [How::Inner, How::Right] {
        let want = sorted(&join(&spec(how), &small, &right).unwrap());
        assert!(!want.is_empty());
        assert_eq!(sorted(&run(how, Small::Left, &bigs, &small)), want, "{how:?}, left small");
    }
}

#[test]
fn a_side_that_cannot_be_broadcast_is_a_coded_error() {
    let (l, r) = (side(10, 1, "a"), side(10, 2, "b"));
    let plan = serde_json::json!({ "partition": { "source": { "kind": "inputs" }, "schema": [], "steps": [] }, "partitionInputs": 1, "join": spec_json(How::Outer), "small": "right", "smallSchema": [] });
    let bytes = [ipc::encode(&l.schema(), &[l.clone()]).unwrap(), ipc::encode(&r.schema(), &[r]).unwrap()];
    let e = run_broadcast(&plan.to_string(), &[&bytes[0], &bytes[1]]).unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_FRAME");
    assert!(e.to_string().contains("cannot broadcast its Right side"), "{e}");
}
