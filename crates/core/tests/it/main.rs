//! The core's integration tests: the public API only, compiled into the
//! lib's own test binary (src/lib.rs) so the crate is built once for them.

mod common;

mod codec;
mod frame_fuzz;
mod frame_rejection;
mod generate;
mod reduce;
mod reduce_grouping;
mod shuffle_frames;
mod spill_adopt;
mod spill_assemble;
mod spill_buffer;
mod spill_cap;
mod spill_dir;
mod spill_failures;
mod spill_frame;
mod spill_shared;
