//! CSV into record batches: the schema inferred from a sample of every file
//! and unified across them (on the client, so a frame's schema is known
//! before anything runs), then each block of a file read with that schema on
//! a worker. A block owns the lines that begin inside it, as the bags' text
//! blocks do, so blocks of one file can be read anywhere in any order.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_csv::reader::Format;
use arrow_csv::ReaderBuilder;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use regex::Regex;
use serde::Deserialize;

use crate::{Error, Result};

pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";
/// Rows per record batch: large enough that per-batch costs vanish, small
/// enough that a batch stays in cache-friendly pieces.
pub const BATCH_ROWS: usize = 64 * 1024;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsvOptions {
    pub delimiter: String,
    pub quote: String,
    pub null_values: Vec<String>,
    pub header: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions { delimiter: ",".into(), quote: "\"".into(), null_values: vec![String::new()], header: true }
    }
}

fn one_byte(field: &'static str, s: &str) -> Result<u8> {
    match s.as_bytes() {
        [b] => Ok(*b),
        _ => Err(Error::invalid(field, format!("{s:?} is not one ASCII character"))),
    }
}

impl CsvOptions {
    fn null_regex(&self) -> Result<Regex> {
        let alts: Vec<String> = self.null_values.iter().map(|v| regex::escape(v)).collect();
        Regex::new(&format!("^(?:{})$", alts.join("|"))).map_err(|e| Error::invalid("nullValues", e.to_string()))
    }

    fn format(&self) -> Result<Format> {
        Ok(Format::default()
            .with_header(self.header)
            .with_delimiter(one_byte("delimiter", &self.delimiter)?)
            .with_quote(one_byte("quote", &self.quote)?)
            .with_null_regex(self.null_regex()?))
    }
}

pub(crate) fn read_err(path: &Path, message: impl Into<String>) -> Error {
    Error::FrameRead { path: path.to_path_buf(), message: message.into() }
}

/// The first `bytes` of a file, cut after its last whole line, without a BOM.
pub(crate) fn sample(path: &Path, bytes: usize) -> Result<Vec<u8>> {
    let mut buf = match super::read_compressed::sample_compressed(path, bytes)? {
        Some(content) => content,
        None => {
            let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
            let mut buf = Vec::with_capacity(bytes.min(1 << 24));
            f.take(bytes as u64 + 1).read_to_end(&mut buf).map_err(|e| Error::io("read", path, e))?;
            buf
        }
    };
    if buf.len() > bytes {
        let last = buf.iter().rposition(|&b| b == b'\n').unwrap_or(buf.len());
        buf.truncate(last + 1);
    }
    Ok(buf.strip_prefix(BOM).map(<[u8]>::to_vec).unwrap_or(buf))
}

/// The type two samples' columns share: numbers widen to float64, anything
/// else that differs falls back to utf8 (which holds every value).
fn unify(a: &DataType, b: &DataType) -> DataType {
    match (a, b) {
        _ if a == b => a.clone(),
        (DataType::Null, t) | (t, DataType::Null) => t.clone(),
        (DataType::Int64, DataType::Float64) | (DataType::Float64, DataType::Int64) => DataType::Float64,
        _ => DataType::Utf8,
    }
}

