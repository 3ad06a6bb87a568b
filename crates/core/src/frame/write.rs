//! A partition written to one file (Parquet, CSV, NDJSON or Arrow IPC) as
//! DuckDB, Polars and pyarrow read them: first under a temporary name beside
//! the target (owner-only, as the rest of spillway's files), then renamed
//! over it, so a failed or repeated task never leaves half a file.

use std::fs::{self, File, OpenOptions};
use std::io::BufWriter;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use arrow_array::RecordBatch;
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde::Deserialize;

use super::{frame_error, ipc, types};
use crate::{Error, Result};

#[derive(Debug, Deserialize)]
#[serde(tag = "format", rename_all = "camelCase")]
pub enum Format {
    Parquet { compression: String },
    Csv,
    Ndjson,
    Ipc,
}

#[derive(Debug, Deserialize)]
pub struct WritePlan {
    pub path: PathBuf,
    #[serde(flatten)]
    pub format: Format,
}

fn write_err(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::FrameWrite { path: path.to_path_buf(), message: message.to_string() }
}

fn codec(name: &str) -> Result<Compression> {
    Ok(match name {
        "none" => Compression::UNCOMPRESSED,
        "snappy" => Compression::SNAPPY,
        "gzip" => Compression::GZIP(GzipLevel::default()),
        "lz4" => Compression::LZ4_RAW,
        "zstd" => Compression::ZSTD(ZstdLevel::default()),
        "brotli" => Compression::BROTLI(BrotliLevel::default()),
        _ => return Err(Error::invalid("compression", format!("{name:?} is not one of none, snappy, gzip, lz4, zstd, brotli"))),
    })
}

/// CSV holds flat values only: a nested column is refused up front, by name.
fn check_flat(schema: &SchemaRef, path: &Path) -> Result<()> {
    match schema.fields().iter().find(|f| matches!(f.data_type(), DataType::List(_) | DataType::Struct(_) | DataType::Binary | DataType::FixedSizeBinary(_))) {
        Some(f) => Err(write_err(path, format!("CSV cannot hold column {:?} of type {}: select it away, or write Parquet or NDJSON", f.name(), types::type_name(f.data_type()).unwrap_or_else(|_| f.data_type().to_string())))),
        None => Ok(()),
    }
}

fn encode(format: &Format, file: File, path: &Path, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<()> {
    let w = BufWriter::with_capacity(1 << 20, file);
    let err = |e: &dyn std::fmt::Display| write_err(path, e);
    let file = match format {
        Format::Parquet { compression } => {
            let props = WriterProperties::builder().set_compression(codec(compression)?).build();
            let mut pw = ArrowWriter::try_new(w, schema.clone(), Some(props)).map_err(|e| err(&e))?;
            for b in batches {
                pw.write(b).map_err(|e| err(&e))?;
            }
            pw.into_inner().map_err(|e| err(&e))?
        }
        Format::Csv => {
            check_flat(schema, path)?;
            let mut cw = arrow_csv::WriterBuilder::new().with_header(true).build(w);
            if batches.is_empty() {
                // A header even with no rows: the file still says its columns.
                cw.write(&RecordBatch::new_empty(schema.clone())).map_err(|e| err(&e))?;
            }
            for b in batches {
                cw.write(b).map_err(|e| err(&e))?;
            }
            cw.into_inner()
        }
        Format::Ndjson => {
            let mut jw = arrow_json::LineDelimitedWriter::new(w);
            for b in batches {
                jw.write(b).map_err(|e| err(&e))?;
            }
            jw.finish().map_err(|e| err(&e))?;
            jw.into_inner()
        }
        Format::Ipc => {
            let mut fw = arrow_ipc::writer::FileWriter::try_new(w, schema).map_err(|e| err(&e))?;
            for b in batches {
                fw.write(b).map_err(|e| err(&e))?;
            }
            fw.finish().map_err(|e| err(&e))?;
            fw.into_inner().map_err(|e| err(&e))?
        }
    };
    file.into_inner().map_err(|e| err(&e.error()))?.sync_all().map_err(|e| err(&e))
}

/// A temporary name beside `path`, unique to this process and moment.
fn temp_name(path: &Path) -> PathBuf {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let name = path.file_name().map_or_else(|| "part".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}-{nanos:x}.tmp", std::process::id()))
}

/// Writes the partition (its IPC stream) as the plan says; returns the path written.
pub fn write_partition(plan_json: &str, input: &[&[u8]]) -> Result<String> {
    let plan: WritePlan = serde_json::from_str(plan_json).map_err(|e| frame_error(format!("a frame write plan that is not one: {e}")))?;
    let path = &plan.path;
    let [bytes] = input else { return Err(frame_error(format!("a frame write of {} inputs, not one", input.len()))) };
    let (schema, batches) = ipc::decode(bytes)?;
    if let Some(dir) = path.parent() {
        fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| write_err(path, format!("creating its directory: {e}")))?;
    }
    let tmp = temp_name(path);
    let result = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| write_err(path, e))
        .and_then(|f| encode(&plan.format, f, path, &schema, &batches))
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| write_err(path, e)));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| path.to_string_lossy().into_owned())
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
