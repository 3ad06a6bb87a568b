//! Codec payloads without framing: each function writes into a caller-sized
//! buffer so that decoding can never allocate more than the frame declared.

use super::{lz4c, Codec};
use crate::pool::fresh;
use crate::error::{Error, Result};

fn codec_err(codec: Codec, message: impl ToString) -> Error {
    Error::Codec { codec: codec.name(), message: message.to_string() }
}

/// Upper bound of the compressed size of `len` input bytes.
pub(crate) fn max_compressed_len(codec: Codec, len: usize) -> usize {
    match codec {
        Codec::None => len,
        Codec::Lz4 => lz4c::max_compressed_len(len),
        Codec::Zstd => zstd::zstd_safe::compress_bound(len),
        Codec::Snappy => snap::raw::max_compress_len(len),
        // zlib-rs's compressBound(): its level-1 "quick" strategy writes
        // static-Huffman blocks that can grow random input by 1/8, far more
        // than classic zlib's bound allows.
        Codec::Zlib => len + ((len + 7) >> 3) + 64,
    }
}

/// Compresses `input` into `out` (sized by `max_compressed_len`) and returns
/// the payload length.
pub(crate) fn compress_into(codec: Codec, level: i32, input: &[u8], out: &mut [u8]) -> Result<usize> {
    match codec {
        Codec::None => {
            out[..input.len()].copy_from_slice(input);
            Ok(input.len())
        }
        Codec::Lz4 => lz4c::compress(input, out),
        Codec::Zstd => zstd::zstd_safe::compress(out, input, level).map_err(|code| {
            codec_err(codec, zstd::zstd_safe::get_error_name(code))
        }),
        Codec::Snappy => snap::raw::Encoder::new().compress(input, out).map_err(|e| codec_err(codec, e)),
        Codec::Zlib => {
            use flate2::{Compress, Compression, FlushCompress, Status};
            let mut z = Compress::new(Compression::new(level as u32), true);
            match z.compress(input, out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => Ok(z.total_out() as usize),
                Ok(status) => Err(codec_err(codec, format!("stream did not end ({status:?})"))),
                Err(e) => Err(codec_err(codec, e)),
            }
        }
    }
}

/// Output bytes allocated up front per payload byte. A frame declaring more
/// is believed only as far as its stream really decodes, so a forged length
/// costs no more memory than the data it actually holds.
const EAGER_RATIO: usize = 32;
const EAGER_MIN: usize = 1 << 20;

/// Decompresses `input`, which the frame says decodes to `decoded_len` bytes.
pub(crate) fn decompress_to_vec(codec: Codec, input: &[u8], decoded_len: usize) -> Result<Vec<u8>> {
    if codec == Codec::Snappy {
        // Snappy states its length up front: check it before allocating.
        let n = snap::raw::decompress_len(input).map_err(|e| Error::corrupt(format!("snappy: {e}")))?;
        if n != decoded_len {
            return Err(Error::corrupt(format!("snappy stream holds {n} bytes, frame declared {decoded_len}")));
        }
    }
    let eager = decoded_len.min(input.len().saturating_mul(EAGER_RATIO).max(EAGER_MIN));
    if eager == decoded_len {
        let mut out = fresh(decoded_len);
        decompress_into(codec, input, &mut out)?;
        return Ok(out);
    }
    match codec {
        Codec::Zstd => zstd_growing(input, decoded_len, eager),
        Codec::Zlib => zlib_growing(input, decoded_len, eager),
        Codec::Lz4 => {
            // An lz4 block cannot be resumed, so it is decoded once into the
            // eager buffer; only a stream that really overflows it earns the
            // full allocation (then at most 8x what it has proved to hold).
            let mut out = fresh(eager);
            lz4c::fills(input, &mut out)?;
            drop(out);
            let mut out = fresh(decoded_len);
            decompress_into(codec, input, &mut out)?;
            Ok(out)
        }
        // Snappy expands at most 64/3-fold, well inside the eager ratio.
        Codec::Snappy => Err(Error::corrupt(format!("{decoded_len} bytes is impossible for {} bytes of snappy", input.len()))),
        Codec::None => Err(Error::corrupt("raw payload length differs from the declared length")),
    }
}

/// Doubles `out` towards `limit` once the decoder has filled it.
fn grow(out: &mut Vec<u8>, limit: usize) {
    let next = out.len().saturating_mul(2).min(limit);
    out.resize(next, 0);
}

