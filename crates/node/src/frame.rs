//! Frames: the task-level entry points of `spillway_core::frame::plan`, a
//! plan (JSON) and IPC bytes in, IPC bytes out, off the JS thread.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::frame::plan;

use crate::error::{to_js, to_u64};

/// The unified schema of CSV files, as JSON `[{ name, type, nullable }]`,
/// from the first `sample_bytes` of each (on the calling thread: a frame's
/// schema is known when it is built).
#[napi]
pub fn frame_infer_csv(paths: Vec<String>, options: String, sample_bytes: f64) -> Result<String> {
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    plan::infer_csv(&paths, &options, to_u64("sampleBytes", sample_bytes)? as usize).map_err(to_js)
}

/// Throws ERR_SPILLWAY_FRAME where the regex crate does not take `pattern`.
#[napi]
pub fn frame_check_pattern(pattern: String) -> Result<()> {
    plan::check_pattern(&pattern).map_err(to_js)
}

#[derive(Clone, Copy)]
enum Kind {
    Partition,
    Combine,
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
        }
        .map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
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
