//! Frames: a partition is a set of Arrow record batches, and the kernels over
//! them (read, expr, aggregate, ipc) are arrow-rs's where it has them. Plans
//! arrive as plain JSON data (built and hashed on the client), so the binding
//! only forwards bytes and strings; `plan` runs one task's worth of them.

mod agg_extra;
mod agg_fold;
mod agg_moments;
mod agg_values;
mod csv_encoding;
mod csv_bounds;
mod csv_rows;
mod canonical;
mod csv_types;
pub mod aggregate;
pub mod agg_shuffle;
pub mod broadcast;
pub mod expr;
mod expr_checked;
mod expr_fns;
mod expr_offset;
mod expr_str;
mod explode;
pub mod from_ipc;
pub mod grace;
pub mod ipc;
pub mod join;
pub mod partition;
pub mod plan;
pub mod read;
mod read_compressed;
pub mod read_ndjson;
pub mod read_parquet;
mod read_parquet_filter;
mod read_parquet_size;
pub mod read_parquet_files;
pub mod read_text;
pub mod shuffle;
pub mod sort;
mod sort_keys;
pub mod type_names;
mod whole;
mod wordcount;
pub mod types;
pub mod write;

use crate::Error;

/// Maps an arrow error to a coded one, saying what was being done.
pub(crate) fn frame_err<E: std::fmt::Display>(doing: &'static str) -> impl Fn(E) -> Error {
    move |e| Error::Frame { message: format!("{doing}: {e}") }
}

pub(crate) fn frame_error(message: impl Into<String>) -> Error {
    Error::Frame { message: message.into() }
}
