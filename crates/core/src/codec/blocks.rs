//! The payload of a shuffled frame, in blocks as Blosc lays them out:
//!
//! ```text
//! u32 LE block size (a multiple of the element size)
//! per block: u32 LE stored length, top bit set when stored uncompressed,
//!            then the stored bytes
//! ```
//!
//! Each block is shuffled into a scratch buffer that stays in cache, then
//! compressed from there, so the shuffle costs no pass over main memory;
//! decoding runs the same way backwards. A block the codec cannot shrink is
//! stored shuffled but uncompressed, so noise costs no decompression.

use super::{raw, shuffle, Codec};
use crate::error::{Error, Result};

/// A quarter of a typical L2: the scratch block and the codec's tables fit.
const BLOCK: usize = 256 << 10;
const RAW: u32 = 1 << 31;
/// Blocks larger than this are not written and, so, not believed.
const MAX_BLOCK: usize = 64 << 20;

fn block_size(element: usize) -> usize {
    BLOCK - BLOCK % element
}

/// Upper bound of the payload for `len` input bytes.
pub(crate) fn max_payload_len(codec: Codec, element: usize, len: usize) -> usize {
    let block = block_size(element);
    let blocks = len.div_ceil(block);
    // A block is kept compressed only when smaller, so only the block being
    // written can need the codec's whole bound.
    4 + 4 * blocks + len + raw::max_compressed_len(codec, block) - block
}

/// A codec's state kept across the blocks of one frame: zstd's contexts
/// are costly to make, and a fresh one per block would dominate.
enum Coder {
    Zstd(zstd::zstd_safe::CCtx<'static>),
    Other,
}

impl Coder {
    fn new(codec: Codec) -> Result<Coder> {
        Ok(match codec {
            Codec::Zstd => {
                Coder::Zstd(
                    zstd::zstd_safe::CCtx::try_create().ok_or_else(|| Error::Codec {
                        codec: "zstd",
                        message: "cannot allocate an encoder".into(),
                    })?,
                )
            }
            _ => Coder::Other,
        })
    }

    fn compress(
        &mut self,
        codec: Codec,
        level: i32,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<usize> {
        match self {
            Coder::Zstd(c) => c.compress(out, input, level).map_err(|code| Error::Codec {
                codec: "zstd",
                message: zstd::zstd_safe::get_error_name(code).to_string(),
            }),
            Coder::Other => raw::compress_into(codec, level, input, out),
        }
    }
}

/// Shuffles and compresses `data` block by block into `out` (sized by
/// `max_payload_len`); returns the payload length.
pub(crate) fn compress_into(
    codec: Codec,
    level: i32,
    element: usize,
    data: &[u8],
    out: &mut [u8],
) -> Result<usize> {
    let block = block_size(element);
    out[..4].copy_from_slice(&(block as u32).to_le_bytes());
    let mut pos = 4;
    let mut scratch = vec![0u8; block.min(data.len())];
    let mut coder = Coder::new(codec)?;
    for piece in data.chunks(block) {
        let shuffled = &mut scratch[..piece.len()];
        shuffle::shuffle(element, piece, shuffled);
        let at = pos + 4;
        let room = raw::max_compressed_len(codec, piece.len());
        let n = coder.compress(codec, level, shuffled, &mut out[at..at + room])?;
        let word = if n < piece.len() {
            n as u32
        } else {
            out[at..at + piece.len()].copy_from_slice(shuffled);
            RAW | piece.len() as u32
        };
        out[pos..at].copy_from_slice(&word.to_le_bytes());
        pos = at + (word & !RAW) as usize;
    }
    Ok(pos)
}

/// One block as the payload stores it.
struct Stored<'a> {
    /// Where its bytes go in the output.
    at: usize,
    len: usize,
    bytes: &'a [u8],
    raw: bool,
}

/// The blocks of a payload that decodes to `decoded_len` bytes, each checked
/// against the payload's bounds and the codec's largest ratio before any
/// output is allocated: a forged length or block table is refused at no cost.
fn layout(
    codec: Codec,
    element: usize,
    payload: &[u8],
    decoded_len: usize,
) -> Result<Vec<Stored<'_>>> {
    let word = |at: usize| -> Result<u32> {
        payload
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .ok_or_else(|| Error::corrupt("shuffled payload ends inside a block header"))
    };
    let block = word(0)? as usize;
    if block == 0 || block % element != 0 || block > MAX_BLOCK {
        return Err(Error::corrupt(format!(
            "block size {block} is impossible for {element}-byte elements"
        )));
    }
    let count = decoded_len.div_ceil(block);
    // Every block takes at least its 4-byte header.
    if count > (payload.len() - 4) / 4 {
        return Err(Error::corrupt(format!(
            "{decoded_len} bytes need {count} blocks, the payload holds fewer"
        )));
    }
    let mut blocks = Vec::with_capacity(count);
    let mut pos = 4;
    for i in 0..count {
        let at = i * block;
        let len = block.min(decoded_len - at);
        let w = word(pos)?;
        let raw = w & RAW != 0;
        let stored = (w & !RAW) as usize;
        let plausible = if raw {
            stored == len
        } else {
            stored > 0 && stored < len && (stored as u64) * codec.max_expansion() >= len as u64
        };
        if !plausible {
            return Err(Error::corrupt(format!(
                "block {i} stores {stored} bytes for {len}"
            )));
        }
        let bytes = payload
            .get(pos + 4..pos + 4 + stored)
            .ok_or_else(|| Error::corrupt(format!("block {i} runs past the payload")))?;
        blocks.push(Stored {
            at,
            len,
            bytes,
            raw,
        });
        pos += 4 + stored;
    }
    if pos != payload.len() {
        return Err(Error::corrupt("bytes after the last block"));
    }
    Ok(blocks)
}

/// Decodes a shuffled payload into exactly `decoded_len` bytes.
pub(crate) fn decompress_to_vec(
    codec: Codec,
    element: usize,
    payload: &[u8],
    decoded_len: usize,
) -> Result<Vec<u8>> {
    let blocks = layout(codec, element, payload, decoded_len)?;
    let mut out = crate::pool::fresh(decoded_len);
    let mut scratch = vec![0u8; blocks.iter().map(|b| b.len).max().unwrap_or(0)];
    let mut dctx = match codec {
        Codec::Zstd => Some(
            zstd::zstd_safe::DCtx::try_create().ok_or_else(|| Error::Codec {
                codec: "zstd",
                message: "cannot allocate a decoder".into(),
            })?,
        ),
        _ => None,
    };
    for b in &blocks {
        let dst = &mut out[b.at..b.at + b.len];
        if b.raw {
            shuffle::unshuffle(element, b.bytes, dst);
            continue;
        }
        let tmp = &mut scratch[..b.len];
        match dctx.as_mut() {
            Some(d) => {
                let n = d.decompress(&mut *tmp, b.bytes).map_err(|code| {
                    Error::corrupt(format!("zstd: {}", zstd::zstd_safe::get_error_name(code)))
                })?;
                if n != b.len {
                    return Err(Error::corrupt(format!(
                        "zstd block decoded to {n} bytes, not {}",
                        b.len
                    )));
                }
            }
            None => raw::decompress_into(codec, b.bytes, tmp)?,
        }
        shuffle::unshuffle(element, tmp, dst);
    }
    Ok(out)
}
