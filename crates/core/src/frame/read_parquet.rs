//! Parquet into record batches with arrow-rs's own reader (every codec that
//! pyarrow, DuckDB and Polars write). The client reads the footers once to
//! learn the schema, unified across files, and each file's row groups, which
//! it groups into partitions; a worker reads its row groups' projected
//! columns, skipping those whose min/max statistics prove that the frame's
//! first filter keeps none of their rows.

use std::cmp::Ordering;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_cast::cast;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::RowGroupMetaData;
use parquet::file::statistics::Statistics;
use serde_json::Value;

use super::expr::Expr;
use super::read_parquet_filter::row_filter;
use super::read_parquet_size::arrow_bytes;
use super::read::BATCH_ROWS;
use super::type_names::normalized;
use crate::{Error, Result};

fn read_err(path: &Path, message: impl Into<String>) -> Error {
    Error::FrameRead { path: path.to_path_buf(), message: message.into() }
}

fn footer(path: &Path) -> Result<(File, ArrowReaderMetadata)> {
    let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(|e| read_err(path, format!("reading its Parquet footer: {e}")))?;
    Ok((file, meta))
}

/// One row group as the client plans with it: its rows and the uncompressed bytes of the columns read.
pub type RowGroupSize = (u64, u64);

fn names(s: &Schema) -> String {
    s.fields().iter().map(|f| format!("{:?}", f.name())).collect::<Vec<_>>().join(", ")
}

/// The type two files' columns share: integers widen, integers and floats make float64.
fn unify(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    let rank = |t: &DataType| [Int8, Int16, Int32, Int64].iter().position(|x| x == t);
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (Null, t) | (t, Null) => t.clone(),
        _ if rank(a).is_some() && rank(b).is_some() => if rank(a) > rank(b) { a.clone() } else { b.clone() },
        _ if (a.is_integer() || a.is_floating()) && (b.is_integer() || b.is_floating()) => Float64,
        _ => return None,
    })
}

/// The columns of one file that a frame reads (`columns`, or all), in the frame's types.
fn file_fields(path: &Path, schema: &Schema, columns: Option<&[String]>) -> Result<Vec<Field>> {
    let picked: Vec<&Field> = match columns {
        None => schema.fields().iter().map(|f| f.as_ref()).collect(),
        Some(cols) => cols
            .iter()
            .map(|c| schema.field_with_name(c).map_err(|_| read_err(path, format!("it has no column {c:?}; its columns are {}", names(schema)))))
            .collect::<Result<_>>()?,
    };
    picked.into_iter().map(|f| Ok(Field::new(f.name(), normalized(f.data_type()).map_err(|e| read_err(path, format!("column {:?}: {e}", f.name())))?, true))).collect()
}

/// The unified schema of Parquet files (their `columns`, or all of the
/// first's) and each file's row groups, from their footers.
pub fn infer_parquet(paths: &[PathBuf], columns: Option<&[String]>) -> Result<(SchemaRef, Vec<Vec<RowGroupSize>>)> {
    let mut unified: Option<(PathBuf, Vec<Field>)> = None;
    let mut layouts = Vec::with_capacity(paths.len());
    for path in paths {
        let (_, meta) = footer(path)?;
        let fields = file_fields(path, meta.schema(), columns)?;
        unified = Some(match unified {
            None => (path.clone(), fields),
            Some((first, prev)) => {
                let mut merged = Vec::with_capacity(prev.len());
                for a in &prev {
                    let b = fields.iter().find(|b| b.name() == a.name()).ok_or_else(|| read_err(path, format!("it has no column {:?}, which {} has: every file of a frame has the frame's columns (or pass `columns`)", a.name(), first.display())))?;
                    let t = unify(a.data_type(), b.data_type()).ok_or_else(|| read_err(path, format!("its column {:?} is {}, where {} has {}: cast one of them, or read them as two frames", a.name(), b.data_type(), first.display(), a.data_type())))?;
                    merged.push(Field::new(a.name(), t, true));
                }
                (first, merged)
            }
        });
        let roots: Vec<usize> = unified.as_ref().expect("set above").1.iter().filter_map(|f| meta.schema().index_of(f.name()).ok()).collect();
        let descr = meta.metadata().file_metadata().schema_descr();
        let sizes = meta
            .metadata()
            .row_groups()
            .iter()
            .map(|rg| {
                let bytes: u64 = rg.columns().iter().enumerate().filter(|(i, _)| roots.contains(&descr.get_column_root_idx(*i))).map(|(_, c)| arrow_bytes(c)).sum();
                (rg.num_rows() as u64, bytes)
            })
            .collect();
        layouts.push(sizes);
    }
    let (_, fields) = unified.ok_or_else(|| Error::invalid("paths", "no files to read a schema from"))?;
    Ok((Arc::new(Schema::new(fields)), layouts))
}

/// A bound from a row group's statistics or a literal, compared as the filter would.
#[derive(PartialEq)]
enum Bound {
    Int(i64),
    Float(f64),
    Bytes(Vec<u8>),
}

