//! Chunks that arrive as frames: a peer's spilled chunk moving here (a
//! worker retiring, a rebalance) travels as the frame it had on disk, and
//! is written here as it is: verified, but neither decoded nor held in
//! memory, so taking in a spilled chunk costs one write and no room
//! (within `max_spill`, like any write).

use std::borrow::Cow;
use std::hash::Hasher;
use std::time::Instant;

use super::{Entry, Slot, SpillBuffer, Write};
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
        // A shuffled frame says its values' size; kept, should it be read
        // back and spilled again.
        let element = match header.filter {
            Filter::Shuffle(size) => size,
            Filter::None => 0,
        };
        let version = {
            let mut s = self.open()?;
            if s.backoff.ready(Instant::now()) {
                s.next_version += 1;
                Some(s.next_version)
            } else {
                None
            }
        };
        // The frame goes the way every spill write goes, `max_spill` included.
        let start = Instant::now();
        let written = version.map(|v| (v, self.write_frame(key, v, &Encoded { header, payload: Cow::Borrowed(payload) }, start)));
        let mut s = self.open()?;
        match written {
            Some((version, Ok(Write::Landed { disk_len, secs }))) => {
                s.reserved_disk -= disk_len;
                s.backoff.succeeded();
                self.remove_locked(&mut s, key);
                s.entries.insert(key.to_string(), Entry { slot: Slot::Disk { disk_len }, len, version, over_cap: false, element });
                s.m.record_spill(len, disk_len, secs);
                return Ok(len);
            }
            Some((_, Err(e))) => {
                s.m.record_failure(&e);
                s.backoff.failed(Instant::now());
            }
            // Past the cap, or while writes back off.
            Some((_, Ok(Write::Capped { .. }))) | None => {}
        }
        // Kept in memory instead, as `set` would.
        drop(s);
        self.set_typed(key, decode(frame)?, element)?;
        Ok(len)
    }
}
