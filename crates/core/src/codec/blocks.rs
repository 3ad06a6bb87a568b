//! The payload of a shuffled frame, in blocks split into byte streams as
//! Blosc lays them out:
//!
//! ```text
//! u32 LE block size (a multiple of the element size)
//! per block of n elements: one entry per byte stream (when n > 0), then
//! the block's loose tail bytes (only the last block has any), as they are
//! entry: u32 LE word, then its bytes
//!   RAW | n       the stream stored as it is (n bytes follow)
//!   RUN | b       every byte of the stream is b (nothing follows)
//!   c (0 < c < n) the stream compressed to c bytes
//! ```
//!
//! Each block is shuffled into a scratch buffer that stays in cache and
//! compressed from there, so the shuffle costs no pass over main memory;
//! decoding runs the same way backwards. Streams are compressed one by one,
//! as Blosc does: the noise of low mantissa bytes is stored raw (no codec
//! time on either side), and the constant high bytes of small integers are
//! a run (a memset to decode), where one codec call over the block would
//! spend time on both.

use super::{lz4c, raw, shuffle, Codec};
use crate::error::{Error, Result};

/// Half an L2 of current server cores for the fast codecs: the scratch
/// block stays in cache, and lz4 decodes 1 MiB blocks a fifth faster than
/// 256 KiB ones. zstd keeps Blosc's 256 KiB: at 1 MiB its level 3 ran a
/// third slower for no smaller output (measured, BENCHMARKS.md 2026-12-05).
const FAST_BLOCK: usize = 1 << 20;
const SLOW_BLOCK: usize = 256 << 10;
/// Blocks larger than this are not written and, so, not believed.
const MAX_BLOCK: usize = 4 << 20;
const RAW: u32 = 1 << 31;
const RUN: u32 = 1 << 30;
const LEN: u32 = RUN - 1;

/// The most bytes a shuffled payload can decode to per payload byte: a run
/// entry (4 bytes) stands for a whole stream of up to `MAX_BLOCK / 2` bytes.
pub(crate) const MAX_EXPANSION: u64 = (MAX_BLOCK / 2 / 4) as u64;

fn block_size(codec: Codec, element: usize) -> usize {
    let block = if matches!(codec, Codec::Zstd | Codec::Zlib) { SLOW_BLOCK } else { FAST_BLOCK };
    block - block % element
}

/// Upper bound of the payload for `len` input bytes.
pub(crate) fn max_payload_len(codec: Codec, element: usize, len: usize) -> usize {
    let block = block_size(codec, element);
    let blocks = len.div_ceil(block);
    // A stream is kept compressed only when smaller, so only the stream
    // being written can need the codec's whole bound.
    let stream = block / element;
    4 + 4 * element * blocks + len + raw::max_compressed_len(codec, stream) - stream
}

/// What a thread keeps between frames: the scratch block and zstd's
/// contexts. Fresh ones per frame would cost page faults, zeroing and setup
/// on every call, as much as the coding itself for frames of a few hundred
/// KB.
#[derive(Default)]
struct Workspace {
    scratch: Vec<u8>,
    cctx: Option<zstd::zstd_safe::CCtx<'static>>,
    dctx: Option<zstd::zstd_safe::DCtx<'static>>,
}

thread_local! {
    static WORKSPACE: std::cell::RefCell<Workspace> = std::cell::RefCell::new(Workspace::default());
}

/// Runs `f` with this thread's workspace and `scratch_len` bytes of its
/// scratch (contents unspecified: every use writes before it reads).
fn with_workspace<T>(scratch_len: usize, f: impl FnOnce(&mut [u8], &mut Workspace) -> Result<T>) -> Result<T> {
    WORKSPACE.with(|w| {
        let mut w = w.borrow_mut();
        let mut scratch = std::mem::take(&mut w.scratch);
        if scratch.len() < scratch_len {
            scratch = vec![0u8; scratch_len];
        }
        let r = f(&mut scratch[..scratch_len], &mut w);
        w.scratch = scratch;
        r
    })
}

fn zstd_err(code: usize) -> String {
    zstd::zstd_safe::get_error_name(code).to_string()
}

/// The context in `slot`, made on first use.
fn context<'a, T>(slot: &'a mut Option<T>, make: impl FnOnce() -> Option<T>, what: &str) -> Result<&'a mut T> {
    if slot.is_none() {
        *slot = Some(make().ok_or_else(|| Error::Codec { codec: "zstd", message: format!("cannot allocate a zstd {what}") })?);
    }
    Ok(slot.as_mut().expect("made above"))
}

