// Reading chunks back: from memory, or from their file without holding the
// lock during the read (a concurrent delete or overwrite is detected and the
// key looked up again).

use std::sync::{Arc, MutexGuard};
use std::time::Instant;

use super::{Slot, SpillBuffer, State};
use crate::error::{Error, Result};

/// A chunk as `get_frame` hands it out for transfer.
#[derive(Debug)]
pub enum StoredBytes {
    /// A whole spillway frame, exactly as `codec::decode` accepts it (its
    /// codec is `None` when the chunk did not compress).
    Frame(Vec<u8>),
    /// The chunk's own bytes, uncompressed, shared with the buffer.
    Raw(Arc<Vec<u8>>),
}

/// What `lookup` found.
enum Lookup<'a, T> {
    Absent,
    /// In memory, or in memory while its file is written.
    Held(Arc<Vec<u8>>),
    /// Read from the file of `version`. `s` is the lock taken again after
    /// the read; `current` says whether that file is still the key's.
    Read { data: T, version: u64, secs: f64, s: MutexGuard<'a, State>, current: bool },
}

impl SpillBuffer {
    /// The chunk under `key`, read back from disk into memory if spilled (and
    /// counted as used), or `None`.
    pub fn get(&self, key: &str) -> Result<Option<Arc<Vec<u8>>>> {
        self.fetch(key, true)
    }

    /// Like `get`, but a spilled chunk is read without being brought back
    /// into memory: a scan over spilled data then costs no spill writes.
    pub fn peek(&self, key: &str) -> Result<Option<Arc<Vec<u8>>>> {
        self.fetch(key, false)
    }

    fn fetch(&self, key: &str, promote: bool) -> Result<Option<Arc<Vec<u8>>>> {
        let (data, version, secs, mut s, current) = match self.lookup(key, |v| self.disk.read(key, v))? {
            Lookup::Absent => return Ok(None),
            Lookup::Held(d) => return Ok(Some(d)),
            Lookup::Read { data, version, secs, s, current } => (data, version, secs, s, current),
        };
        // Bytes read are the file's, compressed, as spill_bytes_written counts them.
        let on_disk = match s.entries.get(key).map(|e| &e.slot) {
            Some(Slot::Disk { disk_len }) if current => *disk_len,
            _ => data.len() as u64,
        };
        s.m.record_unspill(on_disk, secs);
        let data = Arc::new(data);
        // A chunk larger than the target could not stay in memory:
        // promoting it would push every other chunk out and then
        // write it to disk again.
        let fits = s.entries.get(key).is_some_and(|e| e.len <= s.target_bytes);
        if promote && fits && current {
            let e = s.entries.get_mut(key).unwrap();
            let Slot::Disk { disk_len } = e.slot else { unreachable!() };
            e.slot = Slot::Memory(data.clone());
            let len = e.len;
            s.m.spilled_memory -= len;
            s.m.spilled_disk -= disk_len;
            s.memory_bytes += len;
            s.lru.touch(key);
            self.disk.remove(key, version);
            let target = s.target_bytes;
            drop(s);
            self.evict_until(target);
        }
        Ok(Some(data))
    }

    /// The chunk as it should travel to another worker: a spilled chunk as
    /// its file's frame, verified but not decoded, and left on disk (neither
    /// an unspill nor a use); a chunk in memory as its own bytes, counted as
    /// used as by `peek`.
    pub fn get_frame(&self, key: &str) -> Result<Option<StoredBytes>> {
        Ok(match self.lookup(key, |v| self.disk.read_frame(key, v))? {
            Lookup::Absent => None,
            Lookup::Held(d) => Some(StoredBytes::Raw(d)),
            Lookup::Read { data, .. } => Some(StoredBytes::Frame(data)),
        })
    }

    /// Finds `key`, reading a spilled chunk with `read` outside the lock. A
    /// concurrent delete or overwrite can remove the file being read; then
    /// look again rather than report a spurious error.
    fn lookup<T>(&self, key: &str, read: impl Fn(u64) -> Result<T>) -> Result<Lookup<'_, T>> {
        for _ in 0..8 {
            let version = {
                let mut s = self.open()?;
                let Some(e) = s.entries.get(key) else { return Ok(Lookup::Absent) };
                let version = e.version;
                match &e.slot {
                    Slot::Memory(d) => {
                        let d = d.clone();
                        s.lru.touch(key);
                        return Ok(Lookup::Held(d));
                    }
                    Slot::Writing(d) => return Ok(Lookup::Held(d.clone())),
                    Slot::Disk { .. } => version,
                }
            };
            let start = Instant::now();
            let outcome = read(version);
            let secs = start.elapsed().as_secs_f64();
            let s = self.open()?;
            let current = s.entries.get(key).is_some_and(|e| e.version == version && matches!(e.slot, Slot::Disk { .. }));
            match outcome {
                Ok(data) => return Ok(Lookup::Read { data, version, secs, s, current }),
                Err(e) if current => return Err(e),
                Err(_) => continue,
            }
        }
        Err(Error::invalid("key", format!("{key:?} kept changing while being read")))
    }

    /// The partial of a held chunk, reduced where it lies: a spilled chunk is
    /// read without coming back into memory, and its buffer is reused.
    pub fn reduce(&self, key: &str, dtype: crate::chunk::Dtype, op: crate::chunk::Op) -> Result<Option<crate::chunk::Partial>> {
        let Some(data) = self.peek(key)? else { return Ok(None) };
        let p = crate::chunk::partial(&data, dtype, op)?;
        crate::pool::recycle(data);
        Ok(Some(p))
    }
}