fn zstd_growing(input: &[u8], decoded_len: usize, eager: usize) -> Result<Vec<u8>> {
    use zstd::zstd_safe::{get_error_name, DCtx, InBuffer, OutBuffer};
    let corrupt = |code| Error::corrupt(format!("zstd: {}", get_error_name(code)));
    let mut dctx = DCtx::try_create().ok_or_else(|| codec_err(Codec::Zstd, "cannot allocate a decoder"))?;
    let mut out = fresh(eager);
    let mut src = InBuffer::around(input);
    let mut pos = 0;
    loop {
        let (in_before, out_before) = (src.pos(), pos);
        let mut dst = OutBuffer::around_pos(&mut out[..], pos);
        let hint = dctx.decompress_stream(&mut dst, &mut src).map_err(corrupt)?;
        pos = dst.pos();
        if hint == 0 {
            break;
        }
        if pos == out.len() && out.len() < decoded_len {
            grow(&mut out, decoded_len);
        } else if src.pos() == in_before && pos == out_before {
            return Err(Error::corrupt(if pos == decoded_len {
                "zstd stream is longer than declared"
            } else {
                "zstd stream is truncated"
            }));
        }
    }
    if src.pos() != input.len() {
        return Err(Error::corrupt("bytes after the end of the zstd stream"));
    }
    if pos != decoded_len {
        return Err(Error::corrupt(format!("decoded {pos} bytes, frame declared {decoded_len}")));
    }
    Ok(out)
}

fn zlib_growing(input: &[u8], decoded_len: usize, eager: usize) -> Result<Vec<u8>> {
    use flate2::{Decompress, FlushDecompress, Status};
    let mut z = Decompress::new(true);
    let mut out = fresh(eager);
    loop {
        let (in_before, out_before) = (z.total_in() as usize, z.total_out() as usize);
        let status = z
            .decompress(&input[in_before..], &mut out[out_before..], FlushDecompress::None)
            .map_err(|e| Error::corrupt(format!("zlib: {e}")))?;
        let (in_now, out_now) = (z.total_in() as usize, z.total_out() as usize);
        if status == Status::StreamEnd {
            if in_now != input.len() {
                return Err(Error::corrupt("bytes after the end of the zlib stream"));
            }
            if out_now != decoded_len {
                return Err(Error::corrupt(format!("decoded {out_now} bytes, frame declared {decoded_len}")));
            }
            return Ok(out);
        }
        if out_now == out.len() && out.len() < decoded_len {
            grow(&mut out, decoded_len);
        } else if in_now == in_before && out_now == out_before {
            return Err(Error::corrupt("zlib stream is truncated or longer than declared"));
        }
    }
}

/// Decompresses `input` into `out`, which must come out exactly full.
pub(crate) fn decompress_into(codec: Codec, input: &[u8], out: &mut [u8]) -> Result<()> {
    let expected = out.len();
    let written = match codec {
        Codec::None => {
            if input.len() != expected {
                return Err(Error::corrupt("raw payload length differs from the declared length"));
            }
            out.copy_from_slice(input);
            expected
        }
        Codec::Lz4 => {
            lz4c::decompress(input, out)?;
            expected
        }
        Codec::Zstd => zstd::zstd_safe::decompress(out, input)
            .map_err(|code| Error::corrupt(format!("zstd: {}", zstd::zstd_safe::get_error_name(code))))?,
        Codec::Snappy => {
            let n = snap::raw::decompress_len(input).map_err(|e| Error::corrupt(format!("snappy: {e}")))?;
            if n != expected {
                return Err(Error::corrupt("snappy payload length differs from the declared length"));
            }
            snap::raw::Decoder::new().decompress(input, out).map_err(|e| Error::corrupt(format!("snappy: {e}")))?
        }
        Codec::Zlib => {
            use flate2::{Decompress, FlushDecompress, Status};
            let mut z = Decompress::new(true);
            match z.decompress(input, out, FlushDecompress::Finish) {
                Ok(Status::StreamEnd) if z.total_in() as usize == input.len() => z.total_out() as usize,
                Ok(_) => return Err(Error::corrupt("zlib stream is truncated or longer than declared")),
                Err(e) => return Err(Error::corrupt(format!("zlib: {e}"))),
            }
        }
    };
    if written != expected {
        return Err(Error::corrupt(format!("decoded {written} bytes, frame declared {expected}")));
    }
    Ok(())
}
