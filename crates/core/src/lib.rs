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
pub mod spill;
pub mod text;

pub use error::{Error, Result};
