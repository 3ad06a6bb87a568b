//! Counter-based generation: element `i` of a chunk is a pure function of
//! (seed, chunk id, i), so any worker can regenerate any chunk bit for bit,
//! in any order, on any number of threads.

use std::mem::MaybeUninit;

use super::simd::dispatch;
use crate::error::{Error, Result};

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline(always)]
fn mix64(mut z: u64) -> u64 {
    // SplitMix64's finalizer (Stafford's Mix13): passes BigCrush as a
    // counter-based generator.
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream key of one chunk. Mixing twice keeps neighbouring chunk ids of
/// one seed from starting neighbouring streams.
pub fn chunk_key(seed: u64, chunk_id: u64) -> u64 {
    mix64(mix64(seed ^ 0x5350_5759) ^ mix64(chunk_id.wrapping_add(GAMMA)))
}

/// The generator for one chunk: `at(i)` is its i-th 64-bit output.
#[derive(Clone, Copy, Debug)]
pub struct Generator {
    key: u64,
}

impl Generator {
    pub fn new(seed: u64, chunk_id: u64) -> Self {
        Generator { key: chunk_key(seed, chunk_id) }
    }

    #[inline(always)]
    pub fn at(&self, i: u64) -> u64 {
        mix64(self.key.wrapping_add(i.wrapping_add(1).wrapping_mul(GAMMA)))
    }

    #[inline(always)]
    pub fn uniform(&self, i: u64) -> f64 {
        (self.at(i) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A chunk of `len` 8-byte values written by `fill`, which must write every
/// cell: nothing is zeroed first (a whole extra pass over a fresh chunk).
fn generated(len: usize, fill: impl FnOnce(&mut [MaybeUninit<[u8; 8]>])) -> Result<Vec<u8>> {
    let n = len
        .checked_mul(8)
        .ok_or_else(|| Error::invalid("len", format!("{len} elements overflow the address space")))?;
    let mut out = crate::pool::take_empty(n);
    // SAFETY: take_empty gives capacity for n bytes; [u8; 8] has alignment 1,
    // and MaybeUninit cells may hold anything.
    let cells = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<MaybeUninit<[u8; 8]>>(), len) };
    fill(cells);
    // SAFETY: every kernel writes each of its `len` cells.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// `u as f64` for u < 2^53, in operations that vectorise without AVX-512
/// (which alone converts 64-bit integers): 2^52 + v is exact in the mantissa
/// for v < 2^52, so the top 52 bits and the last bit convert separately.
#[inline(always)]
fn u53_to_f64(u: u64) -> f64 {
    const TWO52: u64 = 0x4330_0000_0000_0000;
    let two52 = f64::from_bits(TWO52);
    let h = f64::from_bits((u >> 1) | TWO52) - two52;
    let b = f64::from_bits((u & 1) | TWO52) - two52;
    h * 2.0 + b
}

#[inline(always)]
fn random_body(key: u64, out: &mut [MaybeUninit<[u8; 8]>]) {
    // key + (i + 1)·GAMMA as a running sum: one multiply fewer per value,
    // which matters where 64-bit vector multiplies are emulated (AVX2).
    let mut s = key;
    for cell in out.iter_mut() {
        s = s.wrapping_add(GAMMA);
        let z = mix64(s);
        cell.write((u53_to_f64(z >> 11) * (1.0 / (1u64 << 53) as f64)).to_le_bytes());
    }
}

dispatch!(fn fill_random(key: u64, out: &mut [MaybeUninit<[u8; 8]>]) -> () => random_body);

/// Lemire's multiply-shift for a range below 2^32, from 32-bit products
/// (which SIMD units have): floor(z * range / 2^64), exactly as in u128.
#[inline(always)]
fn randint_narrow_body(key: u64, low: i64, range: u64, out: &mut [MaybeUninit<[u8; 8]>]) {
    let r = range & 0xFFFF_FFFF;
    let mut s = key;
    for cell in out.iter_mut() {
        s = s.wrapping_add(GAMMA);
        let z = mix64(s);
        let (a, b) = (z >> 32, z & 0xFFFF_FFFF);
        let hi = (a * r + ((b * r) >> 32)) >> 32;
        cell.write(low.wrapping_add(hi as i64).to_le_bytes());
    }
}

dispatch!(fn fill_randint_narrow(key: u64, low: i64, range: u64, out: &mut [MaybeUninit<[u8; 8]>]) -> () => randint_narrow_body);

#[inline(always)]
fn randint_wide_body(key: u64, low: i64, range: u128, out: &mut [MaybeUninit<[u8; 8]>]) {
    let mut s = key;
    for cell in out.iter_mut() {
        s = s.wrapping_add(GAMMA);
        let z = mix64(s);
        cell.write(low.wrapping_add(((z as u128 * range) >> 64) as i64).to_le_bytes());
    }
}

dispatch!(fn fill_randint_wide(key: u64, low: i64, range: u128, out: &mut [MaybeUninit<[u8; 8]>]) -> () => randint_wide_body);

/// `len` float64 values uniform in [0, 1), little-endian: element i is
/// `Generator::new(seed, chunk_id).uniform(i)`.
pub fn random_chunk(seed: u64, chunk_id: u64, len: usize) -> Result<Vec<u8>> {
    let g = Generator::new(seed, chunk_id);
    generated(len, |cells| fill_random(g.key, cells))
}

/// `len` int64 values uniform in [low, high), little-endian, as numpy's
/// `randint`. Lemire's multiply-shift maps 64 random bits onto the range; its
/// bias is below range / 2^64.
pub fn randint_chunk(seed: u64, chunk_id: u64, len: usize, low: i64, high: i64) -> Result<Vec<u8>> {
    if high <= low {
        return Err(Error::invalid("high", format!("high ({high}) must be greater than low ({low})")));
    }
    let range = (high as i128 - low as i128) as u128;
    let g = Generator::new(seed, chunk_id);
    generated(len, |cells| {
        if range < 1 << 32 {
            fill_randint_narrow(g.key, low, range as u64, cells);
        } else {
            fill_randint_wide(g.key, low, range, cells);
        }
    })
}

/// What a chunk task generates: the recipe's two array constructors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChunkSpec {
    Random { seed: u64, chunk_id: u64, len: usize },
    Randint { seed: u64, chunk_id: u64, len: usize, low: i64, high: i64 },
}

impl ChunkSpec {
    /// Bytes of the generated chunk (8 per value), saturating on overflow.
    pub fn byte_len(&self) -> usize {
        match *self {
            ChunkSpec::Random { len, .. } | ChunkSpec::Randint { len, .. } => len.saturating_mul(8),
        }
    }

    pub fn generate(&self) -> Result<Vec<u8>> {
        match *self {
            ChunkSpec::Random { seed, chunk_id, len } => random_chunk(seed, chunk_id, len),
            ChunkSpec::Randint { seed, chunk_id, len, low, high } => randint_chunk(seed, chunk_id, len, low, high),
        }
    }
}
