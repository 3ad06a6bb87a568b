//! NDJSON into record batches with arrow-json: types inferred from a sample
//! of every file and unified across them (objects become structs, arrays
//! lists), then each block of a file, cut at line ends as CSV's are, decoded
//! with that schema. A value that does not fit its column fails the block
//! with an error naming the file, the line and the column.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_json::reader::infer_json_schema;
use arrow_json::ReaderBuilder;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

use super::read::{block_bytes, sample, BATCH_ROWS};
use super::type_names::normalized;
use crate::{Error, Result};

fn read_err(path: &Path, message: impl Into<String>) -> Error {
    Error::FrameRead { path: path.to_path_buf(), message: message.into() }
}

fn nullable(name: &str, t: DataType) -> Field {
    Field::new(name, t, true)
}

/// The type two samples' values share: numbers widen to float64, objects
/// merge their keys, lists their items, other scalars read as strings
/// (arrow-json writes a number or a boolean into a string column as its
/// text); an object against a scalar or a list has none.
fn unify(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Null, t) | (t, Null) => t.clone(),
        (Int64, Float64) | (Float64, Int64) => Float64,
        (List(x), List(y)) => List(Arc::new(nullable("item", unify(x.data_type(), y.data_type())?))),
        (Struct(x), Struct(y)) => Struct(merge(x, y)?),
        (Struct(_) | List(_), _) | (_, Struct(_) | List(_)) => return None,
        _ => Utf8,
    })
}

/// The fields of both, in order of first appearance, common ones unified.
fn merge(a: &Fields, b: &Fields) -> Option<Fields> {
    let mut out: Vec<Field> = a.iter().map(|f| f.as_ref().clone()).collect();
    for f in b {
        match out.iter_mut().find(|g| g.name() == f.name()) {
            Some(g) => *g = nullable(g.name(), unify(g.data_type(), f.data_type())?),
            None => out.push(nullable(f.name(), f.data_type().clone())),
        }
    }
    Some(out.into())
}

/// A column null in every sample holds text as far as anyone can tell.
fn no_null_types(t: &DataType) -> DataType {
    match t {
        DataType::Null => DataType::Utf8,
        DataType::List(f) => DataType::List(Arc::new(nullable("item", no_null_types(f.data_type())))),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(|f| nullable(f.name(), no_null_types(f.data_type()))).collect()),
        t => t.clone(),
    }
}

/// Fields (and a struct's children) in the order their keys first appear
/// in the sample, as DuckDB and Polars give them: arrow-json's inference
/// sorts them by name.
fn in_sample_order(fields: &Fields, sample: &[u8]) -> Fields {
    let at = |name: &str| {
        let key = serde_json::to_string(name).expect("a string");
        memchr::memmem::find_iter(sample, key.as_bytes()).find(|&i| sample[i + key.len()..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':')).unwrap_or(usize::MAX)
    };
    let mut out: Vec<(usize, Field)> = fields
        .iter()
        .map(|f| {
            let t = match f.data_type() {
                DataType::Struct(c) => DataType::Struct(in_sample_order(c, sample)),
                DataType::List(i) => match i.data_type() {
                    DataType::Struct(c) => DataType::List(Arc::new(nullable(i.name(), DataType::Struct(in_sample_order(c, sample))))),
                    _ => f.data_type().clone(),
                },
                t => t.clone(),
            };
            (at(f.name()), f.as_ref().clone().with_data_type(t))
        })
        .collect();
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, f)| f).collect()
}

/// The unified schema of NDJSON files from the first `sample_bytes` of
/// each; with `columns`, those columns only, in that order.
pub fn infer_ndjson_schema(paths: &[PathBuf], columns: Option<&[String]>, sample_bytes: usize) -> Result<SchemaRef> {
    let mut fields: Option<(PathBuf, Fields)> = None;
    for path in paths {
        let bytes = sample(path, sample_bytes)?;
        if let Err(e) = std::str::from_utf8(&bytes) {
            let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
            return Err(read_err(path, format!("line {line}: byte {} is not valid UTF-8; NDJSON is UTF-8: re-encode the file (e.g. iconv -f latin1 -t utf8)", e.valid_up_to())));
        }
        let (schema, _) = infer_json_schema(Cursor::new(&bytes), None).map_err(|e| read_err(path, format!("inferring its schema: {e}")))?;
        let schema = Schema::new(in_sample_order(schema.fields(), &bytes));
        fields = Some(match fields {
            None => (path.clone(), schema.fields().clone()),
            Some((first, prev)) => {
                if let Some((a, b)) = prev.iter().find_map(|a| schema.field_with_name(a.name()).ok().filter(|b| unify(a.data_type(), b.data_type()).is_none()).map(|b| (a, b))) {
                    return Err(read_err(path, format!("its key {:?} holds {}, where {} holds {}: give the column's type in `schema`", a.name(), b.data_type(), first.display(), a.data_type())));
                }
                let merged = merge(&prev, schema.fields()).expect("conflicts reported above");
                (first, merged)
            }
        });
    }
    let (_, fields) = fields.ok_or_else(|| Error::invalid("paths", "no files to infer a schema from"))?;
    let pick = |f: &Field| -> Result<Field> { Ok(nullable(f.name(), normalized(&no_null_types(f.data_type()))?)) };
    let out = match columns {
        None => fields.iter().map(|f| pick(f)).collect::<Result<Vec<_>>>()?,
        Some(cols) => cols
            .iter()
            .map(|c| match fields.iter().find(|f| f.name() == c) {
                Some(f) => pick(f),
                // A key no sampled line has: its values, if any, read as text.
                None => Ok(nullable(c, DataType::Utf8)),
            })
            .collect::<Result<Vec<_>>>()?,
    };
    Ok(Arc::new(Schema::new(out)))
}

