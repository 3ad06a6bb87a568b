//! A compressed text file read a block of whole lines at a time (core's
//! `CompressedLines`): `next` decodes off the JS thread, `nextSync` on it
//! for a caller that cannot await (steps that pull a partition's items).

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::text::{self, CompressedLines, FileFault, FileFormat, LineBlock, LineIndex, PlannedFile};

use crate::error::{invalid, to_js};
use crate::text::{js_fault, js_index, JsFileFault, JsLineIndex};

/// The next block: `bytes` (whole lines, the last possibly without its
/// delimiter) starting at byte `offset` of the decompressed content, with
/// their `lines` where asked for and the bytes are valid UTF-8; no `bytes`
/// once the content is all read; `fault` (index 0) when the file could not
/// be opened as planned.
#[napi(object)]
pub struct JsLineBlock {
    pub bytes: Option<Buffer>,
    pub offset: f64,
    pub lines: Option<JsLineIndex>,
    pub fault: Option<JsFileFault>,
}

struct State {
    plan: PlannedFile,
    format: FileFormat,
    delimiter: Vec<u8>,
    unit: usize,
    /// Index UTF-8 lines in `piece`-byte pieces (None: the caller splits).
    piece: Option<usize>,
    lines: Option<CompressedLines>,
}

pub enum Next {
    Block(LineBlock, Option<LineIndex>),
    Done,
    Fault(FileFault),
}

impl State {
    fn next(&mut self, target: usize) -> spillway_core::Result<Next> {
        if self.lines.is_none() {
            match CompressedLines::open(&self.plan, self.format, &self.delimiter, self.unit) {
                Ok(l) => self.lines = Some(l),
                Err(f) => return Ok(Next::Fault(f)),
            }
        }
        let Some(block) = self.lines.as_mut().expect("opened above").next_block(target)? else {
            return Ok(Next::Done);
        };
        let index = self.piece.filter(|_| text::first_invalid_utf8(&block.bytes).is_none()).map(|piece| text::index_lines(&block.bytes, &[block.bytes.len()], &self.delimiter, piece));
        Ok(Next::Block(block, index))
    }
}

fn js_next(n: Next) -> JsLineBlock {
    match n {
        Next::Done => JsLineBlock { bytes: None, offset: 0.0, lines: None, fault: None },
        Next::Fault(f) => JsLineBlock { bytes: None, offset: 0.0, lines: None, fault: Some(js_fault(0, f)) },
        Next::Block(b, ix) => JsLineBlock { bytes: Some(b.bytes.into()), offset: b.offset as f64, lines: ix.map(js_index), fault: None },
    }
}

fn run(state: &Mutex<State>, target: usize) -> Result<Next> {
    let mut s = state.lock().map_err(|_| Error::from_reason("[ERR_SPILLWAY_READ] a compressed file's reader panicked"))?;
    s.next(target).map_err(to_js)
}

pub struct NextBlock {
    state: Arc<Mutex<State>>,
    target: usize,
}

impl Task for NextBlock {
    type Output = Next;
    type JsValue = JsLineBlock;

    fn compute(&mut self) -> Result<Next> {
        run(&self.state, self.target)
    }

    fn resolve(&mut self, _: Env, n: Next) -> Result<JsLineBlock> {
        Ok(js_next(n))
    }
}

/// One compressed file's lines, a block at a time, in order.
#[napi]
pub struct CompressedLinesReader {
    state: Arc<Mutex<State>>,
}

#[napi]
impl CompressedLinesReader {
    /// The next block of about `target` decompressed bytes, decoded off the JS thread.
    #[napi(ts_return_type = "Promise<JsLineBlock>")]
    pub fn next(&self, target: u32) -> AsyncTask<NextBlock> {
        AsyncTask::new(NextBlock { state: Arc::clone(&self.state), target: target as usize })
    }

    /// `next`, on the JS thread.
    #[napi]
    pub fn next_sync(&self, target: u32) -> Result<JsLineBlock> {
        Ok(js_next(run(&self.state, target as usize)?))
    }
}

/// A reader of the planned file `path` (`plan`: size, whole-ms mtime,
/// whole-ms ctime or NaN, inode or NaN), compressed in `format` ('gzip',
/// 'zstd', 'lz4'), cut after `delimiter` where it starts on a `unit`-byte
/// code unit; with `piece`, UTF-8 lines indexed in pieces of that many
/// bytes. Nothing is opened until the first block is asked for.
#[napi]
pub fn open_compressed_lines(path: String, plan: Float64Array, format: String, delimiter: Buffer, unit: u32, piece: Option<u32>) -> Result<CompressedLinesReader> {
    if plan.len() != 4 {
        return Err(invalid("plan", format!("{} numbers: 4 (size, mtimeMs, ctimeMs, ino)", plan.len())));
    }
    if delimiter.is_empty() {
        return Err(invalid("delimiter", "an empty delimiter: at least one byte"));
    }
    let format = FileFormat::parse(&format).map_err(to_js)?;
    let opt = |v: f64| (!v.is_nan()).then_some(v);
    let plan = PlannedFile { path: path.into(), size: plan[0] as u64, mtime_ms: plan[1], ctime_ms: opt(plan[2]), ino: opt(plan[3]) };
    let state = State { plan, format, delimiter: delimiter.to_vec(), unit: unit.max(1) as usize, piece: piece.map(|p| p as usize), lines: None };
    Ok(CompressedLinesReader { state: Arc::new(Mutex::new(state)) })
}
