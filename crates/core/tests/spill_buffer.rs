//! The SpillBuffer against a HashMap model: every chunk comes back exactly,
//! the metrics equal what is really in memory and on disk, files stay inside
//! a private directory, and a failed write loses nothing.

mod common;

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{random_bytes, small_ints};
use proptest::prelude::*;
use spillway_core::codec::{decode, Codec, FrameHeader};
use spillway_core::spill::{SpillBuffer, SpillConfig, SpillMetrics};
use spillway_core::Error;

fn config(dir: &Path, memory_limit: u64, target: f64, codec: Codec) -> SpillConfig {
    SpillConfig { dir: dir.to_path_buf(), memory_limit, target, codec, level: None }
}

fn buffer(dir: &Path, memory_limit: u64, target: f64) -> SpillBuffer {
    SpillBuffer::new(config(dir, memory_limit, target, Codec::Lz4)).unwrap()
}

/// Every entry of the spill directory: (name, size, permission bits).
fn files(dir: &Path) -> Vec<(String, u64, u32)> {
    let Ok(rd) = fs::read_dir(dir) else { return vec![] };
    let mut v: Vec<_> = rd
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (e.file_name().to_string_lossy().into_owned(), m.len(), m.permissions().mode() & 0o777)
        })
        .collect();
    v.sort();
    v
}

/// Checks the metrics against the model and against the directory itself.
fn assert_consistent(buf: &SpillBuffer, model: &HashMap<String, Vec<u8>>, failures_allowed: bool) -> SpillMetrics {
    let m = buf.metrics();
    let fs_now = files(buf.dir());
    let expected: u64 = model.values().map(|v| v.len() as u64).sum();
    assert_eq!(m.managed_bytes, expected, "managed bytes vs the model");
    assert_eq!(m.memory_bytes + m.spilled_memory, m.managed_bytes);
    assert_eq!(m.memory_count + m.disk_count, model.len() as u64, "chunk counts vs the model");
    for (name, _, mode) in &fs_now {
        assert!(name.ends_with(".spill"), "stray file {name}");
        assert_eq!(*mode, 0o600, "{name} has mode {mode:o}");
    }
    assert_eq!(m.disk_count, fs_now.len() as u64, "disk_count vs files in {:?}: {fs_now:?}", buf.dir());
    assert_eq!(m.spilled_disk, fs_now.iter().map(|f| f.1).sum::<u64>(), "spilled_disk vs file sizes");
    if !failures_allowed {
        assert!(m.memory_bytes <= m.target_bytes, "memory {} above target {}", m.memory_bytes, m.target_bytes);
    }
    let mut keys = buf.keys();
    keys.sort();
    let mut want: Vec<_> = model.keys().cloned().collect();
    want.sort();
    assert_eq!(keys, want);
    m
}

#[derive(Clone, Debug)]
enum Op {
    Set { key: u8, len: usize, compressible: bool, seed: u64 },
    Get(u8),
    Peek(u8),
    Has(u8),
    Delete(u8),
    SetTarget(f64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u8..6, prop_oneof![0usize..100, 100usize..40_000, 40_000usize..70_000], any::<bool>(), any::<u64>())
            .prop_map(|(key, len, compressible, seed)| Op::Set { key, len, compressible, seed }),
        4 => (0u8..7).prop_map(Op::Get),
        1 => (0u8..7).prop_map(Op::Peek),
        1 => (0u8..7).prop_map(Op::Has),
        2 => (0u8..7).prop_map(Op::Delete),
        1 => (0.05f64..1.0).prop_map(Op::SetTarget),
    ]
}

fn content(len: usize, compressible: bool, seed: u64) -> Vec<u8> {
    if compressible {
        let mut v = small_ints(seed, len / 8 + 1);
        v.truncate(len);
        v
    } else {
        random_bytes(seed, len)
    }
}

