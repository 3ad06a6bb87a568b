//! `max_spill` (Dask's `distributed.worker.memory.max-spill`) and the target
//! turned off (Dask's `target: False`): what reaches the disk, what stays in
//! memory, and that every chunk still comes back exactly.


use std::collections::HashMap;

use crate::it::common::random_bytes;
use crate::it::common::spill::{assert_consistent, config, files};
use spillway_core::codec::{Codec, HEADER_LEN};
use spillway_core::spill::{SpillBuffer, SpillConfig};
use spillway_core::Error;

const CHUNK: usize = 10_000;
/// Random bytes are stored raw: a frame is the chunk plus its header.
const FRAME: u64 = (CHUNK + HEADER_LEN) as u64;

fn capped(dir: &std::path::Path, memory_limit: u64, target: Option<f64>, max_spill: u64) -> SpillBuffer {
    SpillBuffer::new(SpillConfig { target, max_spill: Some(max_spill), ..config(dir, memory_limit, 1.0, Codec::Lz4) }).unwrap()
}

fn disk_total(dir: &std::path::Path) -> u64 {
    files(dir).iter().map(|f| f.1).sum()
}

#[test]
fn the_disk_never_passes_the_cap_and_the_rest_stays_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    // Room on disk for 3 frames and a bit, none for a 4th.
    let buf = capped(tmp.path(), 50_000, Some(0.5), 3 * FRAME + 100);
    let mut model = HashMap::new();
    for i in 0..12u64 {
        let v = random_bytes(i, CHUNK);
        buf.set(&format!("k{i}"), v.clone()).unwrap();
        model.insert(format!("k{i}"), v);
        assert!(disk_total(tmp.path()) <= 3 * FRAME + 100, "disk past the cap after k{i}");
    }
    let m = assert_consistent(&buf, &model, true);
    assert_eq!((m.disk_count, m.spilled_disk), (3, 3 * FRAME));
    assert_eq!(m.memory_bytes, 9 * CHUNK as u64, "the rest is kept in memory, above the target");
    assert!(m.spill_cap_reached);
    assert_eq!((m.write_failures, m.consecutive_write_failures, m.spill_backoff_seconds), (0, 0, 0.0), "a cap is no write failure");
    // Once at the cap, eviction stops: no chunk is compressed again only to be refused.
    let refusals = m.spill_cap_refusals;
    assert_eq!(refusals, 1, "{m:?}");
    for _ in 0..5 {
        assert_eq!(buf.evict_until(0), 0);
    }
    buf.set("more", random_bytes(99, CHUNK)).unwrap();
    model.insert("more".into(), random_bytes(99, CHUNK));
    assert_eq!(buf.metrics().spill_cap_refusals, refusals);
    for (k, v) in &model {
        assert_eq!(buf.get(k).unwrap().unwrap().as_slice(), &v[..], "{k}");
    }
}

#[test]
fn eviction_resumes_once_disk_bytes_fall() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = capped(tmp.path(), 50_000, Some(0.5), 2 * FRAME);
    let mut model = HashMap::new();
    for i in 0..6u64 {
        let v = random_bytes(i, CHUNK);
        buf.set(&format!("k{i}"), v.clone()).unwrap();
        model.insert(format!("k{i}"), v);
    }
    let m = buf.metrics();
    assert!(m.spill_cap_reached);
    assert_eq!(m.disk_count, 2);
    // k0 and k1 went first (least recently used); deleting one frees room.
    assert!(buf.delete("k0").unwrap());
    model.remove("k0");
    assert!(!buf.metrics().spill_cap_reached, "disk bytes fell");
    assert_eq!(buf.evict_until(0), 1, "one more frame fits");
    let m = assert_consistent(&buf, &model, true);
    assert!(m.spill_cap_reached);
    assert_eq!(m.spilled_disk, 2 * FRAME);
    // Reading a spilled chunk back into memory frees its file too.
    let spilled: Vec<String> = model.keys().filter(|k| !is_in_memory(&buf, k)).cloned().collect();
    assert_eq!(spilled.len(), 2);
    buf.set_target(1.0).unwrap();
    assert_eq!(buf.get(&spilled[0]).unwrap().unwrap().as_slice(), &model[&spilled[0]][..]);
    assert!(!buf.metrics().spill_cap_reached);
    assert_consistent(&buf, &model, true);
}

