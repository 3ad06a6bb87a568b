//! Blosc's byte shuffle: the bytes of `n` values of `size` bytes each are
//! regrouped so that byte 0 of every value comes first, then byte 1, and so
//! on. The slowly varying high bytes of numbers (sign, exponent, top of the
//! mantissa) then sit together, where lz4 and zstd find their repeats. Bytes
//! past the last whole value are copied as they are.
//!
//! Written here rather than taken from a crate: no maintained crate offers a
//! vectorised shuffle without also bringing a C build (c-blosc2), and the
//! transposes are small. The AVX2 kernels cover sizes 2, 4 and 8 (16-, 32-
//! and 64-bit values, nearly all numeric data); every other size, and every
//! other CPU, takes the portable loop, which gives the same bytes.

#[cfg(target_arch = "x86_64")]
use crate::chunk::simd::{level, Level};

/// The element sizes a frame may record.
pub const MAX_ELEMENT: usize = 8;

/// Writes `src` shuffled for `size`-byte elements into `dst` (same length).
pub fn shuffle(size: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len(), "shuffle needs equal lengths");
    assert!(
        (1..=MAX_ELEMENT).contains(&size),
        "element size {size} out of 1..={MAX_ELEMENT}"
    );
    let n = src.len() / size;
    let done = vector_shuffle(size, src, dst, n);
    scalar_shuffle(size, src, dst, n, done);
    dst[n * size..].copy_from_slice(&src[n * size..]);
}

/// The inverse of `shuffle`.
pub fn unshuffle(size: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len(), "unshuffle needs equal lengths");
    assert!((1..=MAX_ELEMENT).contains(&size), "element size {size} out of 1..={MAX_ELEMENT}");
    let n = src.len() / size;
    let mut streams = [&src[..0]; MAX_ELEMENT];
    for (j, s) in streams.iter_mut().take(size).enumerate() {
        *s = &src[j * n..(j + 1) * n];
    }
    unshuffle_streams(&streams[..size], &mut dst[..n * size]);
    dst[n * size..].copy_from_slice(&src[n * size..]);
}

/// Interleaves `streams` (byte j of every element in stream j, all of one
/// length) into `dst`: `unshuffle` with the streams wherever they lie, so a
/// decoder hands over stored streams without first copying them together.
pub fn unshuffle_streams(streams: &[&[u8]], dst: &mut [u8]) {
    let size = streams.len();
    assert!((1..=MAX_ELEMENT).contains(&size), "element size {size} out of 1..={MAX_ELEMENT}");
    let n = dst.len() / size;
    assert!(dst.len() == n * size && streams.iter().all(|s| s.len() == n), "streams and output disagree");
    let done = vector_unshuffle(streams, dst, n);
    scalar_unshuffle(streams, dst, n, done);
}

/// Elements `from..n`, one byte at a time.
fn scalar_shuffle(size: usize, src: &[u8], dst: &mut [u8], n: usize, from: usize) {
    for j in 0..size {
        let stream = &mut dst[j * n..(j + 1) * n];
        for (i, out) in stream.iter_mut().enumerate().skip(from) {
            *out = src[i * size + j];
        }
    }
}

fn scalar_unshuffle(streams: &[&[u8]], dst: &mut [u8], n: usize, from: usize) {
    let size = streams.len();
    for (j, stream) in streams.iter().enumerate() {
        for (i, b) in stream[..n].iter().enumerate().skip(from) {
            dst[i * size + j] = *b;
        }
    }
}

/// How many leading elements the vector kernel handled (a multiple of 32).
fn vector_shuffle(size: usize, src: &[u8], dst: &mut [u8], n: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if level() != Level::Base && matches!(size, 2 | 4 | 8) {
        // SAFETY: the CPU has AVX2 (level() checked it); the kernel reads
        // and writes only inside the first n elements of src and dst.
        return unsafe { avx2::shuffle(size, src, dst, n) };
    }
    if size == 8 {
        return swar::shuffle8(src, dst, n);
    }
    0
}

fn vector_unshuffle(streams: &[&[u8]], dst: &mut [u8], n: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if level() != Level::Base && matches!(streams.len(), 2 | 4 | 8) {
        // SAFETY: as in vector_shuffle; every stream holds n bytes.
        return unsafe { avx2::unshuffle(streams, dst, n) };
    }
    if let [s0, s1, s2, s3, s4, s5, s6, s7] = streams {
        return swar::unshuffle8(&[s0, s1, s2, s3, s4, s5, s6, s7], dst, n);
    }
    0
}

