//! The SpillBuffer proper. Invariant: a chunk is always held somewhere. It
//! leaves memory only once its file is completely written; until then it is
//! `Writing` and still served from memory. Files are written outside the
//! lock, so readers and other writers are not held up by disk I/O.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::backoff::Backoff;
use super::disk::DiskStore;
use super::lru::Lru;
use super::metrics::SpillMetrics;
use crate::codec::{Codec, Method, Shuffle};
use crate::error::{Error, Result};

mod adopt;
mod assemble;
mod read;
mod write;
use write::Write;
pub use assemble::PieceBytes;
pub use read::StoredBytes;

#[derive(Clone, Debug)]
pub struct SpillConfig {
    pub dir: PathBuf,
    pub memory_limit: u64,
    /// Fraction of `memory_limit` above which LRU chunks spill; `None` turns
    /// that off (Dask's `target: False`): only `evict_until` spills then.
    pub target: Option<f64>,
    pub codec: Codec,
    /// When typed values are byte-shuffled before `codec` ('auto': when
    /// their sample says it pays).
    pub shuffle: Shuffle,
    pub level: Option<i32>,
    /// Bytes the spill files may take on disk, after compression (Dask's
    /// `max-spill`); `None` for no cap.
    pub max_spill: Option<u64>,
}

enum Slot {
    Memory(Arc<Vec<u8>>),
    Writing(Arc<Vec<u8>>),
    Disk { disk_len: u64 },
}

struct Entry {
    slot: Slot,
    len: u64,
    version: u64,
    /// Bytes per element of a typed value, 0 when unknown: the shuffle's unit.
    element: u8,
    /// Its frame alone is larger than `max_spill`: no amount of freed disk
    /// lets it land, so eviction passes it by instead of compressing it again.
    over_cap: bool,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    lru: Lru,
    /// Bytes of `Memory` and `Writing` chunks.
    memory_bytes: u64,
    writing_bytes: u64,
    next_version: u64,
    target_bytes: u64,
    closed: bool,
    /// Writes wait after a failure, so a full disk is not retried per chunk.
    backoff: Backoff,
    /// Frame bytes of writes in flight, counted against `max_spill` before
    /// they land so that concurrent writers cannot overshoot it together.
    reserved_disk: u64,
    /// Disk bytes (landed and reserved) when the cap refused a frame.
    /// Eviction stops until they fall below this: compressing chunk after
    /// chunk only to refuse each would burn CPU for nothing.
    cap_hit_at: Option<u64>,
    m: SpillMetrics,
}

impl State {
    fn disk_bytes(&self) -> u64 {
        self.m.spilled_disk + self.reserved_disk
    }

    fn cap_reached(&self) -> bool {
        self.cap_hit_at.is_some_and(|at| self.disk_bytes() >= at)
    }
}

pub struct SpillBuffer {
    state: Mutex<State>,
    disk: DiskStore,
    method: Method,
    level: Option<i32>,
    memory_limit: u64,
    max_spill: Option<u64>,
}

/// The target in bytes; with the target off, managed memory never reaches it.
fn target_bytes(target: Option<f64>, memory_limit: u64) -> Result<u64> {
    match target {
        None => Ok(u64::MAX),
        Some(t) if t > 0.0 && t <= 1.0 => Ok((t * memory_limit as f64) as u64),
        Some(t) => Err(Error::invalid("target", format!("{t} is not a fraction in (0, 1] (or None: off)"))),
    }
}

