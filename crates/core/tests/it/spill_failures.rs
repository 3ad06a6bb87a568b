//! The SpillBuffer when things go wrong: failed writes keep chunks in
//! memory, damaged files are errors rather than wrong data, close removes
//! everything, and concurrent users never see wrong bytes.


use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::it::common::{random_bytes, small_ints};
use crate::it::common::spill::{assert_consistent, buffer, files};
use spillway_core::Error;

/// Makes writes into `dir` fail for a root process too (chmod does not stop
/// root): the directory is moved aside and a regular file put in its place.
struct BrokenDir {
    dir: PathBuf,
    aside: PathBuf,
}

impl BrokenDir {
    fn break_(dir: &Path) -> BrokenDir {
        let aside = dir.with_extension("aside");
        fs::rename(dir, &aside).unwrap();
        fs::write(dir, b"not a directory").unwrap();
        BrokenDir { dir: dir.to_path_buf(), aside }
    }

    fn repair(self) {
        fs::remove_file(&self.dir).unwrap();
        fs::rename(&self.aside, &self.dir).unwrap();
    }
}

#[test]
fn a_failed_write_keeps_the_chunk_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spill");
    let buf = buffer(&dir, 100_000, 0.5);
    let mut model = HashMap::new();
    let put = |k: &str, d: Vec<u8>, model: &mut HashMap<String, Vec<u8>>| {
        buf.set(k, d.clone()).unwrap();
        model.insert(k.to_string(), d);
    };
    put("a", random_bytes(1, 30_000), &mut model);
    put("b", random_bytes(2, 30_000), &mut model); // a spills
    assert_eq!(buf.metrics().disk_count, 1);

    let broken = BrokenDir::break_(&dir);
    put("c", random_bytes(3, 30_000), &mut model); // b cannot spill
    let m = buf.metrics();
    assert!(m.write_failures >= 1, "{m:?}");
    let err = m.last_write_error.clone().expect("the failure is surfaced");
    assert!(err.contains("write spill file"), "{err}");
    assert_eq!(m.memory_bytes, 60_000, "b stayed in memory");
    buf.retry_spill_now();
    put("big", small_ints(4, 10_000), &mut model); // straight to disk, fails
    let m = buf.metrics();
    assert!(m.write_failures >= 2);
    assert_eq!(m.memory_bytes, 60_000 + 80_000, "the big chunk is held in memory instead");
    assert_eq!(m.managed_bytes, 30_000 * 3 + 80_000);
    for k in ["b", "c", "big"] {
        assert_eq!(buf.get(k).unwrap().as_deref(), model.get(k), "{k} after failed writes");
    }

    broken.repair();
    // The next spill succeeds and everything is still there.
    buf.retry_spill_now();
    buf.set_target(0.5).unwrap();
    let m = assert_consistent(&buf, &model, false);
    assert!(m.memory_bytes <= 50_000);
    for (k, v) in &model {
        assert_eq!(buf.get(k).unwrap().unwrap().as_slice(), &v[..], "{k} after repair");
    }
    assert_consistent(&buf, &model, false);
}

#[test]
fn after_a_failed_write_writes_back_off_until_one_lands() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spill");
    let buf = buffer(&dir, 100_000, 0.5);
    let broken = BrokenDir::break_(&dir);
    let mut model = HashMap::new();
    for i in 0..6u64 {
        let d = random_bytes(i, 20_000);
        buf.set(&i.to_string(), d.clone()).unwrap();
        model.insert(i.to_string(), d);
    }
    // One write was tried; the rest of the sets (and evictions) wait instead of failing again.
    assert_eq!(buf.evict_until(0), 0);
    let m = buf.metrics();
    assert_eq!((m.write_failures, m.consecutive_write_failures, m.disk_count), (1, 1, 0), "{m:?}");
    assert!(m.spill_backoff_seconds > 0.0 && m.spill_backoff_seconds <= 0.1, "{m:?}");
    assert!(!m.last_write_no_space, "a broken directory is not a full disk");

    // An early retry that fails again waits twice as long.
    buf.retry_spill_now();
    assert_eq!(buf.evict_until(0), 0);
    let m = buf.metrics();
    assert_eq!((m.write_failures, m.consecutive_write_failures), (2, 2));
    assert!(m.spill_backoff_seconds > 0.1 && m.spill_backoff_seconds <= 0.2, "{m:?}");

    // The wait runs out on its own: the next eviction writes again.
    std::thread::sleep(std::time::Duration::from_millis(250));
    broken.repair();
    assert!(buf.evict_until(0) > 0);
    let m = buf.metrics();
    assert_eq!((m.write_failures, m.consecutive_write_failures, m.spill_backoff_seconds), (2, 0, 0.0));
    assert_consistent(&buf, &model, false);
}

