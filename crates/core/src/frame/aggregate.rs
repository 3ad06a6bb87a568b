//! Hash group-by with partial aggregation, as DataFusion's aggregates: keys
//! (any number, any type arrow's row format takes; nulls a group of their
//! own) are interned to dense group ids, and each aggregate keeps its state
//! in plain vectors indexed by group id. Each input partition aggregates
//! alone (`partial`); partial states then merge (`merge`, the same kernel with
//! merging folds) and `finish` turns states into results (mean = sum/count).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_cast::cast;
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use hashbrown::HashTable;
use serde::{Deserialize, Serialize};

use super::agg_fold::{fold, step, Fold};
use super::partition::{output_of, row_hash, table_hash};
use super::{agg_extra, frame_err, frame_error};
use crate::Result;

/// One aggregate of a groupBy: `name` is its output column.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct AggExpr {
    pub name: String,
    pub func: String,
    #[serde(default)]
    pub column: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct AggSpec {
    pub keys: Vec<String>,
    pub aggs: Vec<AggExpr>,
}

const SKIP: u32 = u32::MAX;

/// A state column: `out` folds `input` (None: count rows) by `fold`, as `ty`.
struct StateCol {
    out: String,
    input: Option<String>,
    fold: Fold,
    ty: DataType,
}

fn numeric_type(schema: &Schema, column: &str, func: &str) -> Result<DataType> {
    let f = schema.field_with_name(column).map_err(|_| frame_error(format!("no column {column:?} to {func}")))?;
    match f.data_type() {
        t if t.is_integer() || t == &DataType::Boolean => Ok(DataType::Int64),
        // Decimals fold as float64, as the client typed the result (src/frame/schema.ts aggregateType).
        t if t.is_floating() || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..)) => Ok(DataType::Float64),
        t => Err(frame_error(format!("{func}({column:?}) needs a numeric column; {column:?} is {t}"))),
    }
}

/// The state columns of a partial aggregation of `spec` over `schema`.
fn partial_cols(spec: &AggSpec, schema: &Schema) -> Result<Vec<StateCol>> {
    let mut out = Vec::new();
    for a in &spec.aggs {
        let col = |a: &AggExpr| a.column.clone().ok_or_else(|| frame_error(format!("{}() needs a column", a.func)));
        let fold = match a.func.as_str() {
            "count" => Fold::Count,
            "sum" | "mean" => Fold::Sum,
            "min" => Fold::Min,
            "max" => Fold::Max,
            f if agg_extra::is_extra(f) => continue,
            f => return Err(frame_error(format!("unknown aggregate {f:?}: count, sum, mean, min, max, nUnique, first, last, std, var"))),
        };
        if a.func == "count" {
            out.push(StateCol { out: a.name.clone(), input: a.column.clone(), fold, ty: DataType::Int64 });
        } else if a.func == "mean" {
            let c = col(a)?;
            numeric_type(schema, &c, "mean")?;
            out.push(StateCol { out: format!("{}__sum", a.name), input: Some(c.clone()), fold, ty: DataType::Float64 });
            out.push(StateCol { out: format!("{}__count", a.name), input: Some(c), fold: Fold::Count, ty: DataType::Int64 });
        } else {
            let c = col(a)?;
            let ty = numeric_type(schema, &c, &a.func)?;
            out.push(StateCol { out: a.name.clone(), input: Some(c), fold, ty });
        }
    }
    Ok(out)
}

/// Partial states merge by summing counts and sums, and min of mins, max of maxes.
fn merge_cols(spec: &AggSpec, state: &Schema) -> Result<Vec<StateCol>> {
    let mut out = Vec::new();
    let mut add = |name: String, fold: Fold| -> Result<()> {
        let ty = state.field_with_name(&name).map_err(|_| frame_error(format!("no state column {name:?} to merge")))?.data_type().clone();
        out.push(StateCol { out: name.clone(), input: Some(name), fold, ty });
        Ok(())
    };
    for a in &spec.aggs {
        match a.func.as_str() {
            "count" | "sum" => add(a.name.clone(), Fold::Sum)?,
            "min" => add(a.name.clone(), Fold::Min)?,
            "max" => add(a.name.clone(), Fold::Max)?,
            "mean" => {
                add(format!("{}__sum", a.name), Fold::Sum)?;
                add(format!("{}__count", a.name), Fold::Sum)?;
            }
            f if agg_extra::is_extra(f) => {}
            f => return Err(frame_error(format!("unknown aggregate {f:?}: count, sum, mean, min, max, nUnique, first, last, std, var"))),
        }
    }
    Ok(out)
}

