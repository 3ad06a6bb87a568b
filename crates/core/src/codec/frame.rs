//! The frame around every compressed block:
//!
//! ```text
//! 0..4   magic "SPWF"          4      format version (1)
//! 5      codec id              6      level (informational)
//! 7      flags (0)             8..16  decoded length, u64 LE
//! 16..24 payload length, u64   24..32 xxh3-64 of bytes 0..24 and the payload
//! ```
//!
//! The checksum covers the header too, so a forged length is caught before
//! any allocation is made from it.

use std::borrow::Cow;
use std::hash::Hasher;
use std::io::Write;

use twox_hash::XxHash3_64;

use super::{raw, Codec};
use crate::error::{Error, Result};

pub const HEADER_LEN: usize = 32;
const MAGIC: &[u8; 4] = b"SPWF";
const VERSION: u8 = 1;

/// Below this size compression is not worth a sample (Dask's `min_size`).
const MIN_COMPRESS: usize = 10_000;
const SAMPLE: usize = 10_000;
const SAMPLES: usize = 5;
/// Keep compressed output only when it saves at least 10% (as Dask does).
const WORTHWHILE: f64 = 0.9;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub codec: Codec,
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
        p[7] = 0;
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
        if bytes[7] != 0 {
            return Err(Error::corrupt(format!("unknown flags {:#x}", bytes[7])));
        }
        let decoded_len = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
        let payload_len = u64::from_le_bytes(bytes[16..24].try_into().unwrap());
        let checksum = u64::from_le_bytes(bytes[24..32].try_into().unwrap());
        if decoded_len > payload_len.saturating_mul(codec.max_expansion()) {
            return Err(Error::corrupt(format!(
                "declared length {decoded_len} is impossible for {payload_len} bytes of {}",
                codec.name()
            )));
        }
        if codec == Codec::None && decoded_len != payload_len {
            return Err(Error::corrupt("raw frame with differing lengths"));
        }
        Ok(FrameHeader { codec, level: bytes[6] as i8, decoded_len, payload_len, checksum })
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
        raw::decompress_to_vec(self.codec, payload, len)
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

fn header_for(codec: Codec, level: i32, decoded_len: usize, payload: &[u8]) -> FrameHeader {
    let mut header = FrameHeader {
        codec,
        level: level as i8,
        decoded_len: decoded_len as u64,
        payload_len: payload.len() as u64,
        checksum: 0,
    };
    header.checksum = FrameHeader::checksum_of(&header.prefix(), payload);
    header
}

fn frame<'a>(codec: Codec, level: i32, decoded_len: usize, payload: Cow<'a, [u8]>) -> Encoded<'a> {
    Encoded { header: header_for(codec, level, decoded_len, &payload), payload }
}

fn compress_payload(data: &[u8], codec: Codec, level: i32) -> Result<Vec<u8>> {
    let mut out = crate::pool::fresh(raw::max_compressed_len(codec, data.len()));
    let n = raw::compress_into(codec, level, data, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// Encodes `data` with exactly the codec asked for.
pub fn encode(data: &[u8], codec: Codec, level: Option<i32>) -> Result<Encoded<'_>> {
    let level = codec.resolve_level(level)?;
    if codec == Codec::None {
        return Ok(frame(codec, 0, data.len(), Cow::Borrowed(data)));
    }
    let payload = compress_payload(data, codec, level)?;
    Ok(frame(codec, level, data.len(), Cow::Owned(payload)))
}

/// The most bytes `encode_to_vec` can return for `len` input bytes.
pub fn max_frame_len(codec: Codec, len: usize) -> usize {
    HEADER_LEN + raw::max_compressed_len(codec, len)
}

/// The same frame as `encode(..).to_vec()`, compressed straight into one
/// buffer after room for the header: the frame is never copied, which for a
/// large chunk saves an allocation and a pass over it.
pub fn encode_to_vec(data: &[u8], codec: Codec, level: Option<i32>) -> Result<Vec<u8>> {
    let level = codec.resolve_level(level)?;
    let level = if codec == Codec::None { 0 } else { level };
    let mut out = if codec == Codec::None {
        // A copy needs no zeroed buffer to copy into.
        let mut out = Vec::with_capacity(HEADER_LEN + data.len());
        out.extend_from_slice(&[0; HEADER_LEN]);
        out.extend_from_slice(data);
        out
    } else {
        let mut out = crate::pool::fresh(max_frame_len(codec, data.len()));
        let n = raw::compress_into(codec, level, data, &mut out[HEADER_LEN..])?;
        out.truncate(HEADER_LEN + n);
        out
    };
    let header = header_for(codec, level, data.len(), &out[HEADER_LEN..]);
    out[..HEADER_LEN].copy_from_slice(&header.to_bytes());
    Ok(out)
}

/// Encodes `data` as Dask's `maybe_compress` does: small inputs and inputs
/// whose samples do not shrink by 10% are stored raw, so random floats cost
/// no compression CPU.
pub fn encode_if_smaller(data: &[u8], codec: Codec, level: Option<i32>) -> Result<Encoded<'_>> {
    let level = codec.resolve_level(level)?;
    let raw_frame = |d| Ok(frame(Codec::None, 0, data.len(), Cow::Borrowed(d)));
    if codec == Codec::None || data.len() < MIN_COMPRESS {
        return raw_frame(data);
    }
    if data.len() > SAMPLE * SAMPLES * 2 {
        let stride = data.len() / SAMPLES;
        let mut sample = Vec::with_capacity(SAMPLE * SAMPLES);
        for i in 0..SAMPLES {
            sample.extend_from_slice(&data[i * stride..i * stride + SAMPLE]);
        }
        let c = compress_payload(&sample, codec, level)?;
        if c.len() as f64 > WORTHWHILE * sample.len() as f64 {
            return raw_frame(data);
        }
    }
    let payload = compress_payload(data, codec, level)?;
    if payload.len() as f64 > WORTHWHILE * data.len() as f64 {
        return raw_frame(data);
    }
    Ok(frame(codec, level, data.len(), Cow::Owned(payload)))
}

/// Decodes a whole frame held in memory.
pub fn decode(bytes: &[u8]) -> Result<Vec<u8>> {
    let header = FrameHeader::parse(bytes)?;
    let rest = &bytes[HEADER_LEN..];
    // Verify before copying so a corrupt raw frame costs no allocation.
    header.verify(rest)?;
    if header.codec == Codec::None {
        let mut out = crate::pool::fresh(rest.len());
        out.copy_from_slice(rest);
        return Ok(out);
    }
    header.decode_verified(rest)
}
