//! The SpillBuffer against a HashMap model: every chunk comes back exactly,
//! the metrics equal what is really in memory and on disk, and files stay
//! inside a private directory. Failures are in spill_failures.rs.


use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::it::common::spill::{assert_consistent, buffer, config, files};
use crate::it::common::{random_bytes, small_ints};
use proptest::prelude::*;
use spillway_core::codec::{decode, Codec, FrameHeader};
use spillway_core::spill::SpillBuffer;
use spillway_core::Error;

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
    // Bytes read back are counted as they are on disk, as bytes written are.
    assert_eq!(m.unspill_bytes_read, 3 * m.spill_bytes_written, "{m:?}");
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
    assert!(matches!(SpillBuffer::new(config(&file, 100, 0.5, Codec::Lz4)), Err(Error::InvalidArgument { field: "dir", .. })));
}
