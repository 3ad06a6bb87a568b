//! Frames: the task-level entry points of `spillway_core::frame::plan`, a
//! plan (JSON) and IPC bytes in, IPC bytes out, off the JS thread.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::frame::{from_ipc, plan, read_ndjson, read_parquet, write};

use crate::error::{to_js, to_u64};

/// The unified schema of CSV files, as JSON `[{ name, type, nullable }]`,
/// from the first `sample_bytes` of each (on the calling thread: a frame's
/// schema is known when it is built).
#[napi]
pub fn frame_infer_csv(paths: Vec<String>, options: String, sample_bytes: f64) -> Result<String> {
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    plan::infer_csv(&paths, &options, to_u64("sampleBytes", sample_bytes)? as usize).map_err(to_js)
}

/// A CSV file's block starts (byte offsets, 0 first) at true record starts,
/// or null when cuts at line ends will do (no quoted value spans lines in
/// its sample, and `force` is off). On the calling thread: readCsv returns
/// its frame synchronously, its partitions known (the scan reads the whole
/// file, at memchr's speed through quoted text).
#[napi]
pub fn frame_csv_block_starts(path: String, options: String, blocksize: f64, sample_bytes: f64, force: bool) -> Result<Option<Vec<f64>>> {
    let starts = plan::csv_block_starts(std::path::Path::new(&path), &options, to_u64("blocksize", blocksize)?, to_u64("sampleBytes", sample_bytes)? as usize, force).map_err(to_js)?;
    Ok(starts.map(|v| v.into_iter().map(|s| s as f64).collect()))
}

/// Throws ERR_SPILLWAY_FRAME where the regex crate does not take `pattern`.
#[napi]
pub fn frame_check_pattern(pattern: String) -> Result<()> {
    plan::check_pattern(&pattern).map_err(to_js)
}

/// The unified schema of Parquet files and each file's row groups (JSON
/// `{ schema, rowGroups }`), from their footers, on the calling thread.
#[napi]
pub fn frame_infer_parquet(paths: Vec<String>, columns: Option<Vec<String>>) -> Result<String> {
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    read_parquet::infer_parquet_json(&paths, columns.as_deref()).map_err(to_js)
}

/// The unified schema of NDJSON files, as frame_infer_csv's, from the first `sample_bytes` of each.
#[napi]
pub fn frame_infer_ndjson(paths: Vec<String>, columns: Option<Vec<String>>, sample_bytes: f64) -> Result<String> {
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    read_ndjson::infer_ndjson_json(&paths, columns.as_deref(), to_u64("sampleBytes", sample_bytes)? as usize).map_err(to_js)
}

#[derive(Clone, Copy)]
enum Kind {
    Partition,
    Combine,
    Write,
}

pub struct FrameTask {
    kind: Kind,
    plan: String,
    inputs: Vec<Buffer>,
}

impl Task for FrameTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        let inputs: Vec<&[u8]> = self.inputs.iter().map(|b| b.as_ref()).collect();
        match self.kind {
            Kind::Partition => plan::run_partition(&self.plan, &inputs),
            Kind::Combine => plan::run_combine(&self.plan, &inputs),
            Kind::Write => write::write_partition(&self.plan, &inputs).map(String::into_bytes),
        }
        .map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::shared::to_js_made(&env, out)
    }
}

/// One frame partition: its source read (a CSV block, or `inputs`' IPC
/// batches), its steps applied, its partial aggregation done; IPC bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_run_partition(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameTask> {
    AsyncTask::new(FrameTask { kind: Kind::Partition, plan, inputs })
}

/// Partial aggregation states (IPC) merged, and finished when the plan says `final`.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_run_combine(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameTask> {
    AsyncTask::new(FrameTask { kind: Kind::Combine, plan, inputs })
}

/// A partition (its IPC bytes) written to a file as the plan says; the path
/// written, as UTF-8 bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_write_partition(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameTask> {
    AsyncTask::new(FrameTask { kind: Kind::Write, plan, inputs })
}

#[napi(object)]
pub struct FrameSplit {
    /// `[{ name, type, nullable }]` JSON.
    pub schema: String,
    pub parts: Vec<Buffer>,
}

/// An apache-arrow table's IPC stream cut into `n` partitions of
/// consecutive rows (fromArrow), on the calling thread: the table is in
/// memory already, and its frame's schema is known when it is built.
#[napi]
pub fn frame_split_ipc(bytes: Buffer, n: u32) -> Result<FrameSplit> {
    let (schema, parts) = from_ipc::split_ipc(&bytes, n as usize).map_err(to_js)?;
    Ok(FrameSplit { schema, parts: parts.into_iter().map(Buffer::from).collect() })
}
