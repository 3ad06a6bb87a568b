//! napi-rs binding: `#[napi]` wrappers that convert types and call
//! `spillway_core`. Heavy work runs in `AsyncTask`s off the JS thread.

mod buffer;
mod chunk;
mod codec;
mod compressed;
mod error;
mod frame;
mod frame_shuffle;
mod heap;
mod rechunk;
mod shard;
mod shared;
mod signals;
mod spill;
mod text;
