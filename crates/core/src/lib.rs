//! spillway's native core: codec frames, reproducible chunks, associative
//! reductions, the SpillBuffer and the text readers' batched file reads and
//! line index. It knows nothing of Node; the napi binding in `crates/node`
//! only converts types and forwards.

pub mod chunk;
pub mod codec;
pub mod error;
pub mod frame;
pub mod heap;
pub mod orphan;
pub mod pool;
pub mod shard;
pub mod signals;
pub mod spill;
pub mod text;

pub use error::{Error, Result};

// The integration tests (tests/it, the public API only, under this crate's
// own name) run in the lib's test binary: the crate is built once for
// `cargo test`, not twice (the lib for them, then the lib's own tests), which
// was a minute of the cargo lane.
#[cfg(test)]
extern crate self as spillway_core;
#[cfg(test)]
#[path = "../tests/it/main.rs"]
mod it;