fn decode(schema: &SchemaRef, bytes: &[u8]) -> std::result::Result<Vec<RecordBatch>, arrow_schema::ArrowError> {
    ReaderBuilder::new(Arc::clone(schema)).with_batch_size(BATCH_ROWS).with_coerce_primitive(true).build(Cursor::new(bytes))?.collect()
}

/// Lines of the file before byte `at`, counted as it streams by.
fn lines_before(path: &Path, at: u64) -> Result<u64> {
    let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut r = BufReader::with_capacity(1 << 20, std::io::Read::take(f, at));
    let mut n = 0;
    loop {
        let buf = r.fill_buf().map_err(|e| Error::io("read", path, e))?;
        if buf.is_empty() {
            return Ok(n);
        }
        n += memchr::memchr_iter(b'\n', buf).count() as u64;
        let len = buf.len();
        r.consume(len);
    }
}

/// The first line of a block that fails alone, its number in the file, and why.
fn failing_line(first: u64, bytes: &[u8], schema: &SchemaRef) -> Option<(u64, String)> {
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Err(e) = decode(schema, line) {
            return Some((first + i as u64 + 1, e.to_string()));
        }
    }
    None
}

/// "whilst decoding field 'a': …" as the user knows it: column "a".
fn column_of(message: &str) -> String {
    let mut path = Vec::new();
    let mut rest = message;
    while let Some(i) = rest.find("whilst decoding field '") {
        rest = &rest[i + 23..];
        if let Some(end) = rest.find("': ") {
            path.push(&rest[..end]);
        }
    }
    if path.is_empty() {
        return String::new();
    }
    format!(", column {:?}", path.join("."))
}

/// The batches of one block of an NDJSON file, read with `schema`.
/// A compressed file is read whole, a piece of whole lines at a time.
pub fn read_ndjson_block(path: &Path, start: u64, end: Option<u64>, schema: &SchemaRef) -> Result<Vec<RecordBatch>> {
    let mut out = Vec::new();
    if super::read_compressed::each_piece(path, |at, before, bytes| Ok(out.extend(ndjson_batches(path, at, Some(before), bytes, schema)?)))? {
        return Ok(out);
    }
    let (at, bytes) = block_bytes(path, start, end)?;
    ndjson_batches(path, at, None, &bytes, schema)
}

/// The batches of whole lines that begin at byte `at`, after `before` lines (counted from the file when not known).
fn ndjson_batches(path: &Path, at: u64, before: Option<u64>, bytes: &[u8], schema: &SchemaRef) -> Result<Vec<RecordBatch>> {
    decode(schema, bytes).or_else(|e| {
        let first = match before {
            Some(n) => n,
            None => lines_before(path, at)?,
        };
        let (line, why) = failing_line(first, bytes, schema).unwrap_or((0, e.to_string()));
        let why = why.strip_prefix("Json error: ").unwrap_or(&why).to_string();
        if why.contains("non-UTF-8") {
            let place = if line > 0 { format!("line {line}") } else { format!("the block from byte {at}") };
            return Err(read_err(path, format!("{place}: bytes that are not valid UTF-8; NDJSON is UTF-8: re-encode the file (e.g. iconv -f latin1 -t utf8)")));
        }
        let place = if line > 0 { format!("line {line}") } else { format!("the block from byte {at}") };
        Err(read_err(path, format!("{place}{}: {why} (a value that does not fit the column's type: give the column's type in `schema`, or sample more)", column_of(&why))))
    })
}

/// `infer_ndjson_schema` as `[{ name, type, nullable }]` JSON for the client.
pub fn infer_ndjson_json(paths: &[PathBuf], columns: Option<&[String]>, sample_bytes: usize) -> Result<String> {
    let schema = infer_ndjson_schema(paths, columns, sample_bytes)?;
    Ok(serde_json::to_string(&super::types::to_specs(&schema)?).expect("specs serialize"))
}

#[cfg(test)]
#[path = "read_ndjson_tests.rs"]
mod tests;