#[test]
fn a_vanished_directory_fails_writes_without_losing_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spill");
    let buf = buffer(&dir, 100_000, 0.5);
    fs::remove_dir(&dir).unwrap();
    for i in 0..4 {
        buf.set(&i.to_string(), random_bytes(i, 20_000)).unwrap();
    }
    let m = buf.metrics();
    assert!(m.write_failures >= 1 && m.disk_count == 0, "{m:?}");
    for i in 0..4 {
        assert_eq!(buf.get(&i.to_string()).unwrap().unwrap().as_slice(), &random_bytes(i, 20_000)[..]);
    }
}

#[test]
fn a_damaged_spill_file_is_an_error_not_wrong_data() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = buffer(tmp.path(), 1_000, 0.5);
    buf.set("k", small_ints(5, 1_000)).unwrap();
    let name = &files(tmp.path())[0].0;
    let path = tmp.path().join(name);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&path, &bytes).unwrap();
    assert!(matches!(buf.get("k"), Err(Error::CorruptFrame { .. })));
    bytes.truncate(40);
    fs::write(&path, &bytes).unwrap();
    assert!(matches!(buf.get("k"), Err(Error::CorruptFrame { .. })));
}

#[test]
fn delete_and_overwrite_free_memory_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = buffer(tmp.path(), 100_000, 0.5);
    let mut model = HashMap::new();
    for i in 0..6 {
        let d = random_bytes(i, 20_000);
        buf.set(&i.to_string(), d.clone()).unwrap();
        model.insert(i.to_string(), d);
    }
    assert!(buf.metrics().disk_count >= 3);
    // Overwrite spilled and in-memory chunks with data of other sizes.
    for i in 0..6 {
        let d = small_ints(i + 10, 1_000 + i as usize * 500);
        buf.set(&i.to_string(), d.clone()).unwrap();
        model.insert(i.to_string(), d);
        assert_consistent(&buf, &model, false);
    }
    for i in (0..6).step_by(2) {
        assert!(buf.delete(&i.to_string()).unwrap());
        assert!(!buf.delete(&i.to_string()).unwrap());
        model.remove(&i.to_string());
        assert_consistent(&buf, &model, false);
    }
    assert_eq!(buf.get("0").unwrap(), None);
    assert!(!buf.has("0"));
    for (k, v) in &model {
        assert_eq!(buf.get(k).unwrap().unwrap().as_slice(), &v[..]);
    }
}

#[test]
fn close_removes_every_file_and_refuses_further_use() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spill");
    let buf = buffer(&dir, 50_000, 0.5);
    for i in 0..8 {
        buf.set(&i.to_string(), random_bytes(i, 10_000)).unwrap();
    }
    assert!(!files(&dir).is_empty());
    buf.close();
    assert!(!dir.exists() || files(&dir).is_empty(), "{:?}", files(&dir));
    let m = buf.metrics();
    assert_eq!((m.managed_bytes, m.memory_bytes, m.spilled_disk, m.disk_count, m.memory_count), (0, 0, 0, 0, 0));
    assert!(matches!(buf.set("x", vec![1]), Err(Error::Closed)));
    assert!(matches!(buf.get("0"), Err(Error::Closed)));
    assert!(matches!(buf.delete("0"), Err(Error::Closed)));
    assert!(matches!(buf.set_target(0.5), Err(Error::Closed)));
    assert!(!buf.has("0"));
    buf.close();

    // Dropping without close cleans up too.
    let dir2 = tmp.path().join("dropped");
    {
        let b = buffer(&dir2, 50_000, 0.5);
        for i in 0..8 {
            b.set(&i.to_string(), random_bytes(i, 10_000)).unwrap();
        }
        assert!(!files(&dir2).is_empty());
    }
    assert!(!dir2.exists() || files(&dir2).is_empty());
    // A directory holding other files is left in place with those files.
    let dir3 = tmp.path().join("shared");
    fs::create_dir(&dir3).unwrap();
    fs::write(dir3.join("keep.txt"), b"mine").unwrap();
    let b = buffer(&dir3, 50_000, 0.5);
    for i in 0..8 {
        b.set(&i.to_string(), random_bytes(i, 10_000)).unwrap();
    }
    b.close();
    assert_eq!(files(&dir3).iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["keep.txt"]);
}

