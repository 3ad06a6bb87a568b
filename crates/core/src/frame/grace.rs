//! Grace partitioning of a collect whose input outgrows its worker's budget
//! (a groupBy with few outputs, a skewed key, a join's big side): before
//! anything is merged, the output's shards are routed one at a time by the
//! same seeded key hash that picked the output, but by other bits of it (the
//! top ones; the output read `hash % npartitions`, the low ones), into 2^bits
//! bucket files; then each bucket is aggregated (or its two sides joined) on
//! its own and its result written into the output's IPC stream, so the
//! merge holds one bucket's state at a time. A bucket still past the budget
//! (skew) is routed again by the next `bits` bits; one that this does not
//! split (a single key's rows) is processed as it is: its groups are one, and
//! a join key's pairs are the output itself.
//!
//! Bucket files are `s{side}-b{bucket}[.{sub}…]` in a directory the worker
//! made for this collect (0700), each a run of records `[u64 length][LZ4
//! block of an IPC stream]`, created 0600 and appended one shard at a time.
//! Files go as their bucket is done; the directory goes when the collect
//! ends, whether it succeeded or not (`Cleanup`).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::SchemaRef;
use serde::Deserialize;

use super::agg_shuffle;
use super::join;
use super::partition::{columns, group_rows, key_rows, row_hash};
use super::shuffle::{CollectPlan, Then};
use super::types::{self, FieldSpec};
use super::{frame_err, frame_error, ipc, plan};
use crate::{Error, Result};

/// Levels of routing at most: a bucket still past the budget after them is processed as it is.
pub const MAX_LEVELS: u32 = 4;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grace {
    /// The collect's own directory (made 0700 by the worker, removed here when the collect ends).
    pub dir: PathBuf,
    /// Buckets per routing are 2^bits.
    pub bits: u32,
    /// IPC bytes of one bucket (both sides, decompressed) past which it is routed again.
    pub budget: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoutePlan {
    pub grace: Grace,
    pub then: Then,
    /// The side the shards are of (a join's left 0, right 1).
    pub side: usize,
}

/// A key hash's bucket among 2^bits at `level`: `bits` bits from the top of
/// the hash, the next `bits` at each level, so a bucket's sub-buckets split
/// it and none of them reads the low bits that `hash % npartitions` chose the
/// output by (those are the same for every row of a power-of-two output
/// count; for another count the top bits are independent of them all but
/// negligibly).
#[inline]
pub fn bucket_of(hash: u64, bits: u32, level: u32) -> u32 {
    debug_assert!(bits >= 1 && bits * (level + 1) <= 64);
    ((hash << (bits * level)) >> (64 - bits)) as u32
}

/// The key columns a side of `then` is routed by.
fn keys_of(then: &Then, side: usize) -> Result<Vec<String>> {
    match (then, side) {
        (Then::Agg { agg }, 0) if !agg.keys.is_empty() => Ok(agg.keys.clone()),
        (Then::Join { join }, 0) => Ok(join.left_on.clone()),
        (Then::Join { join }, 1) => Ok(join.right_on.clone()),
        _ => Err(frame_error(format!("no grace partitioning for side {side} of {then:?}"))),
    }
}

/// Each row's bucket at `level`.
pub fn buckets(b: &RecordBatch, keys: &[String], bits: u32, level: u32) -> Result<Vec<u32>> {
    let cols = columns(b, keys, "grace partitioning key")?;
    let types: Vec<_> = cols.iter().map(|a| a.data_type().clone()).collect();
    let rows = key_rows(&types, &cols)?;
    Ok(rows.iter().map(|r| bucket_of(row_hash(r.as_ref()), bits, level)).collect())
}

fn file_name(side: usize, bucket: &str) -> String {
    format!("s{side}-b{bucket}")
}

fn append(path: &Path, ipc_bytes: &[u8]) -> Result<()> {
    let mut opts = OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(path).map_err(|e| Error::io("opening a grace bucket", path, e))?;
    let block = lz4_flex::block::compress_prepend_size(ipc_bytes);
    let mut rec = Vec::with_capacity(8 + block.len());
    rec.extend_from_slice(&(block.len() as u64).to_le_bytes());
    rec.extend_from_slice(&block);
    f.write_all(&rec).map_err(|e| Error::io("writing a grace bucket", path, e))
}

/// A bucket file's records (IPC streams), or none where it was never written.
fn records(path: &Path) -> Result<Vec<Vec<u8>>> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => f.read_to_end(&mut bytes).map_err(|e| Error::io("reading a grace bucket", path, e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("opening a grace bucket", path, e)),
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let bad = || frame_error(format!("grace bucket {} is cut short at byte {at} of {}", path.display(), bytes.len()));
        let len = u64::from_le_bytes(bytes.get(at..at + 8).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
        let block = bytes.get(at + 8..at + 8 + len).ok_or_else(bad)?;
        out.push(lz4_flex::block::decompress_size_prepended(block).map_err(|e| frame_error(format!("grace bucket {}: {e}", path.display())))?);
        at += 8 + len;
    }
    Ok(out)
}

/// `batches`' rows appended to their buckets' files under `prefix` (the parent bucket's name, "" at the top).
fn route_batches(dir: &Path, side: usize, prefix: &str, keys: &[String], bits: u32, level: u32, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<()> {
    let batches: Vec<RecordBatch> = batches.iter().filter(|b| b.num_rows() > 0).cloned().collect();
    if batches.is_empty() {
        return Ok(());
    }
    let of = batches.iter().map(|b| buckets(b, keys, bits, level)).collect::<Result<Vec<_>>>()?;
    let (grouped, counts) = group_rows(&batches, &of, 1 << bits)?;
    let mut at = 0;
    for (bucket, &n) in counts.iter().enumerate() {
        if n > 0 {
            let name = if prefix.is_empty() { bucket.to_string() } else { format!("{prefix}.{bucket}") };
            append(&dir.join(file_name(side, &name)), &ipc::encode(schema, &[grouped.slice(at, n)])?)?;
        }
        at += n;
    }
    Ok(())
}

/// Shards (IPC streams) of one side routed into the top-level buckets.
pub fn run_route(plan_json: &str, input: &[&[u8]]) -> Result<()> {
    let plan: RoutePlan = serde_json::from_str(plan_json).map_err(|e| frame_error(format!("a grace route plan that is not one: {e}")))?;
    check_bits(plan.grace.bits)?;
    let keys = keys_of(&plan.then, plan.side)?;
    for bytes in input {
        let (schema, batches) = ipc::decode(bytes)?;
        route_batches(&plan.grace.dir, plan.side, "", &keys, plan.grace.bits, 0, &schema, &batches)?;
    }
    Ok(())
}

fn check_bits(bits: u32) -> Result<()> {
    if (1..=12).contains(&bits) {
        Ok(())
    } else {
        Err(frame_error(format!("grace partitioning into 2^{bits} buckets: bits must be 1 to 12")))
    }
}

/// Removes the collect's directory however the collect ends.
struct Cleanup<'a>(&'a Path);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(self.0);
    }
}

