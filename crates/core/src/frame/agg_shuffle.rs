//! A groupBy through the frame shuffle (shuffle.rs) rather than a combine
//! tree: each split aggregates its partition and cuts the partial states by
//! key hash; each collect merges its output's states and finishes them, so
//! no task ever holds more than its share of the groups. As DataFusion's
//! skip-partial-aggregation: when a first sample of a partition's rows shows
//! the keys barely repeat, the states would be as large as the rows and
//! aggregating them twice is wasted work, so the split sends the rows
//! themselves (keys and aggregated columns only, tagged in the schema's
//! metadata) and the collect aggregates them there. Shards reach a collect
//! in input order, and a shard of rows becomes states before it is merged,
//! so first and last stay those of the frame's row order.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use serde::Deserialize;

use super::aggregate::{self, AggSpec, Aggregator};
use super::plan::{self, PartitionPlan};
use super::types::{self, FieldSpec};
use super::wordcount::WordCount;
use super::{frame_err, frame_error, ipc};
use crate::Result;

/// The schema metadata key (value "rows") of a shard that holds rows, not states.
pub const ROWS_TAG: &str = "spillway.groupBy";

fn default_ratio() -> f64 {
    0.8
}

fn default_probe() -> usize {
    100_000
}

/// A split's aggregation: the groupBy, and when to send rows instead of states.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AggSplit {
    pub agg: AggSpec,
    /// Groups per row, over the first `probe_rows`, above which the split sends rows.
    #[serde(default = "default_ratio")]
    pub skip_ratio: f64,
    #[serde(default = "default_probe")]
    pub probe_rows: usize,
}

/// Whether `groups` among the first `rows` repeat too little for a partial aggregation to pay.
pub fn skips_partial(groups: usize, rows: usize, ratio: f64) -> bool {
    rows > 0 && groups as f64 > ratio * rows as f64
}

fn is_rows(schema: &Schema) -> bool {
    schema.metadata().get(ROWS_TAG).is_some_and(|v| v == "rows")
}

/// The keys and aggregated columns of `batches`, each once, tagged as rows.
fn projected_rows(spec: &AggSpec, schema: &Schema, batches: &[RecordBatch]) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let mut names: Vec<&str> = spec.keys.iter().map(String::as_str).collect();
    for c in spec.aggs.iter().filter_map(|a| a.column.as_deref()) {
        if !names.contains(&c) {
            names.push(c);
        }
    }
    let idx = names.iter().map(|n| schema.index_of(n).map_err(|_| frame_error(format!("groupBy: no column {n:?} to aggregate")))).collect::<Result<Vec<_>>>()?;
    let projected = schema.project(&idx).map_err(frame_err("projecting rows"))?;
    let tagged = Arc::new(projected.with_metadata(HashMap::from([(ROWS_TAG.to_string(), "rows".to_string())])));
    let out = batches
        .iter()
        .map(|b| RecordBatch::try_new(Arc::clone(&tagged), idx.iter().map(|&i| Arc::clone(b.column(i))).collect()).map_err(frame_err("projecting rows")))
        .collect::<Result<Vec<_>>>()?;
    Ok((tagged, out))
}

/// A split's batches to cut, and with states, each state row's key hash (`row_hash`, kept from the
/// partial aggregation's probe of the table, so the outputs are cut without hashing the keys again).
pub type SplitBatches = (SchemaRef, Vec<RecordBatch>, Option<Vec<u64>>);

/// A partition's partial states, or its rows where a sample shows the keys barely repeat.
pub fn states_or_rows(a: &AggSplit, schema: &SchemaRef, batches: Vec<RecordBatch>) -> Result<SplitBatches> {
    let mut agg = Aggregator::partial(&a.agg, schema)?;
    let (mut rows, mut probed) = (0, false);
    for b in &batches {
        agg.update(b)?;
        rows += b.num_rows();
        if !probed && rows >= a.probe_rows {
            probed = true;
            if skips_partial(agg.groups(), rows, a.skip_ratio) {
                drop(agg);
                let (schema, rows) = projected_rows(&a.agg, schema, &batches)?;
                return Ok((schema, rows, None));
            }
        }
    }
    let hashes = agg.key_hashes().map(<[u64]>::to_vec);
    let state = agg.finish()?;
    Ok((state.schema(), vec![state], hashes))
}

/// A split's batches to cut by key hash: its partition run, then aggregated (or not, see `states_or_rows`).
pub fn split_input(partition: &serde_json::Value, input: &[&[u8]], a: &AggSplit) -> Result<SplitBatches> {
    let parsed: PartitionPlan = serde_json::from_value(partition.clone()).map_err(|e| frame_error(format!("a frame partition plan that is not one: {e}")))?;
    // A word count has its own fused partial aggregation: its states always.
    if WordCount::of(&parsed.steps, Some(&a.agg)).is_some() {
        let mut p = partition.clone();
        p["partial"] = serde_json::to_value(&a.agg).map_err(frame_err("writing a partition plan"))?;
        let (schema, states) = ipc::decode(&plan::run_partition(&p.to_string(), input)?)?;
        return Ok((schema, states, None));
    }
    // The partition's batches as they are (no IPC round trip), a Parquet scan
    // decoding only the keys and aggregated columns after its pushed filter.
    let needed: Vec<String> = a.agg.keys.iter().cloned().chain(a.agg.aggs.iter().filter_map(|x| x.column.clone())).collect();
    let (schema, batches) = plan::partition_batches_for(&partition.to_string(), input, Some(&needed))?;
    states_or_rows(a, &schema, batches)
}

/// An output's shards (states or rows, in input order) merged and finished;
/// `declared` (the aggregated frame's columns) gives an output no shard reached its columns.
pub fn collect(spec: &AggSpec, declared: &[FieldSpec], input: &[&[u8]]) -> Result<RecordBatch> {
    let mut merger: Option<Aggregator> = None;
    for bytes in input {
        let (schema, batches) = ipc::decode(bytes)?;
        let states = if is_rows(&schema) { vec![aggregate::partial(spec, &schema, &batches)?] } else { batches };
        for s in states.iter().filter(|s| s.num_rows() > 0) {
            let m = match &mut merger {
                Some(m) => m,
                None => merger.insert(Aggregator::merging(spec, &s.schema(), None)?),
            };
            m.update(s)?;
        }
    }
    let state = match merger {
        Some(m) => m.finish()?,
        None => aggregate::partial(spec, &*types::from_specs(declared)?, &[])?,
    };
    aggregate::finish(spec, &state)
}

#[cfg(test)]
#[path = "agg_shuffle_tests.rs"]
mod tests;
