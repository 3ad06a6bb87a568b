//! Counter-based generation: element `i` of a chunk is a pure function of
//! (seed, chunk id, i), so any worker can regenerate any chunk bit for bit,
//! in any order, on any number of threads.

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

fn alloc(len: usize) -> Result<Vec<u8>> {
    len.checked_mul(8)
        .map(|n| vec![0u8; n])
        .ok_or_else(|| Error::invalid("len", format!("{len} elements overflow the address space")))
}

/// `len` float64 values uniform in [0, 1), little-endian.
pub fn random_chunk(seed: u64, chunk_id: u64, len: usize) -> Result<Vec<u8>> {
    let g = Generator::new(seed, chunk_id);
    let mut out = alloc(len)?;
    for (i, cell) in out.chunks_exact_mut(8).enumerate() {
        cell.copy_from_slice(&g.uniform(i as u64).to_le_bytes());
    }
    Ok(out)
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
    let mut out = alloc(len)?;
    for (i, cell) in out.chunks_exact_mut(8).enumerate() {
        let v = low.wrapping_add(((g.at(i as u64) as u128 * range) >> 64) as i64);
        cell.copy_from_slice(&v.to_le_bytes());
    }
    Ok(out)
}

/// What a chunk task generates: the recipe's two array constructors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChunkSpec {
    Random { seed: u64, chunk_id: u64, len: usize },
    Randint { seed: u64, chunk_id: u64, len: usize, low: i64, high: i64 },
}

impl ChunkSpec {
    pub fn generate(&self) -> Result<Vec<u8>> {
        match *self {
            ChunkSpec::Random { seed, chunk_id, len } => random_chunk(seed, chunk_id, len),
            ChunkSpec::Randint { seed, chunk_id, len, low, high } => randint_chunk(seed, chunk_id, len, low, high),
        }
    }
}