fn compress_stream(codec: Codec, level: i32, w: &mut Workspace, input: &[u8], out: &mut [u8]) -> Result<usize> {
    match codec {
        Codec::Zstd => {
            let c = context(&mut w.cctx, zstd::zstd_safe::CCtx::try_create, "encoder")?;
            c.compress(out, input, level).map_err(|code| Error::Codec { codec: "zstd", message: zstd_err(code) })
        }
        Codec::Lz4 => lz4c::compress(input, out),
        _ => raw::compress_into(codec, level, input, out),
    }
}

/// Decodes one stream into all of `out`.
fn decompress_stream(codec: Codec, w: &mut Workspace, input: &[u8], out: &mut [u8]) -> Result<()> {
    match codec {
        Codec::Zstd => {
            let d = context(&mut w.dctx, zstd::zstd_safe::DCtx::try_create, "decoder")?;
            let got = d.decompress(&mut *out, input).map_err(|code| Error::corrupt(format!("zstd: {}", zstd_err(code))))?;
            if got != out.len() {
                return Err(Error::corrupt(format!("zstd stream decoded to {got} bytes, not {}", out.len())));
            }
            Ok(())
        }
        Codec::Lz4 => lz4c::decompress(input, out),
        _ => raw::decompress_into(codec, input, out),
    }
}

/// The byte every position of `s` holds, if there is one.
fn run_of(s: &[u8]) -> Option<u8> {
    let (&first, _) = s.split_first()?;
    // Word-wide comparison: the check costs little next to a codec call.
    let word = u64::from_ne_bytes([first; 8]);
    let mut chunks = s.chunks_exact(8);
    let same = chunks.all(|c| u64::from_ne_bytes(c.try_into().unwrap()) == word);
    (same && chunks.remainder().iter().all(|&b| b == first)).then_some(first)
}

/// Shuffles and compresses `data` block by block into `out` (sized by
/// `max_payload_len`); returns the payload length.
pub(crate) fn compress_into(codec: Codec, level: i32, element: usize, data: &[u8], out: &mut [u8]) -> Result<usize> {
    let block = block_size(codec, element);
    out[..4].copy_from_slice(&(block as u32).to_le_bytes());
    with_workspace(block.min(data.len()), |scratch, w| {
        let mut pos = 4;
        for piece in data.chunks(block) {
        let shuffled = &mut scratch[..piece.len()];
        shuffle::shuffle(element, piece, shuffled);
        let n = piece.len() / element;
        if n > 0 {
            for stream in shuffled[..n * element].chunks_exact(n) {
                let at = pos + 4;
                let word = if let Some(b) = run_of(stream) {
                    RUN | b as u32
                } else {
                    let room = raw::max_compressed_len(codec, n);
                    let c = compress_stream(codec, level, w, stream, &mut out[at..at + room])?;
                    if c < n {
                        c as u32
                    } else {
                        out[at..at + n].copy_from_slice(stream);
                        RAW | n as u32
                    }
                };
                out[pos..at].copy_from_slice(&word.to_le_bytes());
                pos = at + stored_len(word);
            }
        }
        let tail = &shuffled[n * element..];
        out[pos..pos + tail.len()].copy_from_slice(tail);
        pos += tail.len();
        }
        Ok(pos)
    })
}

/// Payload bytes that follow an entry's word.
fn stored_len(word: u32) -> usize {
    if word & RUN != 0 {
        0
    } else {
        (word & LEN) as usize
    }
}

/// One stream as the payload stores it.
enum Stream<'a> {
    Raw(&'a [u8]),
    Run(u8),
    Packed(&'a [u8]),
}

/// One block: where its bytes go in the output, its streams, its tail.
struct Block<'a> {
    at: usize,
    len: usize,
    streams: Vec<Stream<'a>>,
    tail: &'a [u8],
    /// Where its entries end in the payload.
    end: usize,
}

struct Reader<'a> {
    payload: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let b = self.payload.get(self.pos..self.pos + n).ok_or_else(|| Error::corrupt(format!("shuffled payload ends inside {what}")))?;
        self.pos += n;
        Ok(b)
    }
}