/// The output stream, begun with the first bucket's schema.
struct Output(Option<StreamWriter<Vec<u8>>>);

impl Output {
    fn write(&mut self, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<()> {
        for b in batches.iter().filter(|b| b.num_rows() > 0) {
            let w = match &mut self.0 {
                Some(w) => w,
                None => self.0.insert(StreamWriter::try_new(Vec::new(), schema).map_err(frame_err("encoding IPC"))?),
            };
            w.write(b).map_err(frame_err("encoding IPC"))?;
        }
        Ok(())
    }
}

struct Run<'a> {
    plan: &'a CollectPlan,
    grace: &'a Grace,
    keys: Vec<Vec<String>>,
    out: Output,
}

/// A bucket file's IPC bytes once decompressed (what its merge holds), from
/// its records' headers: the length, then the LZ4 block's own u32 size.
fn size(path: &Path) -> Result<u64> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io("opening a grace bucket", path, e)),
    };
    let (mut total, mut head) = (0u64, [0u8; 12]);
    loop {
        match f.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(total),
            Err(e) => return Err(Error::io("reading a grace bucket", path, e)),
        }
        let len = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        if len < 4 {
            return Err(frame_error(format!("grace bucket {} holds a record of {len} bytes", path.display())));
        }
        total += u32::from_le_bytes(head[8..].try_into().expect("4 bytes")) as u64;
        f.seek(SeekFrom::Current(len as i64 - 4)).map_err(|e| Error::io("reading a grace bucket", path, e))?;
    }
}

fn sizes(paths: &[PathBuf]) -> Result<u64> {
    paths.iter().map(|p| size(p)).sum()
}

