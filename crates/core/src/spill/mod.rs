//! The SpillBuffer: a memory tier of recently used chunks over a disk tier of
//! compressed files, in the manner of zict's `Buffer(fast, slow)`.

mod backoff;
mod buffer;
mod disk;
mod lru;
mod metrics;

pub use buffer::{PieceBytes, SpillBuffer, SpillConfig, StoredBytes};
pub use disk::DiskStore;
pub use metrics::SpillMetrics;
