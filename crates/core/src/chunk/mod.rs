//! Chunks: reproducible generation and associative reductions.

mod generate;
pub mod rechunk;
pub(crate) mod simd;
mod reduce;
mod sum;

pub use generate::{chunk_key, random_chunk, randint_chunk, ChunkSpec, Generator};
pub use reduce::{partial, Dtype, Op, Partial};
pub use simd::simd_level;