impl Run<'_> {
    fn paths(&self, bucket: &str) -> Vec<PathBuf> {
        (0..self.keys.len()).map(|s| self.grace.dir.join(file_name(s, bucket))).collect()
    }

    /// One bucket: routed again while it is past the budget and that splits it, else processed.
    fn bucket(&mut self, bucket: &str, level: u32, splits: bool) -> Result<()> {
        let paths = self.paths(bucket);
        let bytes = sizes(&paths)?;
        if bytes == 0 {
            return Ok(());
        }
        if splits && bytes > self.grace.budget && level + 1 < MAX_LEVELS && self.grace.bits * (level + 2) <= 64 {
            for (side, p) in paths.iter().enumerate() {
                for rec in records(p)? {
                    let (schema, batches) = ipc::decode(&rec)?;
                    route_batches(&self.grace.dir, side, bucket, &self.keys[side], self.grace.bits, level + 1, &schema, &batches)?;
                }
                remove(p)?;
            }
            for sub in 0..1u32 << self.grace.bits {
                let name = format!("{bucket}.{sub}");
                let sub_bytes = sizes(&self.paths(&name))?;
                // Nothing split off (one key, or keys whose hashes agree on these bits too): as it is.
                self.bucket(&name, level + 1, sub_bytes < bytes)?;
            }
            return Ok(());
        }
        let sides = paths.iter().map(|p| records(p)).collect::<Result<Vec<_>>>()?;
        self.process(&sides)?;
        paths.iter().try_for_each(|p| remove(p))
    }

    fn process(&mut self, sides: &[Vec<Vec<u8>>]) -> Result<()> {
        let refs: Vec<Vec<&[u8]>> = sides.iter().map(|s| s.iter().map(Vec::as_slice).collect()).collect();
        match (&self.plan.then, refs.as_slice(), self.plan.schemas.as_slice()) {
            (Then::Agg { agg }, [input], [declared]) => {
                let b = agg_shuffle::collect(agg, declared, input)?;
                self.out.write(&b.schema(), &[b])
            }
            (Then::Join { join }, [l, r], [ld, rd]) => {
                let (ls, lb) = gather(l, ld)?;
                let (rs, rb) = gather(r, rd)?;
                let (schema, batches) = ipc::decode(&join::join_ipc(join, (&ls, &lb), (&rs, &rb))?)?;
                self.out.write(&schema, &batches)
            }
            _ => Err(frame_error(format!("no grace partitioning for a collect of {} sides for {:?}", refs.len(), self.plan.then))),
        }
    }

    /// The output of no rows at all: as the plain collect makes it.
    fn empty(&self) -> Result<Vec<u8>> {
        match (&self.plan.then, self.plan.schemas.as_slice()) {
            (Then::Agg { agg }, [declared]) => {
                let b = agg_shuffle::collect(agg, declared, &[])?;
                ipc::encode(&b.schema(), &[b])
            }
            (Then::Join { join }, [ld, rd]) => {
                let (ls, rs) = (types::from_specs(ld)?, types::from_specs(rd)?);
                join::join_ipc(join, (&ls, &[]), (&rs, &[]))
            }
            _ => Err(frame_error(format!("no grace partitioning for {:?}", self.plan.then))),
        }
    }
}

fn gather(records: &[&[u8]], declared: &[FieldSpec]) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let (schema, batches) = plan::inputs(records)?;
    Ok((match schema {
        Some(s) => s,
        None => types::from_specs(declared)?,
    }, batches))
}

fn remove(p: &Path) -> Result<()> {
    match fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io("removing a grace bucket", p, e)),
        _ => Ok(()),
    }
}

/// The collect's buckets processed one by one into its output's IPC stream; the directory removed however it ends.
pub fn collect(plan: &CollectPlan, grace: &Grace) -> Result<Vec<u8>> {
    let _cleanup = Cleanup(&grace.dir);
    check_bits(grace.bits)?;
    let keys = (0..plan.schemas.len()).map(|s| keys_of(&plan.then, s)).collect::<Result<Vec<_>>>()?;
    let mut run = Run { plan, grace, keys, out: Output(None) };
    for b in 0..1u32 << grace.bits {
        run.bucket(&b.to_string(), 0, true)?;
    }
    match run.out.0.take() {
        Some(w) => w.into_inner().map_err(frame_err("encoding IPC")),
        None => run.empty(),
    }
}

#[cfg(test)]
#[path = "grace_tests.rs"]
mod tests;
