use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::text::{self, FileBatch, FileFault, LineIndex, PlannedFile};

use crate::error::invalid;

/// Why file `index` could not be read: `kind` is 'open' or 'read' (with
/// `errno` and `message`), 'type' (`what` it is now: "a FIFO", ...) or
/// 'changed' (what fstat found, for the message to name the change).
#[napi(object)]
pub struct JsFileFault {
    pub index: u32,
    pub kind: String,
    pub errno: Option<i32>,
    pub message: Option<String>,
    pub what: Option<String>,
    pub size: Option<f64>,
    pub mtime_ms: Option<f64>,
    pub ctime_ms: Option<f64>,
    pub ino: Option<f64>,
}

/// Line positions (core's `LineIndex`): `pieces` holds (first byte, end
/// byte, first line, 1 if all ASCII else 0) per piece; starts and ends are UTF-16 units into the
/// piece's decoded string.
#[napi(object)]
pub struct JsLineIndex {
    pub starts: Uint32Array,
    pub ends: Uint32Array,
    pub pieces: Float64Array,
    pub file_lines: Uint32Array,
}

/// Files read in one call: their bytes back to back and where each ends;
/// `lines` unless not asked for or the bytes are not valid UTF-8
/// (`invalidFile` then names the first file that is not); `fault` instead
/// of the rest when a file could not be read.
#[napi(object)]
pub struct JsTextFiles {
    pub bytes: Option<Buffer>,
    pub file_ends: Option<Float64Array>,
    pub lines: Option<JsLineIndex>,
    pub invalid_file: Option<u32>,
    pub fault: Option<JsFileFault>,
}

pub(crate) fn js_index(ix: LineIndex) -> JsLineIndex {
    let pieces: Vec<f64> = ix.pieces.iter().flat_map(|&(s, e, f, ascii)| [s as f64, e as f64, f as f64, ascii as u8 as f64]).collect();
    JsLineIndex { starts: ix.starts.into(), ends: ix.ends.into(), pieces: pieces.into(), file_lines: ix.file_lines.into() }
}

pub(crate) fn js_fault(index: usize, f: FileFault) -> JsFileFault {
    let mut out = JsFileFault { index: index as u32, kind: String::new(), errno: None, message: None, what: None, size: None, mtime_ms: None, ctime_ms: None, ino: None };
    match f {
        FileFault::Open(e) => (out.kind, out.errno, out.message) = ("open".into(), e.raw_os_error(), Some(e.to_string())),
        FileFault::Read(e) => (out.kind, out.errno, out.message) = ("read".into(), e.raw_os_error(), Some(e.to_string())),
        FileFault::NotRegular(what) => (out.kind, out.what) = ("type".into(), Some(what.into())),
        FileFault::Changed(st) => {
            out.kind = "changed".into();
            (out.size, out.mtime_ms, out.ctime_ms, out.ino) = (Some(st.size as f64), Some(st.mtime_ms), Some(st.ctime_ms), Some(st.ino));
        }
    }
    out
}

pub enum Read {
    Done { batch: FileBatch, lines: Option<LineIndex>, invalid_file: Option<u32> },
    Fault(usize, FileFault),
}

/// The first file of the batch whose bytes are not valid UTF-8.
fn first_invalid_file(batch: &FileBatch) -> Option<u32> {
    let mut start = 0;
    for (i, &end) in batch.ends.iter().enumerate() {
        if text::first_invalid_utf8(&batch.bytes[start..end]).is_some() {
            return Some(i as u32);
        }
        start = end;
    }
    None
}

pub struct ReadFilesTask {
    files: Vec<PlannedFile>,
    delimiter: Option<Vec<u8>>,
    piece: usize,
}

impl ReadFilesTask {
    fn run(&self) -> Read {
        let batch = match text::read_planned(&self.files) {
            Ok(b) => b,
            Err((i, f)) => return Read::Fault(i, f),
        };
        let Some(delim) = &self.delimiter else { return Read::Done { batch, lines: None, invalid_file: None } };
        if let Some(bad) = first_invalid_file(&batch) {
            return Read::Done { batch, lines: None, invalid_file: Some(bad) };
        }
        let lines = text::index_lines(&batch.bytes, &batch.ends, delim, self.piece);
        Read::Done { batch, lines: Some(lines), invalid_file: None }
    }

    fn new(paths: Vec<String>, plans: Float64Array, delimiter: Option<Buffer>, piece: u32) -> Result<Self> {
        if plans.len() != paths.len() * 4 {
            return Err(invalid("plans", format!("{} numbers for {} files: 4 a file (size, mtimeMs, ctimeMs, ino)", plans.len(), paths.len())));
        }
        if delimiter.as_ref().is_some_and(|d| d.is_empty()) {
            return Err(invalid("delimiter", "an empty delimiter: at least one byte"));
        }
        let opt = |v: f64| (!v.is_nan()).then_some(v);
        let files = paths
            .into_iter()
            .zip(plans.chunks(4))
            .map(|(p, n)| PlannedFile { path: p.into(), size: n[0] as u64, mtime_ms: n[1], ctime_ms: opt(n[2]), ino: opt(n[3]) })
            .collect();
        Ok(ReadFilesTask { files, delimiter: delimiter.map(|d| d.to_vec()), piece: piece as usize })
    }
}

