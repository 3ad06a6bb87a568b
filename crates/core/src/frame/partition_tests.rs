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

/// Distinct values of `f` over `hashes`.
fn distinct(hashes: &[u64], f: impl Fn(u64) -> u64) -> usize {
    hashes.iter().map(|&h| f(h)).collect::<std::collections::HashSet<_>>().len()
}

#[test]
fn one_outputs_or_one_grace_buckets_rows_spread_over_the_table_slots_and_tags() {
    let k: ArrayRef = Arc::new(Int64Array::from((0..200_000).collect::<Vec<i64>>()));
    let rows = key_rows(&[DataType::Int64], &[k]).unwrap();
    let hashes: Vec<u64> = rows.iter().map(|r| row_hash(r.as_ref())).collect();
    // hashbrown's slot: the low bits (here of a table of 1024 slots); its tag: the top 7.
    let (slot, tag) = (|h: u64| h & 1023, |h: u64| h >> 57);
    for n in [8u64, 64] {
        // The rows one collect gets: all share their hash's low bits. Fed the raw hash, a table would use 1024 / n of its slots.
        let mine: Vec<u64> = hashes.iter().copied().filter(|&h| output_of(h, n) == 3).collect();
        assert!(distinct(&mine, slot) <= (1024 / n) as usize);
        assert!(distinct(&mine, |h| slot(table_hash(h))) > 512, "n {n}: {} slots", distinct(&mine, |h| slot(table_hash(h))));
        assert!(distinct(&mine, |h| tag(table_hash(h))) >= 120);
    }
    // A grace bucket of 2^7 (its top 7 bits): one tag for every row fed raw; remixed, all 128.
    let bucket: Vec<u64> = hashes.iter().copied().filter(|&h| crate::frame::grace::bucket_of(h, 7, 0) == 5).collect();
    assert_eq!(distinct(&bucket, tag), 1);
    assert!(distinct(&bucket, |h| tag(table_hash(h))) >= 120);
    assert!(distinct(&bucket, |h| slot(table_hash(h))) > 512);
    // A bijection: no two hashes of these keys become one.
    assert_eq!(distinct(&hashes, table_hash), hashes.len());
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
