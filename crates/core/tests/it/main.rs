//! The core's integration tests as one binary: one link (and one LTO pass)
//! instead of one per file, which was most of `cargo test`'s build time.

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
