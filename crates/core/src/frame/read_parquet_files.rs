//! One partition over the row groups of several Parquet files (the client
//! coalesces small files and row groups into partitions of about its
//! blocksize, as Dask's `split_row_groups='adaptive'` with `aggregate_files`):
//! a task per small file costs more in scheduling than its read.

use std::path::PathBuf;

use arrow_schema::SchemaRef;
use serde::Deserialize;

use super::expr::Expr;
use super::read_parquet::{scan_parquet, Scanned};
use crate::{Error, Result};

/// Some row groups of one file of a partition.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParquetPiece {
    pub path: PathBuf,
    pub row_groups: Vec<usize>,
}

/// The batches of `pieces` in order, each read as `scan_parquet` reads one.
/// Whether the filter goes into the reader depends only on the predicate and
/// the frame's columns, which every file of the frame has: the pieces agree.
pub fn scan_files(pieces: &[&ParquetPiece], schema: &SchemaRef, filter: Option<&Expr>, after: Option<&[String]>) -> Result<Scanned> {
    let mut out: Option<Scanned> = None;
    for p in pieces {
        let s = scan_parquet(&p.path, &p.row_groups, schema, filter, true, after)?;
        match out.as_mut() {
            None => out = Some(s),
            Some(o) if s.filtered == o.filtered && s.schema == o.schema => o.batches.extend(s.batches),
            Some(_) => return Err(Error::FrameRead { path: p.path.clone(), message: "its columns read differently from the first file of its partition: it changed since the frame was planned".into() }),
        }
    }
    Ok(out.unwrap_or_else(|| Scanned { schema: schema.clone(), batches: Vec::new(), filtered: false }))
}