fn codec() -> impl Strategy<Value = Codec> {
    prop_oneof![Just(Codec::Lz4), Just(Codec::Zstd), Just(Codec::Snappy), Just(Codec::Zlib), Just(Codec::None)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn behaves_like_a_hashmap_while_spilling(ops in proptest::collection::vec(op(), 1..60), codec in codec(), target in 0.2f64..1.0) {
        let tmp = tempfile::tempdir().unwrap();
        // 100 kB: a handful of chunks fit; larger ones go straight to disk.
        let buf = SpillBuffer::new(config(&tmp.path().join("spill"), 100_000, target, codec)).unwrap();
        let mut model: HashMap<String, Vec<u8>> = HashMap::new();
        for op in &ops {
            match op {
                Op::Set { key, len, compressible, seed } => {
                    let data = content(*len, *compressible, *seed);
                    buf.set(&key.to_string(), data.clone()).unwrap();
                    model.insert(key.to_string(), data);
                }
                Op::Get(k) => {
                    let got = buf.get(&k.to_string()).unwrap();
                    prop_assert_eq!(got.as_deref(), model.get(&k.to_string()), "get {}", k);
                }
                Op::Peek(k) => {
                    let before = buf.metrics();
                    let got = buf.peek(&k.to_string()).unwrap();
                    prop_assert_eq!(got.as_deref(), model.get(&k.to_string()), "peek {}", k);
                    let after = buf.metrics();
                    prop_assert_eq!((before.memory_count, before.disk_count, before.spill_count), (after.memory_count, after.disk_count, after.spill_count), "peek moved a chunk");
                }
                Op::Has(k) => prop_assert_eq!(buf.has(&k.to_string()), model.contains_key(&k.to_string())),
                Op::Delete(k) => prop_assert_eq!(buf.delete(&k.to_string()).unwrap(), model.remove(&k.to_string()).is_some()),
                Op::SetTarget(t) => {
                    buf.set_target(*t).unwrap();
                    prop_assert_eq!(buf.metrics().target_bytes, (t * 100_000.0) as u64);
                }
            }
            let m = assert_consistent(&buf, &model, false);
            prop_assert_eq!(m.write_failures, 0);
        }
        // Finally every chunk, read back in a different order.
        let mut keys: Vec<_> = model.keys().cloned().collect();
        keys.sort();
        keys.reverse();
        for k in keys {
            let got = buf.get(&k).unwrap();
            prop_assert_eq!(got.as_deref(), model.get(&k));
            assert_consistent(&buf, &model, false);
        }
        let m = buf.metrics();
        prop_assert!(m.spill_bytes_written >= m.spilled_disk, "what is on disk was written");
        buf.close();
        prop_assert!(files(&tmp.path().join("spill")).is_empty());
    }
}

#[test]
fn the_directory_is_private_and_files_are_0600() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spill");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let buf = buffer(&dir, 1_000, 0.5);
    assert_eq!(fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700, "an existing directory is tightened");
    for i in 0..5 {
        buf.set(&format!("k{i}"), random_bytes(i, 5_000)).unwrap();
    }
    let fs_now = files(&dir);
    assert_eq!(fs_now.len(), 5);
    assert!(fs_now.iter().all(|f| f.2 == 0o600), "{fs_now:?}");
    let nested = tmp.path().join("a/b/c");
    let _b = buffer(&nested, 1_000, 0.5);
    assert_eq!(fs::metadata(&nested).unwrap().permissions().mode() & 0o777, 0o700, "a new directory is created private");
}

fn walk(root: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        }
        out.push(p);
    }
}

#[test]
fn no_key_can_name_a_file_outside_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inner").join("spill");
    let keys = [
        "../../etc/passwd",
        "../escape",
        "/abs/path",
        "/",
        "a/b",
        "a\\b",
        "nul\0byte",
        "",
        ".",
        "..",
        "~",
        "x".repeat(10_000).leak(),
        "ünïcødé 🚀",
        "spill.tmp",
        "CON",
    ];
    // Every chunk is larger than the target, so each one lands on disk.
    let buf = buffer(&dir, 1_000, 0.5);
    for (i, k) in keys.iter().enumerate() {
        buf.set(k, random_bytes(i as u64, 2_000)).unwrap();
    }
    let fs_now = files(&dir);
    assert_eq!(fs_now.len(), keys.len(), "one file per key: {fs_now:?}");
    for (name, _, _) in &fs_now {
        let (hash, rest) = name.split_once('-').unwrap();
        assert!(hash.len() == 32 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{name}");
        assert!(rest.ends_with(".spill") && rest.trim_end_matches(".spill").bytes().all(|b| b.is_ascii_hexdigit()), "{name}");
    }
    let mut all = Vec::new();
    walk(tmp.path(), &mut all);
    for p in &all {
        assert!(p.starts_with(&dir) || dir.starts_with(p), "{p:?} is outside the spill directory");
    }
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(buf.get(k).unwrap().unwrap().as_slice(), &random_bytes(i as u64, 2_000)[..], "key {k:?}");
    }
}

#[test]
fn a_chunk_larger_than_the_target_goes_straight_to_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = buffer(tmp.path(), 100_000, 0.5);
    buf.set("small", random_bytes(1, 10_000)).unwrap();
    let big = small_ints(2, 10_000); // 80 kB > the 50 kB target
    buf.set("big", big.clone()).unwrap();
    let m = buf.metrics();
    assert_eq!((m.memory_bytes, m.spilled_memory, m.disk_count, m.spill_count), (10_000, 80_000, 1, 1));
    assert!(m.spilled_disk < 80_000 / 2, "compressible data is compressed on disk: {}", m.spilled_disk);
    assert_eq!(buf.get("small").unwrap().unwrap().len(), 10_000, "the small chunk was not pushed out");
    // Reading it back serves it without bringing it into memory (it could
    // not stay there) and without writing it again.
    for _ in 0..3 {
        assert_eq!(buf.get("big").unwrap().unwrap().as_slice(), &big[..]);
    }
    let m = buf.metrics();
    assert_eq!((m.spill_count, m.disk_count, m.unspill_count), (1, 1, 3), "{m:?}");
    assert_eq!(m.memory_bytes, 10_000);
    assert_consistent(&buf, &HashMap::from([("small".into(), random_bytes(1, 10_000)), ("big".into(), big)]), false);
}