/// Keys interned to dense group ids, in order of first sight: the table
/// holds ids, the key bytes live once, in `rows`.
struct Groups {
    /// None with no keys: every row is the one group (a whole-frame aggregate).
    converter: Option<RowConverter>,
    table: HashTable<u32>,
    hashes: Vec<u64>,
    rows: Rows,
}

impl Groups {
    fn new(key_types: Vec<DataType>) -> Result<Self> {
        if key_types.is_empty() {
            let converter = RowConverter::new(vec![SortField::new(DataType::Null)]).map_err(frame_err("keying groups"))?;
            return Ok(Groups { rows: converter.empty_rows(0, 0), converter: None, table: HashTable::new(), hashes: vec![0] });
        }
        let converter = RowConverter::new(key_types.into_iter().map(SortField::new).collect()).map_err(frame_err("keying groups"))?;
        let rows = converter.empty_rows(0, 0);
        Ok(Groups { converter: Some(converter), table: HashTable::new(), hashes: Vec::new(), rows })
    }

    fn len(&self) -> usize {
        self.hashes.len()
    }

    /// The group id of each row (SKIP for rows another output partition owns).
    fn intern(&mut self, keys: &[ArrayRef], split: Option<(u64, u64)>) -> Result<Vec<u32>> {
        let Some(converter) = &self.converter else { return Ok(vec![0; keys.first().map_or(0, |k| k.len())]) };
        let rows = converter.convert_columns(&super::canonical::canonical_all(keys)).map_err(frame_err("keying groups"))?;
        let Groups { table, hashes, rows: seen, .. } = self;
        let mut out = Vec::with_capacity(rows.num_rows());
        for row in rows.iter() {
            let bytes = row.as_ref();
            // The key bytes hashed once: the split, the stored hash that cuts the outputs, and the table all read it (partition.rs).
            let h = row_hash(bytes);
            if split.is_some_and(|(n, i)| output_of(h, n) as u64 != i) {
                out.push(SKIP);
                continue;
            }
            let id = match table.find(table_hash(h), |&id| seen.row(id as usize).as_ref() == bytes) {
                Some(&id) => id,
                None => {
                    let id = hashes.len() as u32;
                    table.insert_unique(table_hash(h), id, |&id| table_hash(hashes[id as usize]));
                    hashes.push(h);
                    seen.push(row);
                    id
                }
            };
            out.push(id);
        }
        Ok(out)
    }

    fn keys(&self) -> Result<Vec<ArrayRef>> {
        self.converter.as_ref().map_or(Ok(Vec::new()), |c| c.convert_rows(self.rows.iter()).map_err(frame_err("building group keys")))
    }
}

/// One state column's values by group id; `seen` marks groups with a non-null value.
struct Acc {
    fold: Fold,
    ints: Vec<i64>,
    floats: Vec<f64>,
    seen: Vec<bool>,
    float: bool,
}

fn sum_overflow(state: &str) -> crate::Error {
    let name = state.strip_suffix("__sum").unwrap_or(state);
    frame_error(format!("the aggregate {name:?} sums integers past int64's range (±9223372036854775807) in a group; sum the column as float64 (col(...).cast('float64')) for an approximate sum"))
}

impl Acc {
    fn new(c: &StateCol) -> Self {
        Acc { fold: c.fold, ints: Vec::new(), floats: Vec::new(), seen: Vec::new(), float: c.ty == DataType::Float64 }
    }