impl SpillBuffer {
    pub fn new(config: SpillConfig) -> Result<SpillBuffer> {
        if config.memory_limit == 0 {
            return Err(Error::invalid("memoryLimit", "must be a positive number of bytes"));
        }
        let target_bytes = target_bytes(config.target, config.memory_limit)?;
        if config.max_spill == Some(0) {
            return Err(Error::invalid("maxSpill", "must be a positive number of bytes, or no cap"));
        }
        config.codec.resolve_level(config.level)?;
        let disk = DiskStore::open(&config.dir)?;
        let state = State { target_bytes, ..Default::default() };
        Ok(SpillBuffer {
            state: Mutex::new(state),
            disk,
            method: Method { codec: config.codec, shuffle: config.shuffle },
            level: config.level,
            memory_limit: config.memory_limit,
            max_spill: config.max_spill,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not make every chunk unreachable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn open(&self) -> Result<MutexGuard<'_, State>> {
        let s = self.lock();
        if s.closed {
            return Err(Error::Closed);
        }
        Ok(s)
    }

    pub fn dir(&self) -> &std::path::Path {
        self.disk.dir()
    }

    /// Stores a chunk, replacing any chunk of that key, then spills least
    /// recently used chunks until memory is back under the target.
    pub fn set(&self, key: &str, data: Vec<u8>) -> Result<()> {
        self.set_typed(key, data, 0)
    }

    /// `set` for a value of `element_size`-byte elements (a TypedArray's
    /// BYTES_PER_ELEMENT; 0 when unknown), which the shuffle needs to know.
    pub fn set_typed(&self, key: &str, data: Vec<u8>, element_size: u8) -> Result<()> {
        self.set_shared(key, Arc::new(data), element_size)
    }

    /// `set_typed` of bytes shared with their maker (a frame kernel's output,
    /// which JS holds too): stored without a copy, counted once, here. The
    /// maker must never write to them again.
    pub fn set_shared(&self, key: &str, data: Arc<Vec<u8>>, element_size: u8) -> Result<()> {
        let len = data.len() as u64;
        // The old chunk stays readable until the new one is stored, so a
        // reader during a straight-to-disk write never finds the key missing.
        let (version, straight_to_disk) = {
            let mut s = self.open()?;
            s.next_version += 1;
            (s.next_version, len > s.target_bytes && s.backoff.ready(Instant::now()) && !s.cap_reached())
        };
        let mut over_cap = false;
        let mut s = if straight_to_disk {
            let outcome = self.write_file(key, version, &data, element_size);
            let mut s = self.open()?;
            match outcome {
                Ok(Write::Landed { disk_len, secs }) => {
                    s.reserved_disk -= disk_len;
                    s.backoff.succeeded();
                    self.remove_locked(&mut s, key);
                    s.entries.insert(key.to_string(), Entry { slot: Slot::Disk { disk_len }, len, version, over_cap: false, element: element_size });
                    s.m.record_spill(len, disk_len, secs);
                    drop(s);
                    crate::pool::recycle(data);
                    return Ok(());
                }
                Ok(Write::Capped { alone }) => {
                    over_cap = alone;
                    s
                }
                Err(e) => {
                    s.m.record_failure(&e);
                    s.backoff.failed(Instant::now());
                    s
                }
            }
        } else {
            self.open()?
        };
        self.remove_locked(&mut s, key);
        s.entries.insert(key.to_string(), Entry { slot: Slot::Memory(data), len, version, over_cap, element: element_size });
        s.lru.touch(key);
        s.memory_bytes += len;
        let target = s.target_bytes;
        drop(s);
        self.evict_until(target);
        Ok(())
    }

    /// Generates a chunk straight into the buffer; returns its size.
    pub fn generate(&self, key: &str, spec: &crate::chunk::ChunkSpec) -> Result<u64> {
        let data = spec.generate()?;
        let n = data.len() as u64;
        // Both generators make 8-byte values (float64, int64).
        self.set_typed(key, data, 8)?;
        Ok(n)
    }

    pub fn has(&self, key: &str) -> bool {
        self.lock().entries.contains_key(key)
    }

    /// The size of the chunk under `key`, whether in memory or spilled.
    pub fn len_of(&self, key: &str) -> Option<u64> {
        self.lock().entries.get(key).map(|e| e.len)
    }

    /// Frees the chunk's memory or file; returns whether it was held.
    pub fn delete(&self, key: &str) -> Result<bool> {
        let mut s = self.open()?;
        Ok(self.remove_locked(&mut s, key))
    }

    fn remove_locked(&self, s: &mut State, key: &str) -> bool {
        let Some(e) = s.entries.remove(key) else { return false };
        match e.slot {
            Slot::Memory(d) => {
                s.lru.remove(key);
                s.memory_bytes -= e.len;
                crate::pool::recycle(d);
            }
            // The writer finds the entry gone and removes its own file.
            Slot::Writing(_) => {
                s.memory_bytes -= e.len;
                s.writing_bytes -= e.len;
            }
            Slot::Disk { disk_len } => {
                s.m.spilled_memory -= e.len;
                s.m.spilled_disk -= disk_len;
                self.disk.remove(key, e.version);
            }
        }
        true
    }

    /// Moves the target, and spills at once if memory is now above it.
    /// `None` turns the target off: managed memory alone then spills nothing.
    pub fn set_target(&self, target: impl Into<Option<f64>>) -> Result<()> {
        let bytes = target_bytes(target.into(), self.memory_limit)?;
        {
            let mut s = self.open()?;
            s.target_bytes = bytes;
        }
        self.evict_until(bytes);
        Ok(())
    }

    pub fn keys(&self) -> Vec<String> {
        self.lock().entries.keys().cloned().collect()
    }

    pub fn metrics(&self) -> SpillMetrics {
        let s = self.lock();
        let mut m = s.m.clone();
        m.memory_bytes = s.memory_bytes;
        m.managed_bytes = s.memory_bytes + m.spilled_memory;
        m.memory_count = s.lru.len() as u64 + s.entries.values().filter(|e| matches!(e.slot, Slot::Writing(_))).count() as u64;
        m.disk_count = s.entries.len() as u64 - m.memory_count;
        m.target_bytes = s.target_bytes;
        m.consecutive_write_failures = s.backoff.failures() as u64;
        m.spill_backoff_seconds = s.backoff.remaining(Instant::now()).as_secs_f64();
        m.memory_limit = self.memory_limit;
        m.spill_cap_reached = s.cap_reached();
        m
    }

    /// Drops every chunk and removes the files. Closing twice is harmless.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.entries.clear();
        s.lru = Lru::default();
        s.memory_bytes = 0;
        s.writing_bytes = 0;
        s.m.spilled_memory = 0;
        s.m.spilled_disk = 0;
        self.disk.clear();
    }
}

impl Drop for SpillBuffer {
    fn drop(&mut self) {
        self.close();
    }
}
