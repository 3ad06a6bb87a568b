//! LZ4's own C library (lz4-sys) for every LZ4 block spillway writes or
//! reads, plain or shuffled. Against lz4_flex on bench/core's 32 MB buffers
//! (examples/codec_kernels.rs, BENCHMARKS.md 2026-12-06) it is as fast on
//! incompressible float64 and 4-7% faster both ways on small integers, and
//! on the short low-entropy streams of shuffled frames it decodes about
//! twice as fast (BENCHMARKS.md, 2026-12-05). The C API counts in `int`, so
//! a block past `MAX_INPUT` (LZ4_MAX_INPUT_SIZE, just under 2 GiB) is left
//! to lz4_flex, which writes and reads the same block format.

use std::os::raw::{c_char, c_int};

use crate::error::{Error, Result};

/// LZ4_MAX_INPUT_SIZE from lz4.h.
pub(crate) const MAX_INPUT: usize = 0x7E00_0000;

extern "C" {
    // In lz4-sys's liblz4 (lz4.c) but not in its bindings.
    fn LZ4_decompress_safe_partial(src: *const c_char, dst: *mut c_char, src_size: c_int, target_output_size: c_int, dst_capacity: c_int) -> c_int;
}

fn fits(input: &[u8], out: &[u8]) -> bool {
    input.len() <= MAX_INPUT && out.len() <= MAX_INPUT
}

/// The most bytes `compress` writes for `len` input bytes.
pub(crate) fn max_compressed_len(len: usize) -> usize {
    if len <= MAX_INPUT {
        // LZ4_COMPRESSBOUND: a tenth less room than lz4_flex asks for.
        len + len / 255 + 16
    } else {
        lz4_flex::block::get_maximum_output_size(len)
    }
}

/// Compresses `input` into `out` (at least `max_compressed_len` long).
pub(crate) fn compress(input: &[u8], out: &mut [u8]) -> Result<usize> {
    if input.len() > MAX_INPUT {
        return lz4_flex::block::compress_into(input, out).map_err(|e| Error::Codec { codec: "lz4", message: e.to_string() });
    }
    // The bound of MAX_INPUT bytes still fits in c_int; a larger `out` is
    // room LZ4 never needs.
    let cap = out.len().min(c_int::MAX as usize) as c_int;
    // SAFETY: the pointers are valid for the lengths passed (`cap` at most
    // out.len()); LZ4 writes at most `cap` bytes into `out`.
    let n = unsafe { lz4_sys::LZ4_compress_default(input.as_ptr().cast(), out.as_mut_ptr().cast(), input.len() as c_int, cap) };
    if n <= 0 {
        return Err(Error::Codec { codec: "lz4", message: format!("compressing {} bytes failed", input.len()) });
    }
    Ok(n as usize)
}

/// Decodes `input` into all of `out`; LZ4_decompress_safe never reads or
/// writes outside the buffers, whatever the input.
pub(crate) fn decompress(input: &[u8], out: &mut [u8]) -> Result<()> {
    let n = if fits(input, out) {
        // SAFETY: as above; the lengths are the buffers' own.
        let n = unsafe { lz4_sys::LZ4_decompress_safe(input.as_ptr().cast(), out.as_mut_ptr().cast(), input.len() as c_int, out.len() as c_int) };
        if n < 0 {
            return Err(Error::corrupt(format!("lz4: malformed block ({n})")));
        }
        n as usize
    } else {
        lz4_flex::block::decompress_into(input, out).map_err(|e| Error::corrupt(format!("lz4: {e}")))?
    };
    if n != out.len() {
        return Err(Error::corrupt(format!("lz4 stream decoded to {n} bytes, not {}", out.len())));
    }
    Ok(())
}

/// Decodes the first `out.len()` bytes of `input`, proving the block holds
/// at least that many: a frame declaring more than it has proved to hold is
/// believed (and its whole output allocated) only once this says yes.
/// Errors when the block ends, or is malformed, before filling `out`.
pub(crate) fn fills(input: &[u8], out: &mut [u8]) -> Result<()> {
    if !fits(input, out) {
        return match lz4_flex::block::decompress_into(input, out) {
            Ok(n) => Err(Error::corrupt(format!("lz4 stream decoded to {n} bytes, more were declared"))),
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) => Ok(()),
            Err(e) => Err(Error::corrupt(format!("lz4: {e}"))),
        };
    }
    let cap = out.len() as c_int;
    // SAFETY: as above; LZ4 stops at `cap` output bytes.
    let n = unsafe { LZ4_decompress_safe_partial(input.as_ptr().cast(), out.as_mut_ptr().cast(), input.len() as c_int, cap, cap) };
    if n < 0 {
        return Err(Error::corrupt(format!("lz4: malformed block ({n})")));
    }
    if (n as usize) < out.len() {
        return Err(Error::corrupt(format!("lz4 stream decoded to {n} bytes, more were declared")));
    }
    Ok(())
}
