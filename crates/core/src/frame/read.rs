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

use super::read_text::Encoding;
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
    /// Columns the user typed (only when inferring): not unified across files.
    pub given: Vec<String>,
    /// The file's bytes: UTF-8 (checked) or Latin-1 (recoded to UTF-8 as they are read).
    pub encoding: Encoding,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions { delimiter: ",".into(), quote: "\"".into(), null_values: vec![String::new()], header: true, given: Vec::new(), encoding: Encoding::Utf8 }
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
    sample_cut(path, bytes, |buf| buf.iter().rposition(|&b| b == b'\n').map_or(buf.len(), |i| i + 1))
}

/// The first `bytes` of a CSV file, cut after its last whole record (a
/// '\n' inside a quoted value ends none), without a BOM.
pub(crate) fn csv_sample(path: &Path, bytes: usize, opts: &CsvOptions) -> Result<Vec<u8>> {
    sample_cut(path, bytes, |buf| match super::csv_bounds::last_record_end(buf, opts).0 {
        // One record longer than the sample: kept whole, as a line would be.
        0 => buf.len(),
        end => end,
    })
}

fn sample_cut(path: &Path, bytes: usize, cut: impl Fn(&[u8]) -> usize) -> Result<Vec<u8>> {
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
        let end = cut(&buf);
        buf.truncate(end);
    }
    Ok(buf.strip_prefix(BOM).map(<[u8]>::to_vec).unwrap_or(buf))
}

/// The schema of CSV files from the first `sample_bytes` of each, unified.
pub fn infer_csv_schema(paths: &[PathBuf], opts: &CsvOptions, sample_bytes: usize) -> Result<SchemaRef> {
    let format = opts.format()?;
    let mut samples = Vec::with_capacity(paths.len());
    for path in paths {
        let bytes = super::csv_encoding::sample_as_utf8(path, csv_sample(path, sample_bytes, opts)?, opts.encoding, one_byte("delimiter", &opts.delimiter)?, opts.header)?;
        if bytes.is_empty() {
            // An empty file says nothing of the columns; it reads as no rows.
            continue;
        }
        let (schema, _) = format.infer_schema(Cursor::new(&bytes), None).map_err(|e| read_err(path, format!("inferring its schema: {e}")))?;
        let fields = super::csv_types::keep_leading_zeros(schema.fields().iter().map(|f| f.as_ref().clone()).collect(), &bytes, &format)?;
        samples.push((path.clone(), fields));
    }
    let fields = super::csv_types::unify_files(&samples, &opts.given)?.ok_or_else(|| no_columns(paths))?;
    // A column empty in every sample holds text as far as anyone can tell.
    let fields: Vec<Field> = fields.into_iter().map(|f| if f.data_type() == &DataType::Null { f.with_data_type(DataType::Utf8) } else { f }).collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// Why no schema could be inferred: no files at all, or only empty ones (named).
fn no_columns(paths: &[PathBuf]) -> Error {
    match paths {
        [] => Error::invalid("paths", "no files to infer a schema from"),
        [one] => read_err(one, "the file is empty: it has no header and no row to infer its columns from; give `schema` to read it as no rows"),
        [first, rest @ ..] => read_err(first, format!("this file and the {} other(s) read are all empty: there is no header and no row to infer the columns from; give `schema` to read them as no rows", rest.len())),
    }
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

/// The bytes of [start, end) exactly (to the file's end without `end`): a
/// block whose boundaries the planner put at true record starts.
fn exact_bytes(path: &Path, start: u64, end: Option<u64>) -> Result<Vec<u8>> {
    let mut f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let io = |e| Error::io("read", path, e);
    f.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut buf = Vec::new();
    match end {
        Some(end) => f.take(end.saturating_sub(start)).read_to_end(&mut buf),
        None => f.read_to_end(&mut buf),
    }
    .map_err(io)?;
    if start == 0 && buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    Ok(buf)
}

/// The batches of one block of a CSV file, read with `schema`: `exact`
/// when the planner put [start, end) at record starts (quoted values span
/// lines), else the lines that begin in it.
/// A compressed file is read whole, a piece of whole lines at a time, a
/// record that a quoted line break carries past a piece's end joined to the next.
pub fn read_csv_block(path: &Path, start: u64, end: Option<u64>, exact: bool, schema: &SchemaRef, opts: &CsvOptions) -> Result<Vec<RecordBatch>> {
    let mut out = Vec::new();
    let mut carry: Vec<u8> = Vec::new();
    let mut carry_at = 0;
    let mut first = true;
    let quote = opts.quote.as_bytes().first().copied().unwrap_or(b'"');
    let compressed = super::read_compressed::each_piece(path, |at, _, bytes| {
        let whole: std::borrow::Cow<[u8]> = if carry.is_empty() { bytes.into() } else { [carry.as_slice(), bytes].concat().into() };
        let at = if carry.is_empty() { at } else { carry_at };
        // Only a quote can hold a record open past a line's end.
        let cut = if memchr::memchr(quote, &whole).is_some() { super::csv_bounds::last_record_end(&whole, opts).0 } else { whole.len() };
        // The first bytes parsed hold the header.
        if cut > 0 {
            out.extend(csv_batches(path, at, first, &whole[..cut], schema, opts)?);
            first = false;
        }
        carry = whole[cut..].to_vec();
        carry_at = at + cut as u64;
        Ok(())
    })?;
    if compressed {
        if !carry.is_empty() {
            out.extend(csv_batches(path, carry_at, first, &carry, schema, opts)?);
        }
        return Ok(out);
    }
    if exact {
        let bytes = exact_bytes(path, start, end)?;
        return csv_batches(path, start, start == 0, &bytes, schema, opts);
    }
    let (at, bytes) = block_bytes(path, start, end)?;
    if end.is_some() {
        super::csv_bounds::check_block_end(path, at, &bytes, opts)?;
    }
    csv_batches(path, at, at == 0, &bytes, schema, opts).map_err(|e| match e {
        // A block cut at a line end may start inside a quoted value (the block before fails too, saying so; this one may fail first).
        Error::FrameRead { path, message } if at > 0 && memchr::memchr(opts.quote.as_bytes().first().copied().unwrap_or(b'"'), &bytes).is_some() => Error::FrameRead {
            path,
            message: format!("{message} (or the block, cut at a line end, starts inside a quoted value with a line break: pass quotedNewlines: true to frame.readCsv)"),
        },
        e => e,
    })
}

/// The batches of whole CSV lines that begin at byte `at` (`first`: the file's header among them).
fn csv_batches(path: &Path, at: u64, first: bool, bytes: &[u8], schema: &SchemaRef, opts: &CsvOptions) -> Result<Vec<RecordBatch>> {
    let bytes = super::csv_encoding::as_utf8(bytes, opts.encoding);
    let reader = ReaderBuilder::new(Arc::clone(schema))
        .with_format(opts.format()?.with_header(opts.header && first))
        .with_batch_size(BATCH_ROWS)
        .build(Cursor::new(&bytes))
        .map_err(|e| read_err(path, e.to_string()))?;
    reader.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| {
        let block = super::csv_rows::Block { path, at, bytes: &bytes, header_here: opts.header && at == 0, header: opts.header, quote: opts.quote.as_bytes().first().copied().unwrap_or(b'"') };
        read_err(path, block.explain(&e.to_string(), schema))
    })
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