/// The portable path for 8-byte values (float64, int64), on every CPU
/// without the AVX2 kernels (aarch64 among them): eight values are an 8 × 8
/// byte matrix in eight u64, transposed by three rounds of masked swaps,
/// several times faster than moving one byte at a time.
mod swar {
    /// Transposes the 8 × 8 byte matrix whose row i is `r[i]` (byte j of a
    /// row is bits 8j..8j+8); its own inverse.
    #[inline(always)]
    fn transpose(r: &mut [u64; 8]) {
        for (shift, mask, step) in [(8, 0x00ff_00ff_00ff_00ff_u64, 1), (16, 0x0000_ffff_0000_ffff, 2), (32, 0x0000_0000_ffff_ffff, 4)] {
            for i in 0..8 {
                if i & step == 0 {
                    let t = ((r[i] >> shift) ^ r[i + step]) & mask;
                    r[i + step] ^= t;
                    r[i] ^= t << shift;
                }
            }
        }
    }

    fn word(b: &[u8]) -> u64 {
        u64::from_le_bytes(b.try_into().expect("8 bytes"))
    }

    /// Every whole group of 8 values: row i of the group's matrix from
    /// `read(i, first)`, transposed, row j handed to `write(j, first, row)`.
    /// Returns how many values that covered.
    fn each_group(n: usize, read: impl Fn(usize, usize) -> u64, mut write: impl FnMut(usize, usize, u64)) -> usize {
        let groups = n / 8;
        for e in (0..groups * 8).step_by(8) {
            let mut r = [0u64; 8];
            for (i, w) in r.iter_mut().enumerate() {
                *w = read(i, e);
            }
            transpose(&mut r);
            for (j, w) in r.into_iter().enumerate() {
                write(j, e, w);
            }
        }
        groups * 8
    }

    pub(super) fn shuffle8(src: &[u8], dst: &mut [u8], n: usize) -> usize {
        each_group(n, |k, e| word(&src[(e + k) * 8..(e + k + 1) * 8]), |j, e, w| dst[j * n + e..j * n + e + 8].copy_from_slice(&w.to_le_bytes()))
    }

    pub(super) fn unshuffle8(streams: &[&[u8]; 8], dst: &mut [u8], n: usize) -> usize {
        each_group(n, |j, e| word(&streams[j][e..e + 8]), |k, e, w| dst[(e + k) * 8..(e + k + 1) * 8].copy_from_slice(&w.to_le_bytes()))
    }
}

/// The AVX2 kernels for 2-, 4- and 8-byte elements (shuffle/avx2.rs).
#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(size: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / size;
        let mut out = src.to_vec();
        for i in 0..n {
            for j in 0..size {
                out[j * n + i] = src[i * size + j];
            }
        }
        out
    }

    fn bytes(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i.wrapping_mul(2654435761) >> 7) as u8)
            .collect()
    }

    #[test]
    fn every_size_and_length_matches_the_definition_and_inverts() {
        for size in 1..=MAX_ELEMENT {
            for len in (0..300).chain([1023, 1024, 1025, 4096 + 7, 65_536 + 3]) {
                let src = bytes(len);
                let mut shuffled = vec![0; len];
                shuffle(size, &src, &mut shuffled);
                assert_eq!(shuffled, reference(size, &src), "size {size} len {len}");
                let mut back = vec![0; len];
                unshuffle(size, &shuffled, &mut back);
                assert_eq!(back, src, "size {size} len {len}");
            }
        }
    }

    #[test]
    fn the_portable_path_for_8_byte_values_agrees_with_the_loop() {
        for len in [0, 8, 63, 64, 65, 8 * 1000 + 5] {
            let src = bytes(len);
            let n = len / 8;
            let mut fast = vec![0; len];
            let done = swar::shuffle8(&src, &mut fast, n);
            assert_eq!(done, n - n % 8);
            scalar_shuffle(8, &src, &mut fast, n, done);
            assert_eq!(fast[..n * 8], reference(8, &src)[..n * 8], "len {len}");
            let streams: Vec<&[u8]> = (0..8).map(|j| &fast[j * n..(j + 1) * n]).collect();
            let mut back = vec![0; len];
            let done = swar::unshuffle8(&[streams[0], streams[1], streams[2], streams[3], streams[4], streams[5], streams[6], streams[7]], &mut back, n);
            scalar_unshuffle(&streams, &mut back, n, done);
            assert_eq!(back[..n * 8], src[..n * 8], "len {len}");
        }
    }

    #[test]
    fn the_vector_kernels_agree_with_the_loop() {
        for size in [2, 4, 8] {
            for len in [0, 31 * size, 32 * size, 64 * size + 5, 1000 * size + 3] {
                let src = bytes(len);
                let n = len / size;
                let mut fast = vec![0; len];
                let done = vector_shuffle(size, &src, &mut fast, n);
                scalar_shuffle(size, &src, &mut fast, n, done);
                let mut slow = vec![0; len];
                scalar_shuffle(size, &src, &mut slow, n, 0);
                assert_eq!(fast[..n * size], slow[..n * size], "size {size} len {len}");
                let mut back = vec![0; len];
                if n > 0 {
                    let streams: Vec<&[u8]> = fast[..n * size].chunks_exact(n).collect();
                    let done = vector_unshuffle(&streams, &mut back, n);
                    scalar_unshuffle(&streams, &mut back, n, done);
                }
                assert_eq!(back[..n * size], src[..n * size]);
            }
        }
    }
}