/// Self-describing chunk contents, so a reader can tell a valid chunk (any
/// version any writer wrote) from corrupted or mixed-up bytes.
fn tagged(writer: u8, key: u16, iter: u32) -> Vec<u8> {
    let seed = (writer as u64) << 48 | (key as u64) << 32 | iter as u64;
    let len = 1_000 + (seed.wrapping_mul(0x9E37_79B9) % 30_000) as usize;
    let mut v = vec![writer];
    v.extend_from_slice(&key.to_le_bytes());
    v.extend_from_slice(&iter.to_le_bytes());
    if iter % 3 == 0 {
        v.extend_from_slice(&small_ints(seed, len / 8));
    } else {
        v.extend_from_slice(&random_bytes(seed, len));
    }
    v
}

fn check_tagged(v: &[u8]) {
    let writer = v[0];
    let key = u16::from_le_bytes([v[1], v[2]]);
    let iter = u32::from_le_bytes(v[3..7].try_into().unwrap());
    assert_eq!(v, &tagged(writer, key, iter)[..], "chunk bytes do not match their tag");
}

#[test]
fn concurrent_writers_and_readers_never_see_wrong_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = Arc::new(buffer(&tmp.path().join("spill"), 200_000, 0.5));
    const THREADS: u8 = 4;
    let finals: Vec<HashMap<String, Vec<u8>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let buf = buf.clone();
                s.spawn(move || {
                    let mut mine: HashMap<String, Vec<u8>> = HashMap::new();
                    for iter in 0..150u32 {
                        let own = format!("t{t}-{}", iter % 7);
                        let shared = format!("shared-{}", iter % 3);
                        match iter % 5 {
                            0 | 1 => {
                                let d = tagged(t, (iter % 7) as u16, iter);
                                buf.set(&own, d.clone()).unwrap();
                                mine.insert(own.clone(), d);
                            }
                            2 => buf.set(&shared, tagged(t, 1000, iter)).unwrap(),
                            3 => {
                                if iter % 2 == 0 {
                                    assert_eq!(buf.delete(&own).unwrap(), mine.remove(&own).is_some());
                                }
                                if let Some(v) = buf.get(&shared).unwrap() {
                                    check_tagged(&v);
                                }
                            }
                            _ => {
                                let got = buf.get(&own).unwrap();
                                assert_eq!(got.as_deref(), mine.get(&own), "thread {t} key {own}");
                                if iter % 10 == 4 {
                                    buf.set_target(if iter % 20 == 4 { 0.2 } else { 0.6 }).unwrap();
                                }
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut model: HashMap<String, Vec<u8>> = finals.into_iter().flatten().collect();
    for i in 0..3 {
        let k = format!("shared-{i}");
        if let Some(v) = buf.get(&k).unwrap() {
            check_tagged(&v);
            model.insert(k, v.to_vec());
        }
    }
    buf.set_target(0.6).unwrap();
    let m = assert_consistent(&buf, &model, false);
    assert_eq!(m.write_failures, 0);
    assert!(m.spill_count > 0 && m.unspill_count > 0, "the run exercised both tiers: {m:?}");
    for (k, v) in &model {
        assert_eq!(buf.get(k).unwrap().unwrap().as_slice(), &v[..], "{k}");
    }
}

#[test]
fn a_key_being_overwritten_straight_to_disk_never_goes_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = Arc::new(buffer(&tmp.path().join("spill"), 200_000, 0.5));
    buf.set("k", random_bytes(0, 1_000)).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            // Larger than the target: each of these is written before it is stored.
            for i in 1..40 {
                buf.set("k", random_bytes(i, 400_000)).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Release);
        });
        let mut reads = 0;
        while !done.load(std::sync::atomic::Ordering::Acquire) {
            assert!(buf.has("k"), "has after {reads} reads");
            assert!(buf.get("k").unwrap().is_some(), "get after {reads} reads");
            reads += 1;
        }
    });
    assert_eq!(buf.get("k").unwrap().unwrap().as_slice(), random_bytes(39, 400_000).as_slice());
}
