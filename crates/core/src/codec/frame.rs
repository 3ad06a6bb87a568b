//! The frame around every compressed block:
//!
//! ```text
//! 0..4   magic "SPWF"          4      format version (1)
//! 5      codec id              6      level (informational)
//! 7      flags                 8..16  decoded length, u64 LE
//! 16..24 payload length, u64   24..32 xxh3-64 of bytes 0..24 and the payload
//! ```
//!
//! The checksum covers the header too, so a forged length is caught before
//! any allocation is made from it. Flags 0 is a plain payload, as every frame
//! before the shuffle was; flags 0x11..=0x17 is a byte-shuffled payload
//! (blocks.rs) of elements of (flags & 7) + 1 bytes. Other flags are refused.

use std::borrow::Cow;
use std::hash::Hasher;
use std::io::Write;

use twox_hash::XxHash3_64;

use super::{blocks, raw, Codec, Filter};
use crate::error::{Error, Result};

pub const HEADER_LEN: usize = 32;
const MAGIC: &[u8; 4] = b"SPWF";
const VERSION: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub codec: Codec,
    pub filter: Filter,
    pub level: i8,
    pub decoded_len: u64,
    pub payload_len: u64,
    checksum: u64,
}

impl FrameHeader {
    fn prefix(&self) -> [u8; 24] {
        let mut p = [0u8; 24];
        p[..4].copy_from_slice(MAGIC);
        p[4] = VERSION;
        p[5] = self.codec.id();
        p[6] = self.level as u8;
        p[7] = self.filter.flags();
        p[8..16].copy_from_slice(&self.decoded_len.to_le_bytes());
        p[16..24].copy_from_slice(&self.payload_len.to_le_bytes());
        p
    }

    fn checksum_of(prefix: &[u8], payload: &[u8]) -> u64 {
        let mut h = XxHash3_64::new();
        h.write(prefix);
        h.write(payload);
        h.finish()
    }

    /// A hasher that has seen the header: feed it the payload in pieces as
    /// they arrive (while they are still in cache) and pass `finish()` to
    /// `decode_checked`, instead of a second pass over the whole payload.
    pub fn payload_hasher(&self) -> impl Hasher {
        let mut h = XxHash3_64::new();
        h.write(&self.prefix());
        h
    }

    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..24].copy_from_slice(&self.prefix());
        out[24..].copy_from_slice(&self.checksum.to_le_bytes());
        out
    }

    /// Parses and sanity-checks a header; the checksum is verified later,
    /// against the payload, by `decode_payload`.
    pub fn parse(bytes: &[u8]) -> Result<FrameHeader> {
        if bytes.len() < HEADER_LEN {
            return Err(Error::corrupt(format!("{} bytes is shorter than the {HEADER_LEN}-byte header", bytes.len())));
        }
        if &bytes[..4] != MAGIC {
            return Err(Error::corrupt("bad magic: not a spillway frame"));
        }
        if bytes[4] != VERSION {
            return Err(Error::corrupt(format!("unsupported frame version {}", bytes[4])));
        }
        let codec = Codec::from_id(bytes[5]).ok_or_else(|| Error::corrupt(format!("unknown codec id {}", bytes[5])))?;
        let filter = Filter::from_flags(bytes[7]).ok_or_else(|| Error::corrupt(format!("unknown flags {:#x}", bytes[7])))?;
        if codec == Codec::None && filter != Filter::None {
            return Err(Error::corrupt("a shuffled frame without a codec"));
        }
        let decoded_len = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
        let payload_len = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
        let checksum = u64::from_le_bytes(bytes[24..32].try_into().unwrap());
        // A shuffled payload may hold runs, each a word for a whole stream.
        let max_expansion = if filter == Filter::None { codec.max_expansion() } else { codec.max_expansion().max(blocks::MAX_EXPANSION) };
        if decoded_len > payload_len.saturating_mul(max_expansion) {
            return Err(Error::corrupt(format!(
                "declared length {decoded_len} is impossible for {payload_len} bytes of {}",
                codec.name()
            )));
        }
        if codec == Codec::None && decoded_len != payload_len {
            return Err(Error::corrupt("raw frame with differing lengths"));
        }
        Ok(FrameHeader { codec, filter, level: bytes[6] as i8, decoded_len, payload_len, checksum })
    }

    /// Verifies the payload against the checksum and decodes it. A raw payload
    /// is returned as is, without a copy.
    pub fn decode_payload(&self, payload: Vec<u8>) -> Result<Vec<u8>> {
        let checksum = Self::checksum_of(&self.prefix(), &payload);
        self.decode_checked(payload, checksum)
    }

    /// Like `decode_payload`, with the payload's checksum already computed
    /// by a `payload_hasher`.
    pub fn decode_checked(&self, payload: Vec<u8>, checksum: u64) -> Result<Vec<u8>> {
        self.check(payload.len(), checksum)?;
        if self.codec == Codec::None {
            return Ok(payload);
        }
        self.decode_verified(&payload)
    }

    /// Checks a payload's length and `payload_hasher` checksum against the
    /// header without decoding it: a frame passed on verbatim must still be
    /// known good before it leaves.
    pub fn check(&self, payload_len: usize, checksum: u64) -> Result<()> {
        if payload_len as u64 != self.payload_len {
            return Err(Error::corrupt(format!("payload is {payload_len} bytes, header declares {}", self.payload_len)));
        }
        if checksum != self.checksum {
            return Err(Error::corrupt("checksum mismatch"));
        }
        Ok(())
    }

    fn verify(&self, payload: &[u8]) -> Result<()> {
        self.check(payload.len(), Self::checksum_of(&self.prefix(), payload))
    }

    fn decode_verified(&self, payload: &[u8]) -> Result<Vec<u8>> {
        let len = usize::try_from(self.decoded_len).map_err(|_| Error::corrupt("declared length does not fit in memory"))?;
        match self.filter {
            Filter::None => raw::decompress_to_vec(self.codec, payload, len),
            Filter::Shuffle(size) => blocks::decompress_to_vec(self.codec, size as usize, payload, len, None),
        }
    }
}