#[test]
fn spill_files_are_valid_frames_of_the_configured_codec() {
    let tmp = tempfile::tempdir().unwrap();
    for codec in [Codec::Zstd, Codec::Snappy] {
        let dir = tmp.path().join(codec.name());
        let buf = SpillBuffer::new(config(&dir, 1_000, 1.0, codec)).unwrap();
        buf.set("ints", small_ints(3, 20_000)).unwrap();
        let f = &files(&dir)[0].0;
        let bytes = fs::read(dir.join(f)).unwrap();
        assert_eq!(FrameHeader::parse(&bytes).unwrap().codec, codec);
        assert_eq!(decode(&bytes).unwrap(), small_ints(3, 20_000));
        buf.delete("ints").unwrap();
        // Random bytes are stored raw: spilling them costs no compression.
        buf.set("noise", random_bytes(4, 100_000)).unwrap();
        let f = &files(&dir)[0].0;
        let bytes = fs::read(dir.join(f)).unwrap();
        assert_eq!(FrameHeader::parse(&bytes).unwrap().codec, Codec::None);
        assert_eq!(buf.metrics().spilled_disk, 100_000 + 32);
    }
}

#[test]
fn least_recently_used_chunks_spill_first() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = buffer(tmp.path(), 100_000, 0.5);
    for k in ["a", "b", "c", "d"] {
        buf.set(k, random_bytes(1, 12_000)).unwrap();
    }
    buf.get("a").unwrap();
    buf.set("e", random_bytes(1, 12_000)).unwrap(); // 60 kB: one must go
    let m = buf.metrics();
    assert_eq!(m.disk_count, 1);
    // "b" was the least recently used; reading it back is an unspill.
    let before = buf.metrics().unspill_count;
    buf.peek("a").unwrap();
    assert_eq!(buf.metrics().unspill_count, before, "a stayed in memory");
    buf.peek("b").unwrap();
    assert_eq!(buf.metrics().unspill_count, before + 1, "b was spilled");
}

#[test]
fn set_target_takes_effect_at_once_and_is_validated() {
    let tmp = tempfile::tempdir().unwrap();
    let buf = buffer(tmp.path(), 1_000_000, 1.0);
    let mut model = HashMap::new();
    for i in 0..10 {
        let d = random_bytes(i, 90_000);
        buf.set(&i.to_string(), d.clone()).unwrap();
        model.insert(i.to_string(), d);
    }
    assert_eq!(buf.metrics().disk_count, 0);
    buf.set_target(0.3).unwrap();
    let m = assert_consistent(&buf, &model, false);
    assert!(m.memory_bytes <= 300_000 && m.disk_count == 7, "{m:?}");
    buf.set_target(0.9).unwrap();
    assert_eq!(buf.metrics().disk_count, 7, "raising the target does not read chunks back");
    for bad in [0.0, -0.1, 1.01, f64::NAN, f64::INFINITY] {
        assert!(matches!(buf.set_target(bad), Err(Error::InvalidArgument { field: "target", .. })), "{bad}");
    }
    assert_eq!(buf.metrics().target_bytes, 900_000, "a rejected target changes nothing");
    assert_eq!(buf.evict_until(0), 3, "evict_until spills what is left");
    assert_eq!(buf.metrics().memory_bytes, 0);
    assert_consistent(&buf, &model, false);
}

#[test]
fn bad_configurations_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    for t in [0.0, 1.5, f64::NAN, -1.0] {
        assert!(matches!(SpillBuffer::new(config(tmp.path(), 100, t, Codec::Lz4)), Err(Error::InvalidArgument { field: "target", .. })));
    }
    assert!(matches!(SpillBuffer::new(config(tmp.path(), 0, 0.5, Codec::Lz4)), Err(Error::InvalidArgument { field: "memoryLimit", .. })));
    let mut c = config(tmp.path(), 100, 0.5, Codec::Zstd);
    c.level = Some(42);
    assert!(matches!(SpillBuffer::new(c), Err(Error::InvalidLevel { .. })));
    let file = tmp.path().join("a-file");
    fs::write(&file, b"x").unwrap();
    assert!(matches!(SpillBuffer::new(config(&file, 100, 0.5, Codec::Lz4)), Err(Error::Io { .. })));
}

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
    buf.set_target(0.5).unwrap();
    let m = assert_consistent(&buf, &model, false);
    assert!(m.memory_bytes <= 50_000);
    for (k, v) in &model {
        assert_eq!(buf.get(k).unwrap().unwrap().as_slice(), &v[..], "{k} after repair");
    }
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
