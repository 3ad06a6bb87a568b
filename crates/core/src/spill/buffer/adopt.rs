//! Chunks that arrive as frames: a peer's spilled chunk moving here (a
//! worker retiring, a rebalance) travels as the frame it had on disk, and
//! is written here as it is: verified, but neither decoded nor held in
//! memory, so taking in a spilled chunk costs one write and no room
//! (within `max_spill`, like any write).

use std::borrow::Cow;
use std::hash::Hasher;
use std::time::Instant;

use super::{Entry, Slot, SpillBuffer};
use crate::codec::{decode, Encoded, Filter, FrameHeader, HEADER_LEN};
use crate::error::Result;

impl SpillBuffer {
    /// Stores a whole frame (as `get_frame` gives a spilled chunk) under
    /// `key`, replacing any chunk of that key, straight on disk; returns the
    /// chunk's decoded size. A frame that fails its header or checksum is
    /// refused and nothing is stored. While writes back off after failures,
    /// the chunk is decoded and kept in memory instead, as `set` would.
    pub fn set_frame(&self, key: &str, frame: &[u8]) -> Result<u64> {
        let header = FrameHeader::parse(frame)?;
        let payload = &frame[HEADER_LEN..];
        let mut h = header.payload_hasher();
        h.write(payload);
        header.check(payload.len(), h.finish())?;
        let len = header.decoded_len;
        let frame_len = frame.len() as u64;
        // A shuffled frame says its values' size; kept, should it be read
        // back and spilled again.
        let element = match header.filter {
            Filter::Shuffle(size) => size,
            Filter::None => 0,
        };
        let version = {
            let mut s = self.open()?;
            // Past `max_spill`, or while writes back off: kept in memory, as `set` would.
            let capped = self.max_spill.is_some_and(|cap| s.disk_bytes() + frame_len > cap);
            if capped || !s.backoff.ready(Instant::now()) {
                drop(s);
                self.set_typed(key, decode(frame)?, element)?;
                return Ok(len);
            }
            s.reserved_disk += frame_len;
            s.next_version += 1;
            s.next_version
        };
        let start = Instant::now();
        let written = self.disk.write(key, version, &Encoded { header, payload: Cow::Borrowed(payload) });
        let mut s = self.open()?;
        s.reserved_disk -= frame_len;
        match written {
            Ok(disk_len) => {
                s.backoff.succeeded();
                self.remove_locked(&mut s, key);
                s.entries.insert(key.to_string(), Entry { slot: Slot::Disk { disk_len }, len, version, over_cap: false, element });
                s.m.record_spill(len, disk_len, start.elapsed().as_secs_f64());
                Ok(len)
            }
            Err(e) => {
                s.m.record_failure(&e);
                s.backoff.failed(Instant::now());
                drop(s);
                self.set_typed(key, decode(frame)?, element)?;
                Ok(len)
            }
        }
    }
}
