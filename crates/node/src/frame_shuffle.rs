//! The frame shuffle's entry points (`spillway_core::frame::shuffle`): a
//! plan (JSON) and IPC bytes in, bytes out, off the JS thread.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::frame::{broadcast, grace, shuffle};

use crate::error::to_js;

#[derive(Clone, Copy)]
enum Kind {
    Split,
    Collect,
    Sample,
    Boundaries,
    Broadcast,
    GraceRoute,
}

pub struct FrameShuffleTask {
    kind: Kind,
    plan: String,
    inputs: Vec<Buffer>,
}

impl Task for FrameShuffleTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        let inputs: Vec<&[u8]> = self.inputs.iter().map(|b| b.as_ref()).collect();
        match self.kind {
            Kind::Split => shuffle::run_split(&self.plan, &inputs),
            Kind::Collect => shuffle::run_collect(&self.plan, &inputs),
            Kind::Sample => shuffle::run_sample(&self.plan, &inputs),
            Kind::Boundaries => shuffle::run_boundaries(&self.plan, &inputs),
            Kind::Broadcast => broadcast::run_broadcast(&self.plan, &inputs),
            Kind::GraceRoute => grace::run_route(&self.plan, &inputs).map(|()| Vec::new()),
        }
        .map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::shared::to_js_made(&env, out)
    }
}

fn task(kind: Kind, plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameShuffleTask> {
    AsyncTask::new(FrameShuffleTask { kind, plan, inputs })
}

/// A partition run and its rows cut by output: `[count u32][output u32,
/// length u32]…` then each output's IPC shard (little-endian).
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_split(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameShuffleTask> {
    task(Kind::Split, plan, inputs)
}

/// An output's shards (each side's in order) concatenated, joined or sorted; IPC bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_collect(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameShuffleTask> {
    task(Kind::Collect, plan, inputs)
}

/// A partition's sample of sort keys; IPC bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_sample(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameShuffleTask> {
    task(Kind::Sample, plan, inputs)
}

/// Samples made into range boundaries; IPC bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_boundaries(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameShuffleTask> {
    task(Kind::Boundaries, plan, inputs)
}

/// A broadcast join task: its partition read by its plan and joined with the small side (built once per worker); IPC bytes.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_broadcast_join(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameShuffleTask> {
    task(Kind::Broadcast, plan, inputs)
}

/// A collect's shards of one side routed into its grace bucket files (see
/// `spillway_core::frame::grace`); an empty buffer once they are written.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn frame_grace_route(plan: String, inputs: Vec<Buffer>) -> AsyncTask<FrameShuffleTask> {
    task(Kind::GraceRoute, plan, inputs)
}
