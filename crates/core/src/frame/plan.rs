//! One frame task's work, from its plan (JSON the client built and hashed)
//! and its inputs (IPC bytes) to the IPC bytes of its output: the binding
//! hands over owned bytes and a string, and gets bytes back, so a task
//! crosses into the core once.

use std::path::PathBuf;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde::Deserialize;

use super::aggregate::{self, AggSpec};
use super::expr::{self, Expr};
use super::read::{self, CsvOptions};
use super::read_parquet_files::{scan_files, ParquetPiece};
use super::read_text::{self, Encoding};
use super::partition::SortKey;
use super::whole;
use super::wordcount::WordCount;
use super::types::{self, FieldSpec};
use super::{frame_err, frame_error, ipc};
use crate::Result;

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Source {
    /// The lines of `path` that begin in [start, end).
    /// With `exact`, the records in [start, end) exactly (the planner found record starts: csv_bounds.rs).
    Csv {
        path: PathBuf,
        start: u64,
        end: Option<u64>,
        options: CsvOptions,
        #[serde(default)]
        exact: bool,
    },
    /// The batches of the task's inputs, in order.
    Inputs,
    /// The lines that begin in [start, end) of a text file, as one utf8 column.
    /// `more`: small files packed into the same partition, each read whole after the block.
    Text {
        path: PathBuf,
        start: u64,
        end: Option<u64>,
        column: String,
        encoding: Encoding,
        #[serde(default)]
        more: Vec<TextPiece>,
    },
    /// Some row groups of a Parquet file (read_parquet.rs), then those of
    /// `more` files, in order (small files coalesced: read_parquet_files.rs).
    #[serde(rename_all = "camelCase")]
    Parquet {
        path: PathBuf,
        row_groups: Vec<usize>,
        #[serde(default)]
        more: Vec<ParquetPiece>,
    },
    /// The lines of an NDJSON file that begin in [start, end) (read_ndjson.rs).
    Ndjson { path: PathBuf, start: u64, end: Option<u64> },
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Step {
    Filter { predicate: Expr },
    Select { exprs: Vec<Expr> },
    /// The partition's first (or last) n rows.
    Head { n: usize },
    Tail { n: usize },
    /// A one-row aggregate reshaped into describe's table.
    Describe { columns: Vec<String> },
    /// The partition's rows sorted (stable), its first `limit` only where given:
    /// `sortBy().head(n)`'s top-n, per partition and then over their outputs.
    Sort {
        keys: Vec<SortKey>,
        #[serde(default)]
        limit: Option<usize>,
    },
}

/// A whole small file of a packed text partition (its size and mtime ride along for the task's key only).
#[derive(Debug, Deserialize)]
pub struct TextPiece {
    pub path: PathBuf,
}

#[derive(Debug, Deserialize)]
pub struct PartitionPlan {
    pub source: Source,
    /// The source's schema (the reader's, known on the client).
    pub schema: Vec<FieldSpec>,
    #[serde(default)]
    pub steps: Vec<Step>,
    /// A groupBy's partial aggregation, last.
    #[serde(default)]
    pub partial: Option<AggSpec>,
}

#[derive(Debug, Deserialize)]
pub struct CombinePlan {
    pub agg: AggSpec,
    /// The last level: states become results.
    #[serde(rename = "final")]
    pub last: bool,
    /// `[n, i]`: only the groups whose key hash is i modulo n (splitOut).
    #[serde(default)]
    pub split: Option<(u64, u64)>,
}

fn parse<'a, T: Deserialize<'a>>(json: &'a str, what: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| frame_error(format!("a {what} that is not one: {e}")))
}

fn apply(step: &Step, b: &RecordBatch) -> Result<RecordBatch> {
    match step {
        Step::Filter { predicate } => expr::filter(b, predicate),
        Step::Select { exprs } => expr::select(b, exprs),
        Step::Describe { columns } => whole::describe(b, columns),
        Step::Head { .. } | Step::Tail { .. } | Step::Sort { .. } => Ok(b.clone()),
    }
}

/// A step over a partition's batches: most go batch by batch, head and tail over them all.
fn apply_all(step: &Step, batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
    match step {
        Step::Head { n } => Ok(whole::limit(batches, *n, false)),
        Step::Tail { n } => Ok(whole::limit(batches, *n, true)),
        Step::Describe { .. } if batches.len() > 1 => Err(frame_error("describe reads one row of aggregates")),
        Step::Sort { keys, limit } => {
            let Some(schema) = batches.first().map(|b| b.schema()) else { return Ok(batches) };
            let sorted = match limit {
                Some(n) => super::sort::top_n(&schema, &batches, keys, *n)?,
                None => super::sort::sort_batches(&schema, &batches, keys)?,
            };
            Ok(if sorted.num_rows() > 0 { vec![sorted] } else { Vec::new() })
        }
        _ => batches.into_iter().map(|b| apply(step, &b)).filter(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0)).collect(),
    }
}

/// The batches of IPC streams, and the first stream's schema (none when there are no inputs).
pub(crate) fn inputs(bytes: &[&[u8]]) -> Result<(Option<SchemaRef>, Vec<RecordBatch>)> {
    let mut schema = None;
    let mut out = Vec::new();
    for b in bytes {
        let (s, batches) = ipc::decode(b)?;
        schema.get_or_insert(s);
        out.extend(batches);
    }
    Ok((schema, out))
}

/// A partition's output: its source read, its steps applied, its partial aggregation done.
pub fn run_partition(plan_json: &str, input: &[&[u8]]) -> Result<Vec<u8>> {
    let (schema, batches) = partition_batches(plan_json, input)?;
    ipc::encode(&schema, &batches)
}