impl PartialOrd for Bound {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        use Bound::*;
        match (self, other) {
            (Int(a), Int(b)) => a.partial_cmp(b),
            (Bytes(a), Bytes(b)) => a.partial_cmp(b),
            (Int(a), Float(b)) => (*a as f64).partial_cmp(b),
            (Float(a), Int(b)) => a.partial_cmp(&(*b as f64)),
            (Float(a), Float(b)) => a.partial_cmp(b),
            _ => None,
        }
    }
}

fn lit_bound(value: &Value, ty: &str) -> Option<Bound> {
    match ty {
        "int64" => value.as_i64().or_else(|| value.as_str()?.parse().ok()).map(Bound::Int),
        "float64" => value.as_f64().map(Bound::Float),
        "utf8" => value.as_str().map(|s| Bound::Bytes(s.as_bytes().to_vec())),
        _ => None,
    }
}

/// The min and max of a top-level column in a row group; None when unknown,
/// Some(None) when every value is null.
fn stats_bounds(rg: &RowGroupMetaData, name: &str, t: &DataType) -> Option<Option<(Bound, Bound)>> {
    let c = rg.columns().iter().find(|c| c.column_path().parts() == [name.to_string()])?;
    let s = c.statistics()?;
    if s.null_count_opt() == Some(rg.num_rows() as u64) {
        return Some(None);
    }
    use DataType::*;
    let pair = match (s, t) {
        (Statistics::Int32(v), Int8 | Int16 | Int32) => (Bound::Int(*v.min_opt()? as i64), Bound::Int(*v.max_opt()? as i64)),
        (Statistics::Int64(v), Int64) => (Bound::Int(*v.min_opt()?), Bound::Int(*v.max_opt()?)),
        (Statistics::Float(v), Float32) => (Bound::Float(*v.min_opt()? as f64), Bound::Float(*v.max_opt()? as f64)),
        (Statistics::Double(v), Float64) => (Bound::Float(*v.min_opt()?), Bound::Float(*v.max_opt()?)),
        (Statistics::ByteArray(v), Utf8) => (Bound::Bytes(v.min_opt()?.data().to_vec()), Bound::Bytes(v.max_opt()?.data().to_vec())),
        _ => return None,
    };
    Some(Some(pair))
}

/// False only when the statistics prove that `pred` keeps no row of the row group.
pub fn may_match(rg: &RowGroupMetaData, schema: &Schema, pred: &Expr) -> bool {
    let (op, l, r) = match pred {
        Expr::And { left, right } => return may_match(rg, schema, left) && may_match(rg, schema, right),
        Expr::Eq { left, right } => ("eq", left, right),
        Expr::Neq { left, right } => ("neq", left, right),
        Expr::Gt { left, right } => ("gt", left, right),
        Expr::GtEq { left, right } => ("gtEq", left, right),
        Expr::Lt { left, right } => ("lt", left, right),
        Expr::LtEq { left, right } => ("ltEq", left, right),
        _ => return true,
    };
    // `lit op col` is `col op' lit`.
    let (name, value, ty, op) = match (l.as_ref(), r.as_ref()) {
        (Expr::Col { name }, Expr::Lit { value, ty }) => (name, value, ty, op),
        (Expr::Lit { value, ty }, Expr::Col { name }) => (name, value, ty, match op {
            "gt" => "lt",
            "gtEq" => "ltEq",
            "lt" => "gt",
            "ltEq" => "gtEq",
            o => o,
        }),
        _ => return true,
    };
    let Ok(field) = schema.field_with_name(name) else { return true };
    let Some(lit) = lit_bound(value, ty) else { return true };
    let Some(bounds) = stats_bounds(rg, name, field.data_type()) else { return true };
    // A null never passes a comparison.
    let Some((min, max)) = bounds else { return false };
    // NaN sorts above every number in the kernels but is not in the statistics:
    // only comparisons that NaN fails may prune a float column.
    if field.data_type().is_floating() && matches!(op, "gt" | "gtEq" | "neq") {
        return true;
    }
    let (Some(lo), Some(hi)) = (min.partial_cmp(&lit), max.partial_cmp(&lit)) else { return true };
    use Ordering::*;
    match op {
        "eq" => lo != Greater && hi != Less,
        "neq" => !(lo == Equal && hi == Equal),
        "gt" => hi == Greater,
        "gtEq" => hi != Less,
        "lt" => lo == Less,
        _ => lo != Greater,
    }
}

/// The batches of some row groups of a Parquet file, in `schema`'s columns
/// and types; with `prune`, the row groups it proves empty are not read.
pub fn read_parquet(path: &Path, row_groups: &[usize], schema: &SchemaRef, prune: Option<&Expr>) -> Result<Vec<RecordBatch>> {
    Ok(scan_parquet(path, row_groups, schema, prune, false, None)?.batches)
}

/// What a scan read: its batches, in `schema`'s columns, and whether the filter was applied.
pub struct Scanned {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub filtered: bool,
}