/// The blocks of a payload that decodes to `decoded_len` bytes, each entry
/// checked against the payload's bounds and the codec's largest ratio before
/// any output is allocated: a forged length or table is refused at no cost.
fn layout(codec: Codec, element: usize, payload: &[u8], decoded_len: usize) -> Result<Vec<Block<'_>>> {
    let mut r = Reader { payload, pos: 0 };
    let word = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap());
    let block = word(r.take(4, "its block size")?) as usize;
    if block == 0 || block % element != 0 || block > MAX_BLOCK {
        return Err(Error::corrupt(format!("block size {block} is impossible for {element}-byte elements")));
    }
    let count = decoded_len.div_ceil(block);
    // Every block of whole elements takes at least one 4-byte word per stream.
    if count.saturating_sub(1) > payload.len() / (4 * element) {
        return Err(Error::corrupt(format!("{decoded_len} bytes need {count} blocks, the payload holds fewer")));
    }
    let mut blocks = Vec::with_capacity(count);
    for i in 0..count {
        let at = i * block;
        let len = block.min(decoded_len - at);
        let n = len / element;
        let mut streams = Vec::with_capacity(if n > 0 { element } else { 0 });
        for j in 0..if n > 0 { element } else { 0 } {
            let w = word(r.take(4, "a stream's header")?);
            let bad = || Error::corrupt(format!("block {i} stream {j}: entry {w:#x} is impossible for {n} bytes"));
            streams.push(match (w & RAW != 0, w & RUN != 0) {
                (true, false) if (w & LEN) as usize == n => Stream::Raw(r.take(n, "a raw stream")?),
                (false, true) if w & LEN <= 0xff => Stream::Run(w as u8),
                (false, false) if w > 0 && (w as usize) < n && w as u64 * codec.max_expansion() >= n as u64 => {
                    Stream::Packed(r.take(w as usize, "a compressed stream")?)
                }
                _ => return Err(bad()),
            });
        }
        let tail = r.take(len - n * element, "the tail")?;
        blocks.push(Block { at, len, streams, tail, end: r.pos });
    }
    if r.pos != payload.len() {
        return Err(Error::corrupt("bytes after the last block"));
    }
    Ok(blocks)
}

/// Decodes a shuffled payload into exactly `decoded_len` bytes. With a
/// `hasher`, each block's payload bytes are fed to it just before they are
/// decoded, while in cache: the caller checks the sum before handing the
/// output on, and saves a pass over the payload.
pub(crate) fn decompress_to_vec(
    codec: Codec,
    element: usize,
    payload: &[u8],
    decoded_len: usize,
    hasher: Option<&mut dyn std::hash::Hasher>,
) -> Result<Vec<u8>> {
    let blocks = layout(codec, element, payload, decoded_len)?;
    let mut out = crate::pool::fresh(decoded_len);
    let scratch_len = blocks.iter().map(|b| b.len).max().unwrap_or(0);
    with_workspace(scratch_len, |scratch, w| decode_blocks(codec, element, payload, &blocks, scratch, w, &mut out, hasher))?;
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn decode_blocks(
    codec: Codec,
    element: usize,
    payload: &[u8],
    blocks: &[Block<'_>],
    scratch: &mut [u8],
    w: &mut Workspace,
    out: &mut [u8],
    mut hasher: Option<&mut dyn std::hash::Hasher>,
) -> Result<()> {
    let mut hashed = 0;
    let mut hash_to = |end: usize, hasher: &mut Option<&mut dyn std::hash::Hasher>| {
        if let Some(h) = hasher {
            h.write(&payload[hashed..end]);
        }
        hashed = end;
    };
    if blocks.is_empty() {
        hash_to(payload.len(), &mut hasher);
    }
    for b in blocks {
        hash_to(b.end, &mut hasher);
        let n = b.len / element;
        let whole = n * element;
        // Raw streams are read where they lie; the others are decoded into
        // their slot of the scratch block.
        let mut slots = scratch[..whole].chunks_exact_mut(n.max(1));
        let mut streams: [&[u8]; shuffle::MAX_ELEMENT] = [&[]; shuffle::MAX_ELEMENT];
        for (j, s) in b.streams.iter().enumerate() {
            let dst = slots.next().expect("one slot per stream");
            streams[j] = match s {
                Stream::Raw(bytes) => bytes,
                Stream::Run(v) => {
                    dst.fill(*v);
                    dst
                }
                Stream::Packed(bytes) => {
                    decompress_stream(codec, w, bytes, dst)?;
                    dst
                }
            };
        }
        let dst = &mut out[b.at..b.at + b.len];
        if n > 0 {
            shuffle::unshuffle_streams(&streams[..element], &mut dst[..whole]);
        }
        dst[whole..].copy_from_slice(b.tail);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::run_of;

    #[test]
    fn runs_are_found_only_where_every_byte_is_the_same() {
        assert_eq!(run_of(&[]), None);
        assert_eq!(run_of(&[7]), Some(7));
        assert_eq!(run_of(&[0; 1001]), Some(0));
        for at in [0, 5, 8, 999, 1000] {
            let mut v = vec![3u8; 1001];
            v[at] = 4;
            assert_eq!(run_of(&v), None, "{at}");
        }
    }
}
