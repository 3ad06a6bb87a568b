//! SpillBuffer helpers shared by the spill test files.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use spillway_core::codec::{Codec, Shuffle};
use spillway_core::spill::{SpillBuffer, SpillConfig, SpillMetrics};

pub fn config(dir: &Path, memory_limit: u64, target: f64, codec: Codec) -> SpillConfig {
    SpillConfig { dir: dir.to_path_buf(), memory_limit, target: Some(target), codec, shuffle: Shuffle::Never, level: None, max_spill: None }
}

pub fn buffer(dir: &Path, memory_limit: u64, target: f64) -> SpillBuffer {
    SpillBuffer::new(config(dir, memory_limit, target, Codec::Lz4)).unwrap()
}

/// Every entry of the spill directory: (name, size, permission bits).
pub fn files(dir: &Path) -> Vec<(String, u64, u32)> {
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
pub fn assert_consistent(buf: &SpillBuffer, model: &HashMap<String, Vec<u8>>, failures_allowed: bool) -> SpillMetrics {
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