/// The batches of some row groups, their row groups pruned by `filter`'s
/// statistics; with `push`, `filter` also runs inside the reader (see
/// read_parquet_filter.rs) and then only the columns `after` names (those
/// the rest of the plan reads, in `schema`'s order) are decoded.
pub fn scan_parquet(path: &Path, row_groups: &[usize], schema: &SchemaRef, filter: Option<&Expr>, push: bool, after: Option<&[String]>) -> Result<Scanned> {
    let (file, meta) = footer(path)?;
    let file_schema = Arc::clone(meta.schema());
    let groups = meta.metadata().row_groups();
    if let Some(&bad) = row_groups.iter().find(|&&i| i >= groups.len()) {
        return Err(read_err(path, format!("it has {} row groups, not {}: it changed since the frame was planned", groups.len(), bad + 1)));
    }
    let kept: Vec<usize> = row_groups.iter().copied().filter(|&i| filter.is_none_or(|p| may_match(&groups[i], &file_schema, p))).collect();
    let descr = meta.metadata().file_metadata().schema_descr_ptr();
    let pushed = if push { filter.and_then(|p| row_filter(p, schema, &file_schema, &descr)) } else { None };
    let schema = match (&pushed, after) {
        (Some(_), Some(cols)) if !cols.is_empty() => Arc::new(Schema::new(schema.fields().iter().filter(|f| cols.contains(f.name())).cloned().collect::<Vec<_>>())),
        _ => Arc::clone(schema),
    };
    let filtered = pushed.is_some();
    if kept.is_empty() {
        return Ok(Scanned { schema, batches: Vec::new(), filtered });
    }
    let roots: Vec<usize> = schema
        .fields()
        .iter()
        .map(|f| file_schema.index_of(f.name()).map_err(|_| read_err(path, format!("it has no column {:?}: it changed since the frame was planned", f.name()))))
        .collect::<Result<_>>()?;
    let mask = ProjectionMask::roots(&descr, roots.iter().copied());
    let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, meta).with_row_groups(kept).with_projection(mask).with_batch_size(BATCH_ROWS);
    let mut raised = None;
    if let Some((rf, r)) = pushed {
        builder = builder.with_row_filter(rf);
        raised = Some(r);
    }
    // An error the pushed-down predicate raised comes out as the filter step's would.
    let fail = |e: &dyn std::fmt::Display| raised.as_ref().and_then(|r| r.lock().expect("not poisoned").take()).unwrap_or_else(|| read_err(path, e.to_string()));
    let reader = builder.build().map_err(|e| fail(&e))?;
    let mut out = Vec::new();
    for b in reader {
        let b = b.map_err(|e| fail(&e))?;
        let columns = schema
            .fields()
            .iter()
            .map(|f| {
                let c: &ArrayRef = b.column_by_name(f.name()).expect("projected");
                if c.data_type() == f.data_type() {
                    return Ok(Arc::clone(c));
                }
                if let (DataType::Map(..), DataType::List(item)) = (c.data_type(), f.data_type()) {
                    return map_as_list(c, item).map_err(|e| read_err(path, format!("column {:?} read as {}: {e}", f.name(), f.data_type())));
                }
                cast(c, f.data_type()).map_err(|e| read_err(path, format!("column {:?} read as {}: {e}", f.name(), f.data_type())))
            })
            .collect::<Result<Vec<_>>>()?;
        if b.num_rows() > 0 {
            out.push(RecordBatch::try_new(Arc::clone(&schema), columns).map_err(|e| read_err(path, e.to_string()))?);
        }
    }
    Ok(Scanned { schema, batches: out, filtered })
}

/// A map column as the list of key/value structs it is stored as (arrow's
/// cast has no such conversion); `item` is the list's item field, its
/// struct's children nullable as frames keep them.
fn map_as_list(c: &ArrayRef, item: &Arc<Field>) -> std::result::Result<ArrayRef, arrow_schema::ArrowError> {
    use arrow_array::{cast::AsArray, Array, ListArray, StructArray};
    let m = c.as_map();
    let DataType::Struct(fields) = item.data_type() else { return Err(arrow_schema::ArrowError::CastError(format!("a map reads as a list of structs, not of {}", item.data_type()))) };
    let e = m.entries();
    let columns = e.columns().iter().zip(fields.iter()).map(|(a, f)| if a.data_type() == f.data_type() { Ok(Arc::clone(a)) } else { cast(a, f.data_type()) }).collect::<std::result::Result<Vec<_>, _>>()?;
    let entries = StructArray::try_new(fields.clone(), columns, e.nulls().cloned())?;
    Ok(Arc::new(ListArray::try_new(Arc::clone(item), m.offsets().clone(), Arc::new(entries), m.nulls().cloned())?))
}

/// `infer_parquet` as JSON for the client: `{ schema: [{ name, type, nullable }], rowGroups: [[[rows, bytes], …] per file] }`.
pub fn infer_parquet_json(paths: &[PathBuf], columns: Option<&[String]>) -> Result<String> {
    let (schema, layouts) = infer_parquet(paths, columns)?;
    let out = serde_json::json!({ "schema": super::types::to_specs(&schema)?, "rowGroups": layouts });
    Ok(out.to_string())
}

#[cfg(test)]
#[path = "read_parquet_tests.rs"]
mod tests;
