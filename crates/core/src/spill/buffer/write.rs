//! The write side of the SpillBuffer: least recently used chunks spilled
//! until memory is back under a bound, and the one write path every frame
//! takes to disk (a chunk's own, or a peer's adopted as it came), with its
//! frame's bytes reserved against `max_spill` before it is written.

use std::time::Instant;

use super::{Slot, SpillBuffer};
use crate::codec::{encode_for_spill, Encoded};
use crate::error::Result;

/// What became of one spill write.
pub(super) enum Write {
    Landed { disk_len: u64, secs: f64 },
    /// The cap refused the frame; the chunk stays in memory. `alone`: the
    /// frame is larger than the whole cap, so it could never land.
    Capped { alone: bool },
}

impl SpillBuffer {
    /// Spills least recently used chunks until at most `bytes` stay in
    /// memory (not counting chunks already being written). Returns how many
    /// chunks were spilled. Stops at the first failed write: the chunk stays
    /// in memory, the failure is counted, and writes wait (backoff.rs)
    /// before the next try. Stops too when a frame would take the disk past
    /// `max_spill`: that chunk stays in memory, and eviction waits until
    /// disk bytes fall (a spilled chunk deleted or read back).
    pub fn evict_until(&self, bytes: u64) -> u64 {
        let mut spilled = 0;
        // Chunks passed by for being over the cap alone, so a memory of
        // nothing else cannot loop.
        let mut passed = 0;
        loop {
            let (key, version, data, element) = {
                let mut s = self.lock();
                if s.closed || s.memory_bytes - s.writing_bytes <= bytes || !s.backoff.ready(Instant::now()) || s.cap_reached() {
                    return spilled;
                }
                if passed >= s.lru.len() {
                    return spilled;
                }
                let Some(key) = s.lru.pop_oldest() else { return spilled };
                let e = s.entries.get_mut(&key).expect("lru and entries agree");
                if e.over_cap {
                    s.lru.touch(&key);
                    passed += 1;
                    continue;
                }
                let Slot::Memory(d) = &e.slot else { unreachable!("only memory chunks are in the lru") };
                let d = d.clone();
                e.slot = Slot::Writing(d.clone());
                // Every write gets a fresh version: a chunk read back and
                // spilled again must not reuse the file name a concurrent
                // reader may still be opening, or a NotFound from the
                // promotion's removal would look like a lost file.
                s.next_version += 1;
                let version = s.next_version;
                let e = s.entries.get_mut(&key).unwrap();
                e.version = version;
                let (len, element) = (e.len, e.element);
                s.writing_bytes += len;
                (key, version, d, element)
            };
            let outcome = self.write_file(&key, version, &data, element);
            let mut s = self.lock();
            let live = s.entries.get(&key).is_some_and(|e| e.version == version);
            if let Ok(Write::Landed { disk_len, .. }) = outcome {
                s.reserved_disk -= disk_len;
            }
            match (outcome, live) {
                (Ok(Write::Landed { disk_len, secs }), true) => {
                    let e = s.entries.get_mut(&key).unwrap();
                    drop(std::mem::replace(&mut e.slot, Slot::Disk { disk_len }));
                    let len = e.len;
                    s.memory_bytes -= len;
                    s.writing_bytes -= len;
                    s.m.record_spill(len, disk_len, secs);
                    s.backoff.succeeded();
                    spilled += 1;
                    drop(s);
                    crate::pool::recycle(data);
                }
                (Ok(Write::Landed { .. }), false) => self.disk.remove(&key, version),
                (Ok(Write::Capped { alone }), true) => {
                    let e = s.entries.get_mut(&key).unwrap();
                    e.slot = Slot::Memory(data);
                    e.over_cap = alone;
                    let len = e.len;
                    s.writing_bytes -= len;
                    if alone {
                        s.lru.touch(&key);
                        passed += 1;
                    } else {
                        s.lru.push_oldest(&key);
                    }
                }
                (Err(err), true) => {
                    let e = s.entries.get_mut(&key).unwrap();
                    e.slot = Slot::Memory(data);
                    let len = e.len;
                    s.writing_bytes -= len;
                    s.lru.push_oldest(&key);
                    s.m.record_failure(&err);
                    s.backoff.failed(Instant::now());
                    return spilled;
                }
                (Ok(Write::Capped { .. }) | Err(_), false) => {}
            }
        }
    }

    /// Ends the wait after failed writes: the caller saw space freed.
    pub fn retry_spill_now(&self) {
        self.lock().backoff.retry_now();
    }

    /// Compresses and writes one chunk (see `write_frame`).
    pub(super) fn write_file(&self, key: &str, version: u64, data: &[u8], element: u8) -> Result<Write> {
        let start = Instant::now();
        let frame = encode_for_spill(data, self.method, self.level, element as usize)?;
        self.write_frame(key, version, &frame, start)
    }

    /// Writes one frame. Its bytes are reserved against `max_spill` before
    /// the write; on `Landed` the caller, holding the lock, moves them from
    /// reserved to spilled. A frame the cap refuses is `Capped`, not written.
    pub(super) fn write_frame(&self, key: &str, version: u64, frame: &Encoded<'_>, start: Instant) -> Result<Write> {
        let frame_len = frame.len() as u64;
        {
            let mut s = self.lock();
            if let Some(cap) = self.max_spill {
                if s.disk_bytes() + frame_len > cap {
                    s.m.spill_cap_refusals += 1;
                    let alone = frame_len > cap;
                    if !alone {
                        s.cap_hit_at = Some(s.disk_bytes());
                    }
                    return Ok(Write::Capped { alone });
                }
            }
            s.reserved_disk += frame_len;
        }
        match self.disk.write(key, version, frame) {
            Ok(disk_len) => Ok(Write::Landed { disk_len, secs: start.elapsed().as_secs_f64() }),
            Err(e) => {
                self.lock().reserved_disk -= frame_len;
                Err(e)
            }
        }
    }
}