fn js_read(out: Read) -> JsTextFiles {
    match out {
        Read::Fault(i, f) => JsTextFiles { bytes: None, file_ends: None, lines: None, invalid_file: None, fault: Some(js_fault(i, f)) },
        Read::Done { batch, lines, invalid_file } => {
            let ends: Vec<f64> = batch.ends.iter().map(|&e| e as f64).collect();
            JsTextFiles { bytes: Some(batch.bytes.into()), file_ends: Some(ends.into()), lines: lines.map(js_index), invalid_file, fault: None }
        }
    }
}

impl Task for ReadFilesTask {
    type Output = Read;
    type JsValue = JsTextFiles;

    fn compute(&mut self) -> Result<Read> {
        Ok(self.run())
    }

    fn resolve(&mut self, _: Env, out: Read) -> Result<JsTextFiles> {
        Ok(js_read(out))
    }
}

/// A `readTextFiles` started on a thread of its own, for a caller that
/// cannot await: a bag partition's lines are consumed synchronously, and
/// the next batch of its files is read while the steps run over this one.
#[napi]
pub struct TextFilesRead {
    handle: Option<std::thread::JoinHandle<Read>>,
}

#[napi]
impl TextFilesRead {
    /// The read's result, waiting for it if it is still running; once only.
    #[napi]
    pub fn wait(&mut self) -> Result<JsTextFiles> {
        let h = self.handle.take().ok_or_else(|| invalid("wait", "the read was already taken"))?;
        let out = h.join().map_err(|_| Error::from_reason("[ERR_SPILLWAY_READ] the file reading thread panicked"))?;
        Ok(js_read(out))
    }
}

/// `readTextFiles` started now on its own thread; `wait()` gives its result.
#[napi]
pub fn start_text_files(paths: Vec<String>, plans: Float64Array, delimiter: Option<Buffer>, piece: u32) -> Result<TextFilesRead> {
    let task = ReadFilesTask::new(paths, plans, delimiter, piece)?;
    let handle = std::thread::Builder::new().name("spillway-read".into()).spawn(move || task.run()).map_err(|e| Error::from_reason(format!("[ERR_SPILLWAY_READ] cannot start a reading thread: {e}")))?;
    Ok(TextFilesRead { handle: Some(handle) })
}

/// Reads planned files whole in one call off the JS thread: each opened
/// without blocking, fstat'ed and checked against `plans` (per file: size,
/// whole-ms mtime, whole-ms ctime or NaN, inode or NaN), the first that
/// fails named in `fault`. With a UTF-8 `delimiter`, also finds the lines
/// of valid UTF-8 files in pieces of about `piece` bytes.
#[napi(ts_return_type = "Promise<JsTextFiles>")]
pub fn read_text_files(paths: Vec<String>, plans: Float64Array, delimiter: Option<Buffer>, piece: u32) -> Result<AsyncTask<ReadFilesTask>> {
    Ok(AsyncTask::new(ReadFilesTask::new(paths, plans, delimiter, piece)?))
}

pub struct IndexLinesTask {
    bytes: Vec<u8>,
    delimiter: Vec<u8>,
    piece: usize,
}

impl Task for IndexLinesTask {
    type Output = Option<LineIndex>;
    type JsValue = Option<JsLineIndex>;

    fn compute(&mut self) -> Result<Option<LineIndex>> {
        if text::first_invalid_utf8(&self.bytes).is_some() {
            return Ok(None);
        }
        Ok(Some(text::index_lines(&self.bytes, &[self.bytes.len()], &self.delimiter, self.piece)))
    }

    fn resolve(&mut self, _: Env, ix: Option<LineIndex>) -> Result<Option<JsLineIndex>> {
        Ok(ix.map(js_index))
    }
}

/// The lines of one block of UTF-8 text (its bytes copied, so JS may reuse
/// the Buffer), or null when the bytes are not valid UTF-8.
#[napi(ts_return_type = "Promise<JsLineIndex | null>")]
pub fn index_text_lines(bytes: Buffer, delimiter: Buffer, piece: u32) -> Result<AsyncTask<IndexLinesTask>> {
    if delimiter.is_empty() {
        return Err(invalid("delimiter", "an empty delimiter: at least one byte"));
    }
    Ok(AsyncTask::new(IndexLinesTask { bytes: bytes.to_vec(), delimiter: delimiter.to_vec(), piece: piece as usize }))
}

/// Planning's stat: per path, 6 numbers: state (0 could not be stat'ed,
/// 1 a regular file, 2 not a file), size, mtimeMs, ctimeMs, ino, and the
/// index of an earlier path naming the same file (-1 if none).
#[napi]
pub fn stat_paths(paths: Vec<String>) -> Float64Array {
    let paths: Vec<std::path::PathBuf> = paths.into_iter().map(Into::into).collect();
    let mut out = Vec::with_capacity(paths.len() * 6);
    for s in text::stat_paths(&paths) {
        out.extend_from_slice(&match s {
            text::PathStat::Failed => [0.0, 0.0, 0.0, 0.0, 0.0, -1.0],
            text::PathStat::NotAFile => [2.0, 0.0, 0.0, 0.0, 0.0, -1.0],
            text::PathStat::File { stat, first } => [1.0, stat.size as f64, stat.mtime_ms, stat.ctime_ms, stat.ino, first.map_or(-1.0, |j| j as f64)],
        });
    }
    out.into()
}