    /// `name`: the aggregate's output column, for the error of a sum past int64.
    fn update(&mut self, groups: &[u32], ngroups: usize, input: Option<&ArrayRef>, name: &str) -> Result<()> {
        self.seen.resize(ngroups, false);
        if self.fold == Fold::Count {
            self.ints.resize(ngroups, 0);
            let nulls = input.and_then(|a| a.logical_nulls());
            for (i, &g) in groups.iter().enumerate() {
                if g != SKIP && nulls.as_ref().is_none_or(|n| n.is_valid(i)) {
                    self.ints[g as usize] += 1;
                    self.seen[g as usize] = true;
                }
            }
            return Ok(());
        }
        let input = input.expect("folds other than count read a column");
        let nulls: Option<NullBuffer> = input.logical_nulls();
        let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
        if self.float {
            self.floats.resize(ngroups, 0.0);
            let a = cast(input, &DataType::Float64).map_err(frame_err("reading a numeric column"))?;
            let vals = a.as_primitive::<Float64Type>().values();
            for (i, &g) in groups.iter().enumerate() {
                if g != SKIP && valid(i) {
                    step(self.fold, &mut self.floats, &mut self.seen, g as usize, vals[i]);
                }
            }
        } else {
            self.ints.resize(ngroups, 0);
            // Checked: Arrow's safe cast makes a uint64 past int64's range a null, which the fold would skip.
            let a = super::expr_checked::to_int64(input, &format!("the aggregate {name:?}"))?;
            let vals = a.as_primitive::<Int64Type>().values();
            for (i, &g) in groups.iter().enumerate() {
                if g != SKIP && valid(i) {
                    let (v, seen) = (&mut self.ints, &mut self.seen);
                    // Checked, as DuckDB's and Postgres' integer sums: a wrapped sum is a wrong value with nothing to say so.
                    v[g as usize] = if !seen[g as usize] {
                        vals[i]
                    } else if self.fold == Fold::Sum {
                        v[g as usize].checked_add(vals[i]).ok_or_else(|| sum_overflow(name))?
                    } else {
                        fold(self.fold, v[g as usize], vals[i])
                    };
                    seen[g as usize] = true;
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, ngroups: usize) -> ArrayRef {
        self.seen.resize(ngroups, false);
        if self.fold == Fold::Count {
            self.ints.resize(ngroups, 0);
            return Arc::new(Int64Array::from(self.ints));
        }
        let nulls = Some(NullBuffer::from(self.seen));
        if self.float {
            self.floats.resize(ngroups, 0.0);
            Arc::new(Float64Array::new(self.floats.into(), nulls))
        } else {
            self.ints.resize(ngroups, 0);
            Arc::new(Int64Array::new(self.ints.into(), nulls))
        }
    }
}

fn key_fields(spec: &AggSpec, schema: &Schema) -> Result<Vec<Field>> {
    spec.keys.iter().map(|k| schema.field_with_name(k).map(|f| Field::new(k, f.data_type().clone(), true)).map_err(|_| frame_error(format!("no key column {k:?}")))).collect()
}

/// A hash aggregation fed batch by batch: the caller decodes one input at a
/// time, so a merge holds its state and one input's batches, not them all.
pub struct Aggregator {
    keys: Vec<String>,
    cols: Vec<StateCol>,
    schema: SchemaRef,
    groups: Groups,
    accs: Vec<Acc>,
    extras: Vec<Box<dyn agg_extra::ExtraAcc>>,
    split: Option<(u64, u64)>,
}

impl Aggregator {
    fn new(spec: &AggSpec, schema: &Schema, cols: Vec<StateCol>, split: Option<(u64, u64)>, merging: bool) -> Result<Self> {
        let extras = agg_extra::accumulators(spec, schema, merging)?;
        let keys = key_fields(spec, schema)?;
        let groups = Groups::new(keys.iter().map(|f| f.data_type().clone()).collect())?;
        let mut fields = keys;
        fields.extend(cols.iter().map(|c| Field::new(&c.out, c.ty.clone(), c.fold != Fold::Count)));
        let accs = cols.iter().map(Acc::new).collect();
        Ok(Aggregator { keys: spec.keys.clone(), cols, schema: Arc::new(Schema::new(fields)), groups, accs, extras, split })
    }

    /// One partition's partial aggregation over batches of `schema`.
    pub fn partial(spec: &AggSpec, schema: &Schema) -> Result<Self> {
        Self::new(spec, schema, partial_cols(spec, schema)?, None, false)
    }

    /// A merge of partial states of schema `state`; with `split = (n, i)`,
    /// only the groups whose key hash is i modulo n.
    pub fn merging(spec: &AggSpec, state: &Schema, split: Option<(u64, u64)>) -> Result<Self> {
        Self::new(spec, state, merge_cols(spec, state)?, split, true)
    }

    /// Groups seen so far.
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Each group's key hash (`row_hash`) by group id, the order `finish` gives the groups in; None with no keys.
    pub fn key_hashes(&self) -> Option<&[u64]> {
        self.groups.converter.as_ref().map(|_| self.groups.hashes.as_slice())
    }

    pub fn update(&mut self, b: &RecordBatch) -> Result<()> {
        let column = |name: &String| b.column_by_name(name).ok_or_else(|| frame_error(format!("no column {name:?} to aggregate")));
        let key_arrays = self.keys.iter().map(|k| column(k).map(Arc::clone)).collect::<Result<Vec<_>>>()?;
        let ids = if key_arrays.is_empty() { vec![0; b.num_rows()] } else { self.groups.intern(&key_arrays, self.split)? };
        let n = self.groups.len();
        for (acc, c) in self.accs.iter_mut().zip(&self.cols) {
            acc.update(&ids, n, c.input.as_ref().map(column).transpose()?, &c.out)?;
        }
        for acc in &mut self.extras {
            acc.update(b, &ids, n)?;
        }
        Ok(())
    }

    /// The keys and states, one row per group in order of first sight.
    pub fn finish(self) -> Result<RecordBatch> {
        let n = self.groups.len();
        let mut columns = self.groups.keys()?;
        drop(self.groups);
        columns.extend(self.accs.into_iter().map(|a| a.finish(n)));
        let mut fields: Vec<Field> = self.schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        for acc in self.extras {
            for (f, c) in acc.finish(n)? {
                fields.push(f);
                columns.push(c);
            }
        }
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &opts).map_err(frame_err("building aggregates"))
    }
}

fn run(mut agg: Aggregator, batches: &[RecordBatch]) -> Result<RecordBatch> {
    for b in batches {
        agg.update(b)?;
    }
    agg.finish()
}

/// One partition's partial states: keys, then a state column per count/sum/min/max and two per mean.
pub fn partial(spec: &AggSpec, schema: &Schema, batches: &[RecordBatch]) -> Result<RecordBatch> {
    run(Aggregator::partial(spec, schema)?, batches)
}

/// Partial states merged; with `split = (n, i)`, only the groups whose key hash is i modulo n.
pub fn merge(spec: &AggSpec, state: &Schema, batches: &[RecordBatch], split: Option<(u64, u64)>) -> Result<RecordBatch> {
    run(Aggregator::merging(spec, state, split)?, batches)
}

/// Merged states as results: means divided out, every other state as it is.
pub fn finish(spec: &AggSpec, state: &RecordBatch) -> Result<RecordBatch> {
    let k = spec.keys.len();
    let mut fields: Vec<Field> = state.schema().fields()[..k].iter().map(|f| f.as_ref().clone()).collect();
    let mut columns: Vec<ArrayRef> = state.columns()[..k].to_vec();
    for a in &spec.aggs {
        let col = |n: &str| state.column_by_name(n).ok_or_else(|| frame_error(format!("no state column {n:?}")));
        let c: ArrayRef = if a.func == "mean" {
            let sum = col(&format!("{}__sum", a.name))?.as_primitive::<Float64Type>().clone();
            let count = col(&format!("{}__count", a.name))?.as_primitive::<Int64Type>().clone();
            Arc::new(sum.iter().zip(count.values()).map(|(s, &n)| if n == 0 { None } else { s.map(|s| s / n as f64) }).collect::<Float64Array>())
        } else if agg_extra::is_extra(&a.func) {
            agg_extra::finish(a, state)?
        } else {
            Arc::clone(col(&a.name)?)
        };
        fields.push(Field::new(&a.name, c.data_type().clone(), a.func != "count"));
        columns.push(c);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(frame_err("finishing aggregates"))
}

#[cfg(test)]
#[path = "aggregate_tests.rs"]
mod tests;
