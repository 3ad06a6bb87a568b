//! `set_frame`: a chunk that arrives as another buffer's spilled frame is
//! stored on disk as it came, verified, never decoded into memory; a bad
//! frame is refused and leaves nothing behind.


use std::collections::HashMap;

use crate::it::common::spill::{assert_consistent, buffer, config, files};
use crate::it::common::{random_bytes, settings, small_ints, text};
use spillway_core::spill::{SpillBuffer, StoredBytes};
use spillway_core::Error;

fn spilled_frames(src: &SpillBuffer, chunks: &[(&str, Vec<u8>)]) -> Vec<Vec<u8>> {
    for (k, v) in chunks {
        src.set(k, v.clone()).unwrap();
    }
    src.evict_until(0);
    chunks
        .iter()
        .map(|(k, _)| match src.get_frame(k).unwrap() {
            Some(StoredBytes::Frame(f)) => f,
            other => panic!("expected a frame, got {other:?}"),
        })
        .collect()
}

#[test]
fn a_frame_lands_on_disk_as_it_came_and_reads_back_exactly() {
    for (codec, level) in settings() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let mut cfg = config(a.path(), 1 << 20, 0.5, codec);
        cfg.level = level;
        let src = SpillBuffer::new(cfg).unwrap();
        let chunks = [("ints", small_ints(1, 40_000)), ("text", text(30_000)), ("noise", random_bytes(2, 20_000))];
        let frames = spilled_frames(&src, &chunks);
        // The receiver spills with another codec: a frame says how it was written.
        let dst = buffer(b.path(), 1 << 20, 0.5);
        let mut model = HashMap::new();
        for ((k, v), f) in chunks.iter().zip(&frames) {
            assert_eq!(dst.set_frame(k, f).unwrap(), v.len() as u64);
            model.insert(k.to_string(), v.clone());
        }
        let m = assert_consistent(&dst, &model, false);
        assert_eq!((m.memory_count, m.disk_count, m.memory_bytes), (0, 3, 0), "{codec:?}: nothing held in memory");
        assert_eq!(m.spilled_disk, frames.iter().map(|f| f.len() as u64).sum::<u64>(), "{codec:?}: the frames as they came");
        for (k, v) in &chunks {
            assert_eq!(dst.peek(k).unwrap().unwrap().as_slice(), v.as_slice(), "{codec:?} {k}");
        }
    }
}

#[test]
fn a_frame_replaces_a_chunk_of_the_same_key_and_its_file() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let src = buffer(a.path(), 1 << 20, 0.5);
    let frames = spilled_frames(&src, &[("k", text(50_000))]);
    let dst = buffer(b.path(), 1 << 20, 0.5);
    dst.set("k", vec![7; 10_000]).unwrap();
    dst.set_frame("k", &frames[0]).unwrap();
    assert_eq!(dst.get("k").unwrap().unwrap().as_slice(), text(50_000).as_slice());
    dst.set_frame("k", &frames[0]).unwrap();
    assert_eq!(files(b.path()).len(), 1, "one file for the key");
    assert_consistent(&dst, &HashMap::from([("k".to_string(), text(50_000))]), false);
}

#[test]
fn a_bad_frame_is_refused_and_nothing_is_stored() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let src = buffer(a.path(), 1 << 20, 0.5);
    let good = spilled_frames(&src, &[("k", text(50_000))]).remove(0);
    let dst = buffer(b.path(), 1 << 20, 0.5);
    dst.set("k", vec![1; 1000]).unwrap();
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let mut forged = good.clone();
    forged[10] ^= 0x40; // the declared length
    for bad in [flipped, forged, good[..good.len() - 1].to_vec(), good[..20].to_vec(), b"not a frame at all, just bytes here".to_vec()] {
        let err = dst.set_frame("k", &bad).unwrap_err();
        assert!(matches!(err, Error::CorruptFrame { .. }), "{err:?}");
        assert_eq!(dst.get("k").unwrap().unwrap().as_slice(), &[1u8; 1000][..], "the old chunk is kept");
        assert!(files(b.path()).is_empty());
    }
}

#[test]
fn a_frame_past_max_spill_is_kept_in_memory_instead() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let src = buffer(a.path(), 1 << 20, 0.5);
    let frames = spilled_frames(&src, &[("x", random_bytes(3, 20_000)), ("y", random_bytes(4, 20_000))]);
    let mut cfg = config(b.path(), 1 << 20, 0.5, spillway_core::codec::Codec::Lz4);
    cfg.max_spill = Some(frames[0].len() as u64 + 100);
    let dst = SpillBuffer::new(cfg).unwrap();
    dst.set_frame("x", &frames[0]).unwrap();
    dst.set_frame("y", &frames[1]).unwrap();
    let m = dst.metrics();
    assert_eq!((m.disk_count, m.memory_count), (1, 1), "the second frame did not fit under the cap");
    assert!(m.spilled_disk <= frames[0].len() as u64 + 100);
    assert_eq!(dst.get("y").unwrap().unwrap().as_slice(), random_bytes(4, 20_000).as_slice());
    assert_eq!(dst.get("x").unwrap().unwrap().as_slice(), random_bytes(3, 20_000).as_slice());
}
