//! The frame shuffle's task-level entry points, beside plan.rs's: a split
//! runs its partition's plan and cuts the rows by output (IPC bytes per
//! output, in parts of at most `partBytes`), a collect gathers an output's
//! shards (each side's in input order) and concatenates, joins or sorts
//! them; a sortBy's samples and boundaries are two more. The shards travel
//! as the bags' do (the worker's shuffle service), never decoded on the way.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde::Deserialize;

use super::agg_shuffle::{self, AggSplit};
use super::grace::{self, Grace};
use super::aggregate::AggSpec;
use super::join::{self, JoinSpec};
use super::partition::{self, columns, SortKey};
use super::sort;
use super::types::{self, FieldSpec};
use super::{frame_error, ipc, plan};
use crate::Result;

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum By {
    Hash { keys: Vec<String> },
    /// The last input is the boundaries' IPC.
    Range { keys: Vec<SortKey> },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SplitPlan {
    /// A `frame.partition` plan: the partition whose rows are cut.
    pub partition: serde_json::Value,
    pub by: By,
    pub npartitions: u64,
    pub part_bytes: usize,
    /// A groupBy's split: the partition's partial states (or rows) are cut, not its rows.
    #[serde(default)]
    pub agg: Option<AggSplit>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Then {
    Concat,
    Join { join: JoinSpec },
    Sort { keys: Vec<SortKey> },
    /// A groupBy's states (or rows) merged and finished (agg_shuffle.rs).
    Agg { agg: AggSpec },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectPlan {
    pub then: Then,
    /// Each side's columns, for an output no input sent any rows.
    pub schemas: Vec<Vec<FieldSpec>>,
    /// How many of the inputs are each side's, in order (set by the worker).
    pub sides: Vec<usize>,
    /// Set where the worker routed the shards into bucket files rather than pass them (grace.rs).
    #[serde(default)]
    pub grace: Option<Grace>,
}

#[derive(Debug, Deserialize)]
pub struct SamplePlan {
    pub partition: serde_json::Value,
    pub keys: Vec<SortKey>,
    pub per: usize,
}

#[derive(Debug, Deserialize)]
pub struct BoundariesPlan {
    pub keys: Vec<SortKey>,
    pub npartitions: usize,
}

fn parse<'a, T: Deserialize<'a>>(json: &'a str, what: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| frame_error(format!("a {what} that is not one: {e}")))
}

/// A partition's batches: its plan run (plan.rs).
fn partition(plan_json: &serde_json::Value, input: &[&[u8]]) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    plan::partition_batches(&plan_json.to_string(), input)
}

/// The batches of IPC streams, all of `schema` (the first's, else the declared one).
fn gather(bytes: &[&[u8]], declared: &[FieldSpec]) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let (schema, out) = plan::inputs(bytes)?;
    Ok((match schema {
        Some(s) => s,
        None => types::from_specs(declared)?,
    }, out))
}

fn key_names(keys: &[SortKey]) -> Vec<String> {
    keys.iter().map(|k| k.name.clone()).collect()
}

/// Shards as `[count u32][output u32, length u32]…` then their bytes back to back (little-endian).
fn layout(shards: Vec<(u32, Vec<u8>)>) -> Vec<u8> {
    let body: usize = shards.iter().map(|(_, b)| b.len()).sum();
    let mut out = Vec::with_capacity(4 + 8 * shards.len() + body);
    out.extend_from_slice(&(shards.len() as u32).to_le_bytes());
    for (p, b) in &shards {
        out.extend_from_slice(&p.to_le_bytes());
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    }
    for (_, b) in shards {
        out.extend_from_slice(&b);
    }
    out
}

/// A partition's rows cut by output: the shards' layout (see `layout`), outputs with no rows left out.
pub fn run_split(plan_json: &str, input: &[&[u8]]) -> Result<Vec<u8>> {
    let plan: SplitPlan = parse(plan_json, "frame split plan")?;
    let n = plan.npartitions.max(1);
    let (input, boundaries) = match &plan.by {
        By::Range { .. } => {
            let (last, rest) = input.split_last().ok_or_else(|| frame_error("a range split without its boundaries"))?;
            (rest, Some(ipc::decode(last)?.1))
        }
        By::Hash { .. } => (input, None),
    };
    let (schema, batches, hashes) = match &plan.agg {
        Some(a) => agg_shuffle::split_input(&plan.partition, input, a)?,
        None => partition(&plan.partition, input).map(|(s, b)| (s, b, None))?,
    };
    // The boundaries' key columns, once; none (a frame with no rows sampled) sends every row to output 0.
    let bounds = match (&plan.by, boundaries) {
        (By::Range { keys }, Some(b)) if b.iter().any(|b| b.num_rows() > 0) => {
            let all = arrow_select::concat::concat_batches(&b[0].schema(), &b).map_err(super::frame_err("reading sort boundaries"))?;
            Some(columns(&all, &key_names(keys), "sort boundaries")?)
        }
        _ => None,
    };
    let batches: Vec<RecordBatch> = batches.into_iter().filter(|b| b.num_rows() > 0).collect();
    if batches.is_empty() {
        return Ok(layout(Vec::new()));
    }
    // States cut by the hashes their groups were probed with; these are the hashes of the shuffle's keys only where those are the groupBy's.
    let stored = match (&plan.by, &plan.agg, hashes, batches.as_slice()) {
        (By::Hash { keys }, Some(a), Some(h), [one]) if *keys == a.agg.keys && h.len() == one.num_rows() => Some(h),
        _ => None,
    };
    let mut outputs = Vec::with_capacity(batches.len());
    for b in &batches {
        outputs.push(match (&plan.by, &bounds, &stored) {
            (_, _, Some(h)) => h.iter().map(|&h| partition::output_of(h, n)).collect(),
            (By::Hash { keys }, _, None) => partition::hash_outputs(&columns(b, keys, "shuffle key")?, n)?,
            (By::Range { keys }, Some(bounds), None) => partition::range_outputs(&columns(b, &key_names(keys), "sortBy")?, keys, bounds)?,
            (By::Range { .. }, None, None) => vec![0; b.num_rows()],
        });
    }
    let (grouped, counts) = partition::group_rows(&batches, &outputs, n as usize)?;
    // Each output's rows are a slice of the grouped batch, cut into parts of about `part_bytes`.
    let row_bytes = grouped.get_array_memory_size() / grouped.num_rows().max(1) + 1;
    let per_part = (plan.part_bytes.max(1) / row_bytes).max(1);
    let mut shards = Vec::new();
    let mut at = 0;
    for (p, &count) in counts.iter().enumerate() {
        let mut from = at;
        while from < at + count {
            let len = per_part.min(at + count - from);
            shards.push((p as u32, ipc::encode(&schema, &[grouped.slice(from, len)])?));
            from += len;
        }
        at += count;
    }
    Ok(layout(shards))
}

/// An output's shards made into its partition: concatenated, joined (two sides) or sorted.
pub fn run_collect(plan_json: &str, input: &[&[u8]]) -> Result<Vec<u8>> {
    let plan: CollectPlan = parse(plan_json, "frame collect plan")?;
    if let Some(g) = &plan.grace {
        return grace::collect(&plan, g);
    }
    if plan.sides.iter().sum::<usize>() != input.len() || plan.sides.len() != plan.schemas.len() {
        return Err(frame_error(format!("a collect of {} inputs told its sides hold {:?}", input.len(), plan.sides)));
    }
    if let (Then::Agg { agg }, [declared]) = (&plan.then, plan.schemas.as_slice()) {
        // One input decoded at a time: the merge holds its groups' states and one shard.
        let out = agg_shuffle::collect(agg, declared, input)?;
        return ipc::encode(&out.schema(), &[out]);
    }
    let mut at = 0;
    let mut sides = Vec::new();
    for (n, declared) in plan.sides.iter().zip(&plan.schemas) {
        sides.push(gather(&input[at..at + n], declared)?);
        at += n;
    }
    let out = match (&plan.then, sides.as_slice()) {
        (Then::Concat, [(schema, batches)]) => return ipc::encode(schema, batches),
        (Then::Sort { keys }, [(schema, batches)]) => sort::sort_batches(schema, batches, keys)?,
        (Then::Join { join }, [(ls, lb), (rs, rb)]) => return join::join_ipc(join, (ls, lb), (rs, rb)),
        _ => return Err(frame_error(format!("a collect with {} sides for {:?}", sides.len(), plan.then))),
    };
    ipc::encode(&out.schema(), &[out])
}

/// A partition's sample of sort keys (IPC).
pub fn run_sample(plan_json: &str, input: &[&[u8]]) -> Result<Vec<u8>> {
    let plan: SamplePlan = parse(plan_json, "frame sample plan")?;
    let (schema, batches) = partition(&plan.partition, input)?;
    let s = sort::sample(&schema, &batches, &plan.keys, plan.per)?;
    ipc::encode(&s.schema(), &[s])
}

/// The samples' range boundaries (IPC).
pub fn run_boundaries(plan_json: &str, input: &[&[u8]]) -> Result<Vec<u8>> {
    let plan: BoundariesPlan = parse(plan_json, "frame boundaries plan")?;
    let (schema, batches) = gather(input, &[])?;
    if batches.is_empty() {
        return ipc::encode(&schema, &[]);
    }
    let b = sort::boundaries(&schema, &batches, &plan.keys, plan.npartitions)?;
    ipc::encode(&b.schema(), &[b])
}