/// `run_partition`'s output as batches, for the shuffle's split and sample,
/// which cut or sample them (no IPC encode and decode on the way).
pub fn partition_batches(plan_json: &str, input: &[&[u8]]) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    partition_batches_for(plan_json, input, None)
}

/// `partition_batches` for a caller that reads only the `needed` columns of
/// the output (a shuffle split's partial aggregation): a Parquet scan whose
/// filter it ran decodes only those.
pub fn partition_batches_for(plan_json: &str, input: &[&[u8]], needed: Option<&[String]>) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let plan: PartitionPlan = parse(plan_json, "frame partition plan")?;
    let declared = types::from_specs(&plan.schema)?;
    // Steps the reader already ran (a Parquet scan's pushed-down filter).
    let mut done = 0;
    let (schema, mut batches) = match &plan.source {
        Source::Csv { path, start, end, options, exact } => (declared.clone(), read::read_csv_block(path, *start, *end, *exact, &declared, options)?),
        Source::Parquet { path, row_groups, more } => {
            // The first filter prunes row groups by their statistics and runs inside the reader.
            let filter = match plan.steps.first() {
                Some(Step::Filter { predicate }) => Some(predicate),
                _ => None,
            };
            // A partial aggregation right after it reads only its keys and values.
            let after = match (&plan.partial, plan.steps.len()) {
                (Some(spec), 1) => Some(spec.keys.iter().cloned().chain(spec.aggs.iter().filter_map(|a| a.column.clone())).collect::<Vec<_>>()),
                (None, 1) => needed.map(<[String]>::to_vec),
                _ => None,
            };
            let scan = if more.is_empty() {
                super::read_parquet::scan_parquet(path, row_groups, &declared, filter, true, after.as_deref())?
            } else {
                let first = ParquetPiece { path: path.clone(), row_groups: row_groups.clone() };
                let pieces: Vec<&ParquetPiece> = std::iter::once(&first).chain(more.iter()).collect();
                scan_files(&pieces, &declared, filter, after.as_deref())?
            };
            done = usize::from(scan.filtered);
            (scan.schema, scan.batches)
        }
        Source::Ndjson { path, start, end } => (declared.clone(), super::read_ndjson::read_ndjson_block(path, *start, *end, &declared)?),
        Source::Inputs => {
            let (s, b) = inputs(input)?;
            (s.unwrap_or(declared), b)
        }
        Source::Text { path, start, end, column, encoding, more } => {
            let mut batches = read_text::read_text_block(path, *start, *end, column, *encoding)?;
            for piece in more {
                batches.extend(read_text::read_text_block(&piece.path, 0, None, column, *encoding)?);
            }
            (declared.clone(), batches)
        }
    };
    let steps = &plan.steps[done..];
    if let Some(wc) = WordCount::of(steps, plan.partial.as_ref()) {
        let state = wc.run(&batches)?;
        return Ok((state.schema(), vec![state]));
    }
    // The steps run on an empty batch too: an empty partition still knows its output schema.
    let mut empty = RecordBatch::new_empty(schema);
    for step in steps {
        empty = apply(step, &empty)?;
        batches = apply_all(step, batches)?;
    }
    if let Some(spec) = &plan.partial {
        let state = aggregate::partial(spec, &empty.schema(), &batches)?;
        return Ok((state.schema(), vec![state]));
    }
    Ok((empty.schema(), batches))
}

/// Partial states merged (a level of the tree, or its last, which finishes
/// them), one input decoded at a time.
pub fn run_combine(plan_json: &str, input: &[&[u8]]) -> Result<Vec<u8>> {
    let plan: CombinePlan = parse(plan_json, "frame combine plan")?;
    let mut agg: Option<aggregate::Aggregator> = None;
    for bytes in input {
        let (schema, batches) = ipc::decode(bytes)?;
        let a = match &mut agg {
            Some(a) => a,
            None => agg.insert(aggregate::Aggregator::merging(&plan.agg, &schema, plan.split)?),
        };
        for b in &batches {
            a.update(b)?;
        }
    }
    let mut state = agg.ok_or_else(|| frame_error("a combine with no inputs"))?.finish()?;
    if plan.last {
        state = aggregate::finish(&plan.agg, &state)?;
    }
    ipc::encode(&state.schema(), &[state])
}

/// Whether the regex crate takes `pattern` (a JS RegExp the client
/// translated): checked when the frame is built, not in a task later.
pub fn check_pattern(pattern: &str) -> Result<()> {
    super::expr_str::compile(pattern).map(|_| ())
}

/// A CSV file's block starts at true record starts, or none when cuts at
/// line ends will do (csv_bounds.rs); `options_json` as infer_csv's.
pub fn csv_block_starts(path: &std::path::Path, options_json: &str, blocksize: u64, sample_bytes: usize, force: bool) -> Result<Option<Vec<u64>>> {
    let options: CsvOptions = parse(options_json, "CSV options object")?;
    super::csv_bounds::csv_block_starts(path, &options, blocksize, sample_bytes, force)
}

/// The unified schema of CSV files (as `[{ name, type, nullable }]` JSON) from a sample of each.
pub fn infer_csv(paths: &[PathBuf], options_json: &str, sample_bytes: usize) -> Result<String> {
    let options: CsvOptions = parse(options_json, "CSV options object")?;
    let schema = read::infer_csv_schema(paths, &options, sample_bytes)?;
    serde_json::to_string(&types::to_specs(&schema)?).map_err(frame_err("describing a schema"))
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