/// A frame ready to write: its header and a payload that borrows the input
/// when stored raw, so incompressible chunks are never copied.
#[derive(Debug)]
pub struct Encoded<'a> {
    pub header: FrameHeader,
    pub payload: Cow<'a, [u8]>,
}

impl Encoded<'_> {
    pub fn len(&self) -> usize {
        HEADER_LEN + self.payload.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn codec(&self) -> Codec {
        self.header.codec
    }

    pub fn filter(&self) -> Filter {
        self.header.filter
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        v.extend_from_slice(&self.header.to_bytes());
        v.extend_from_slice(&self.payload);
        v
    }

    pub fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(&self.header.to_bytes())?;
        w.write_all(&self.payload)
    }
}

fn header_for(codec: Codec, filter: Filter, level: i32, decoded_len: usize, payload: &[u8]) -> FrameHeader {
    let mut header = FrameHeader {
        codec,
        filter,
        level: level as i8,
        decoded_len: decoded_len as u64,
        payload_len: payload.len() as u64,
        checksum: 0,
    };
    header.checksum = FrameHeader::checksum_of(&header.prefix(), payload);
    header
}

pub(crate) fn frame<'a>(codec: Codec, filter: Filter, level: i32, decoded_len: usize, payload: Cow<'a, [u8]>) -> Encoded<'a> {
    Encoded { header: header_for(codec, filter, level, decoded_len, &payload), payload }
}

/// A raw frame that borrows `data`.
pub(crate) fn raw_frame(data: &[u8]) -> Encoded<'_> {
    frame(Codec::None, Filter::None, 0, data.len(), Cow::Borrowed(data))
}

fn max_payload_len(codec: Codec, filter: Filter, len: usize) -> usize {
    match filter {
        Filter::None => raw::max_compressed_len(codec, len),
        Filter::Shuffle(size) => blocks::max_payload_len(codec, size as usize, len),
    }
}

fn compress_into(codec: Codec, filter: Filter, level: i32, data: &[u8], out: &mut [u8]) -> Result<usize> {
    match filter {
        Filter::None => raw::compress_into(codec, level, data, out),
        Filter::Shuffle(size) => blocks::compress_into(codec, level, size as usize, data, out),
    }
}