/// Whether `key` is served without reading a file.
fn is_in_memory(buf: &SpillBuffer, key: &str) -> bool {
    let before = buf.metrics().unspill_count;
    buf.peek(key).unwrap();
    buf.metrics().unspill_count == before
}

#[test]
fn a_chunk_larger_than_the_whole_cap_stays_in_memory_without_blocking_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = capped(tmp.path(), 100_000, Some(0.3), 3 * FRAME);
    let huge = random_bytes(7, 5 * CHUNK);
    buf.set("huge", huge.clone()).unwrap();
    let m = buf.metrics();
    assert_eq!((m.disk_count, m.spill_cap_refusals), (0, 1));
    assert!(!m.spill_cap_reached, "smaller chunks can still land");
    let mut model = HashMap::from([("huge".to_string(), huge)]);
    for i in 0..3u64 {
        let v = random_bytes(i, CHUNK);
        buf.set(&format!("k{i}"), v.clone()).unwrap();
        model.insert(format!("k{i}"), v);
    }
    let m = assert_consistent(&buf, &model, true);
    assert_eq!(m.disk_count, 3, "the small chunks spilled past the huge one: {m:?}");
    assert_eq!(m.spill_cap_refusals, 1, "the huge one is not compressed again at each eviction");
    for (k, v) in &model {
        assert_eq!(buf.get(k).unwrap().unwrap().as_slice(), &v[..], "{k}");
    }
}

#[test]
fn concurrent_writers_share_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let cap = 5 * FRAME;
    let buf = std::sync::Arc::new(capped(tmp.path(), 40_000, Some(0.25), cap));
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let buf = buf.clone();
            s.spawn(move || {
                for i in 0..10u64 {
                    buf.set(&format!("t{t}-{i}"), random_bytes(t * 100 + i, CHUNK)).unwrap();
                }
            });
        }
    });
    let m = buf.metrics();
    assert!(m.spilled_disk <= cap && disk_total(tmp.path()) <= cap, "{m:?}");
    assert_eq!(m.memory_count + m.disk_count, 40);
    for t in 0..4u64 {
        for i in 0..10u64 {
            assert_eq!(buf.get(&format!("t{t}-{i}")).unwrap().unwrap(), std::sync::Arc::new(random_bytes(t * 100 + i, CHUNK)));
        }
    }
}

#[test]
fn with_the_target_off_only_evict_until_spills() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = SpillBuffer::new(SpillConfig { target: None, ..config(tmp.path(), 30_000, 0.5, Codec::Lz4) }).unwrap();
    // Well past the memory limit itself: managed memory alone never spills.
    for i in 0..8u64 {
        buf.set(&format!("k{i}"), random_bytes(i, CHUNK)).unwrap();
    }
    let m = buf.metrics();
    assert_eq!((m.disk_count, m.memory_bytes, m.target_bytes), (0, 8 * CHUNK as u64, u64::MAX));
    assert!(files(tmp.path()).is_empty());
    // The caller (the worker, on process memory past `spill`) still can.
    assert_eq!(buf.evict_until(3 * CHUNK as u64), 5);
    // A chunk read back comes back into memory: nothing is too large for an off target.
    assert_eq!(buf.get("k0").unwrap().unwrap().as_slice(), &random_bytes(0, CHUNK)[..]);
    assert_eq!(buf.metrics().disk_count, 4);
    buf.set_target(0.5).unwrap();
    assert!(buf.metrics().memory_bytes <= 15_000);
    buf.set_target(None).unwrap();
    assert_eq!(buf.metrics().target_bytes, u64::MAX);
}

#[test]
fn a_zero_cap_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let r = SpillBuffer::new(SpillConfig { max_spill: Some(0), ..config(tmp.path(), 1_000, 0.5, Codec::Lz4) });
    assert!(matches!(r, Err(Error::InvalidArgument { field: "maxSpill", .. })));
}