/// The schema of CSV files from the first `sample_bytes` of each, unified.
pub fn infer_csv_schema(paths: &[PathBuf], opts: &CsvOptions, sample_bytes: usize) -> Result<SchemaRef> {
    let format = opts.format()?;
    let mut unified: Option<(PathBuf, Vec<Field>)> = None;
    for path in paths {
        let bytes = sample(path, sample_bytes)?;
        if bytes.is_empty() {
            // An empty file says nothing of the columns; it reads as no rows.
            continue;
        }
        let (schema, _) = format.infer_schema(Cursor::new(bytes), None).map_err(|e| read_err(path, format!("inferring its schema: {e}")))?;
        let fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        unified = Some(match unified {
            None => (path.clone(), fields),
            Some((first, prev)) => {
                let names = |fs: &[Field]| fs.iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(", ");
                if prev.len() != fields.len() || prev.iter().zip(&fields).any(|(a, b)| a.name() != b.name()) {
                    return Err(read_err(path, format!("its columns [{}] differ from those of {} [{}]: every file of a frame has the same columns", names(&fields), first.display(), names(&prev))));
                }
                let merged = prev.iter().zip(&fields).map(|(a, b)| Field::new(a.name(), unify(a.data_type(), b.data_type()), true)).collect();
                (first, merged)
            }
        });
    }
    let (_, fields) = unified.ok_or_else(|| Error::invalid("paths", "no files to infer a schema from"))?;
    // A column empty in every sample holds text as far as anyone can tell.
    let fields: Vec<Field> = fields.into_iter().map(|f| if f.data_type() == &DataType::Null { f.with_data_type(DataType::Utf8) } else { f }).collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// The bytes of the lines that begin in [start, end) of the file (to its end without `end`).
pub(crate) fn block_bytes(path: &Path, start: u64, end: Option<u64>) -> Result<(u64, Vec<u8>)> {
    let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let io = |e| Error::io("read", path, e);
    let mut at = 0;
    let mut skipped = Vec::new();
    if start > 0 {
        // The line that runs through `start` belongs to the block before.
        r.seek(SeekFrom::Start(start - 1)).map_err(io)?;
        at = start - 1 + r.read_until(b'\n', &mut skipped).map_err(io)? as u64;
    }
    let mut buf = Vec::new();
    match end {
        Some(end) if at >= end => return Ok((at, buf)),
        Some(end) => {
            (&mut r).take(end - at).read_to_end(&mut buf).map_err(io)?;
            if buf.last().is_some_and(|&b| b != b'\n') {
                r.read_until(b'\n', &mut buf).map_err(io)?;
            }
        }
        None => {
            r.read_to_end(&mut buf).map_err(io)?;
        }
    }
    if at == 0 && buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    Ok((at, buf))
}

/// Arrow names a column by index; the user knows it by name.
fn name_columns(message: &str, schema: &Schema) -> String {
    let re = Regex::new(r"for column (\d+)").expect("a valid regex");
    re.replace_all(message, |c: &regex::Captures| {
        let i: usize = c[1].parse().unwrap_or(usize::MAX);
        schema.fields().get(i).map_or_else(|| c[0].to_string(), |f| format!("for column {:?}", f.name()))
    })
    .into_owned()
}

/// The batches of one block of a CSV file, read with `schema`.
/// A compressed file is read whole, a piece of whole lines at a time.
pub fn read_csv_block(path: &Path, start: u64, end: Option<u64>, schema: &SchemaRef, opts: &CsvOptions) -> Result<Vec<RecordBatch>> {
    let mut out = Vec::new();
    // The first piece, the only one with no line before it, holds the header.
    if super::read_compressed::each_piece(path, |at, before, bytes| Ok(out.extend(csv_batches(path, at, before == 0, bytes, schema, opts)?)))? {
        return Ok(out);
    }
    let (at, bytes) = block_bytes(path, start, end)?;
    csv_batches(path, at, at == 0, &bytes, schema, opts)
}

/// The batches of whole CSV lines that begin at byte `at` (`first`: the file's header among them).
fn csv_batches(path: &Path, at: u64, first: bool, bytes: &[u8], schema: &SchemaRef, opts: &CsvOptions) -> Result<Vec<RecordBatch>> {
    let reader = ReaderBuilder::new(Arc::clone(schema))
        .with_format(opts.format()?.with_header(opts.header && first))
        .with_batch_size(BATCH_ROWS)
        .build(Cursor::new(bytes))
        .map_err(|e| read_err(path, e.to_string()))?;
    reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| read_err(path, format!("in the block from byte {at}: {} (a value that does not fit the column's type: give the column's type in `schema`, or sample more)", name_columns(&e.to_string(), schema))))
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