pub(crate) fn compress_payload(data: &[u8], codec: Codec, filter: Filter, level: i32) -> Result<Vec<u8>> {
    let mut out = crate::pool::fresh(max_payload_len(codec, filter, data.len()));
    let n = compress_into(codec, filter, level, data, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// A shuffle needs a codec after it, and an element size it can record.
fn check_filter(codec: Codec, filter: Filter) -> Result<Filter> {
    match filter {
        Filter::Shuffle(s) if !(2..=8).contains(&s) => Err(Error::invalid("elementSize", format!("{s} is not an element size from 2 to 8"))),
        _ if codec == Codec::None => Ok(Filter::None),
        f => Ok(f),
    }
}

/// Encodes `data` with exactly the codec asked for.
pub fn encode(data: &[u8], codec: Codec, level: Option<i32>) -> Result<Encoded<'_>> {
    encode_filtered(data, codec, Filter::None, level)
}

/// Encodes `data` with exactly the codec and filter asked for.
pub fn encode_filtered(data: &[u8], codec: Codec, filter: Filter, level: Option<i32>) -> Result<Encoded<'_>> {
    let level = codec.resolve_level(level)?;
    let filter = check_filter(codec, filter)?;
    if codec == Codec::None {
        return Ok(raw_frame(data));
    }
    let payload = compress_payload(data, codec, filter, level)?;
    Ok(frame(codec, filter, level, data.len(), Cow::Owned(payload)))
}

/// The most bytes `encode_to_vec` can return for `len` input bytes.
pub fn max_frame_len(codec: Codec, len: usize) -> usize {
    max_frame_len_filtered(codec, Filter::None, len)
}

pub fn max_frame_len_filtered(codec: Codec, filter: Filter, len: usize) -> usize {
    HEADER_LEN + max_payload_len(codec, filter, len)
}

/// The same frame as `encode(..).to_vec()`, compressed straight into one
/// buffer after room for the header: the frame is never copied, which for a
/// large chunk saves an allocation and a pass over it.
pub fn encode_to_vec(data: &[u8], codec: Codec, level: Option<i32>) -> Result<Vec<u8>> {
    encode_to_vec_filtered(data, codec, Filter::None, level)
}

/// `encode_to_vec` with a filter before the codec.
pub fn encode_to_vec_filtered(data: &[u8], codec: Codec, filter: Filter, level: Option<i32>) -> Result<Vec<u8>> {
    let level = codec.resolve_level(level)?;
    let filter = check_filter(codec, filter)?;
    let level = if codec == Codec::None { 0 } else { level };
    let mut out = if codec == Codec::None {
        // A copy needs no zeroed buffer to copy into.
        let mut out = Vec::with_capacity(HEADER_LEN + data.len());
        out.extend_from_slice(&[0; HEADER_LEN]);
        out.extend_from_slice(data);
        out
    } else {
        let mut out = crate::pool::fresh(max_frame_len_filtered(codec, filter, data.len()));
        let n = compress_into(codec, filter, level, data, &mut out[HEADER_LEN..])?;
        out.truncate(HEADER_LEN + n);
        out
    };
    let header = header_for(codec, filter, level, data.len(), &out[HEADER_LEN..]);
    out[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    Ok(out)
}

/// Decodes a whole frame held in memory.
pub fn decode(bytes: &[u8]) -> Result<Vec<u8>> {
    let header = FrameHeader::parse(bytes)?;
    let rest = &bytes[HEADER_LEN..];
    if let Filter::Shuffle(size) = header.filter {
        // Checksummed block by block as the decoder reaches each block, in
        // cache, instead of in a pass of its own; nothing decoded leaves
        // before the whole sum matched. The layout is checked first, so a
        // damaged frame allocates no more than a sound one of its size.
        let len = usize::try_from(header.decoded_len).map_err(|_| Error::corrupt("declared length does not fit in memory"))?;
        if rest.len() as u64 != header.payload_len {
            return Err(Error::corrupt(format!("payload is {} bytes, header declares {}", rest.len(), header.payload_len)));
        }
        let mut h = header.payload_hasher();
        let out = blocks::decompress_to_vec(header.codec, size as usize, rest, len, Some(&mut h))?;
        header.check(rest.len(), h.finish())?;
        return Ok(out);
    }
    // Verify before copying so a corrupt raw frame costs no allocation.
    header.verify(rest)?;
    if header.codec == Codec::None {
        let mut out = crate::pool::fresh(rest.len());
        out.copy_from_slice(rest);
        return Ok(out);
    }
    header.decode_verified(rest)
}
