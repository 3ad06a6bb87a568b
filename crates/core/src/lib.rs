//! spillway's native core: codec frames, reproducible chunks, associative
//! reductions and the SpillBuffer. It knows nothing of Node; the napi binding
//! in `crates/node` only converts types and forwards.

pub mod chunk;
pub mod codec;
pub mod error;
pub mod frame;
pub mod pool;
pub mod spill;

pub use error::{Error, Result};
