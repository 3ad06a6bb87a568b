use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::chunk::{ChunkSpec, Dtype, Op, Partial};
use spillway_core::codec::Method;
use spillway_core::spill::{PieceBytes, SpillBuffer, SpillConfig, SpillMetrics, StoredBytes};

use crate::chunk::{from_partial, parse_op, to_spec, JsChunkSpec};
use crate::rechunk::{to_region, to_regions};
use spillway_core::chunk::rechunk::Region;
use crate::error::{to_js, to_u64};

#[napi(object)]
pub struct NativeSpillOptions {
    pub dir: String,
    pub memory_limit: f64,
    /// A fraction of memoryLimit; absent: off (managed memory spills nothing by itself).
    pub target: Option<f64>,
    pub codec: String,
    pub level: Option<i32>,
    /// Bytes the spill files may take on disk; absent: no cap.
    pub max_spill: Option<f64>,
}

#[napi(object)]
pub struct SpilledBytes {
    pub memory: f64,
    pub disk: f64,
}

#[napi(object)]
pub struct NativeSpillMetrics {
    pub managed_bytes: f64,
    pub memory_bytes: f64,
    pub spilled_bytes: SpilledBytes,
    pub memory_count: f64,
    pub disk_count: f64,
    pub spill_count: f64,
    pub unspill_count: f64,
    pub spill_bytes_written: f64,
    pub spill_seconds: f64,
    pub unspill_bytes_read: f64,
    pub unspill_seconds: f64,
    pub write_failures: f64,
    pub last_write_error: Option<String>,
    pub last_write_no_space: bool,
    pub consecutive_write_failures: f64,
    pub spill_backoff_seconds: f64,
    /// Absent while the target is off.
    pub target_bytes: Option<f64>,
    pub memory_limit: f64,
    pub spill_cap_refusals: f64,
    pub spill_cap_reached: bool,
}

fn to_js_metrics(m: SpillMetrics) -> NativeSpillMetrics {
    NativeSpillMetrics {
        managed_bytes: m.managed_bytes as f64,
        memory_bytes: m.memory_bytes as f64,
        spilled_bytes: SpilledBytes { memory: m.spilled_memory as f64, disk: m.spilled_disk as f64 },
        memory_count: m.memory_count as f64,
        disk_count: m.disk_count as f64,
        spill_count: m.spill_count as f64,
        unspill_count: m.unspill_count as f64,
        spill_bytes_written: m.spill_bytes_written as f64,
        spill_seconds: m.spill_seconds,
        unspill_bytes_read: m.unspill_bytes_read as f64,
        unspill_seconds: m.unspill_seconds,
        write_failures: m.write_failures as f64,
        last_write_error: m.last_write_error,
        last_write_no_space: m.last_write_no_space,
        consecutive_write_failures: m.consecutive_write_failures as f64,
        spill_backoff_seconds: m.spill_backoff_seconds,
        // Off is u64::MAX in the core: no byte count to report.
        target_bytes: (m.target_bytes != u64::MAX).then_some(m.target_bytes as f64),
        memory_limit: m.memory_limit as f64,
        spill_cap_refusals: m.spill_cap_refusals as f64,
        spill_cap_reached: m.spill_cap_reached,
    }
}

/// A chunk as `getFrame` hands it out: `frame` says whether `data` is a
/// whole spillway frame (for `decompress`) or the chunk's own bytes. Built
/// by hand in `resolve` (its bytes shared, not copied); the struct gives it
/// its TS type.
#[allow(dead_code)]
#[napi(object)]
pub struct NativeStoredBytes {
    pub frame: bool,
    pub data: Buffer,
}

/// What a SpillBuffer task does off the JS thread.
pub enum Job {
    /// The value and its element size (0: unknown).
    Set(String, Buffer, u8),
    /// A kernel's output that JS holds too (crate::shared), taken as it is.
    SetShared(String, Arc<Vec<u8>>, u8),
    Get(String),
    Peek(String),
    /// Peek for a reader that never writes the bytes: no copy.
    PeekShared(String),
    GetFrame(String),
    SetFrame(String, Buffer),
    SetTarget(Option<f64>),
    EvictUntil(u64),
    Generate(String, ChunkSpec),
    /// A new chunk's box, its element size, and its pieces: each a box and a key held here, or (no key) its bytes.
    Assemble(Region, usize, Vec<(Region, Option<String>, Option<Buffer>)>),
    Reduce(String, Dtype, Op),
    Close,
}

pub enum Outcome {
    Nothing,
    Data(Option<Vec<u8>>),
    Shared(Option<Arc<Vec<u8>>>),
    /// Whether the bytes are a frame, and the bytes.
    Stored(Option<(bool, Arc<Vec<u8>>)>),
    Count(u64),
    Partial(Option<Partial>),
}

pub struct SpillTask {
    buffer: Arc<SpillBuffer>,
    job: Option<Job>,
}

impl Task for SpillTask {
    type Output = Outcome;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Outcome> {
        let b = &self.buffer;
        let job = self.job.take().expect("a task runs once");
        let out = match job {
            // The bytes are copied here, off the JS thread, into memory the
            // buffer owns.
            Job::Set(key, data, element) => b.set_typed(&key, spillway_core::pool::copy_of(&data), element).map(|_| Outcome::Nothing),
            Job::SetShared(key, data, element) => b.set_shared(&key, data, element).map(|_| Outcome::Nothing),
            // A chunk the buffer still holds is copied, so JS can never write into
            // it; one read from disk and not kept is handed over as it is.
            Job::Get(key) => b.get(&key).map(|d| Outcome::Data(d.map(|a| Arc::unwrap_or_clone(a)))),
            Job::Peek(key) => b.peek(&key).map(|d| Outcome::Data(d.map(|a| Arc::unwrap_or_clone(a)))),
            Job::PeekShared(key) => b.peek(&key).map(Outcome::Shared),
            // Bytes for a socket, which only reads them: a chunk still held
            // is shared, not copied.
            Job::GetFrame(key) => b.get_frame(&key).map(|s| {
                Outcome::Stored(s.map(|s| match s {
                    StoredBytes::Frame(f) => (true, Arc::new(f)),
                    StoredBytes::Raw(d) => (false, d),
                }))
            }),
            // Verified and written from the JS Buffer as it is, off the JS thread; never decoded, never copied.
            Job::SetFrame(key, frame) => b.set_frame(&key, &frame).map(Outcome::Count),
            Job::SetTarget(t) => b.set_target(t).map(|_| Outcome::Nothing),
            Job::EvictUntil(bytes) => Ok(Outcome::Count(b.evict_until(bytes))),
            Job::Generate(key, spec) => b.generate(&key, &spec).map(Outcome::Count),
            Job::Assemble(out, item, pieces) => {
                let refs: Vec<(Region, PieceBytes<'_>)> = pieces
                    .iter()
                    .map(|(r, k, d)| (r.clone(), k.as_deref().map_or_else(|| PieceBytes::Bytes(d.as_deref().unwrap_or(&[])), PieceBytes::Key)))
                    .collect();
                b.assemble(&out, item, &refs).map(Outcome::Data)
            }
            Job::Reduce(key, dtype, op) => b.reduce(&key, dtype, op).map(Outcome::Partial),
            Job::Close => {
                b.close();
                Ok(Outcome::Nothing)
            }
        };
        out.map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Outcome) -> Result<Unknown<'static>> {
        let v = match out {
            Outcome::Nothing => ().into_unknown(&env)?,
            Outcome::Data(Some(d)) => crate::buffer::to_js_buffer(&env, d)?,
            Outcome::Shared(Some(d)) => crate::shared::to_js_shared(&env, d)?,
            Outcome::Data(None) | Outcome::Shared(None) | Outcome::Stored(None) | Outcome::Partial(None) => Null.into_unknown(&env)?,
            Outcome::Stored(Some((frame, data))) => {
                let mut o = Object::new(&env)?;
                o.set("frame", frame)?;
                o.set("data", crate::shared::to_js_shared(&env, data)?)?;
                o.into_unknown(&env)?
            }
            Outcome::Count(n) => (n as f64).into_unknown(&env)?,
            Outcome::Partial(Some(p)) => from_partial(p).into_unknown(&env)?,
        };
        // SAFETY: the value is handed straight back to JS by the runtime.
        Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(v) })
    }
}

/// The native SpillBuffer; the TypeScript class `SpillBuffer` wraps it.
#[napi]
pub struct NativeSpillBuffer {
    inner: Arc<SpillBuffer>,
}

#[napi]
impl NativeSpillBuffer {
    #[napi(constructor)]
    pub fn new(options: NativeSpillOptions) -> Result<Self> {
        let method = Method::parse(&options.codec).map_err(to_js)?;
        let config = SpillConfig {
            dir: options.dir.into(),
            memory_limit: to_u64("memoryLimit", options.memory_limit)?,
            target: options.target,
            codec: method.codec,
            shuffle: method.shuffle,
            level: options.level,
            max_spill: options.max_spill.map(|b| to_u64("maxSpill", b)).transpose()?,
        };
        Ok(NativeSpillBuffer { inner: Arc::new(SpillBuffer::new(config).map_err(to_js)?) })
    }

    fn task(&self, job: Job) -> AsyncTask<SpillTask> {
        AsyncTask::new(SpillTask { buffer: self.inner.clone(), job: Some(job) })
    }

    /// Stores a value; `element_size` is its TypedArray's BYTES_PER_ELEMENT
    /// (omitted or 0 when unknown), the unit the shuffle regroups.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn set(&self, key: String, data: Buffer, element_size: Option<u32>) -> Result<AsyncTask<SpillTask>> {
        let element = crate::codec::element_size(element_size)?;
        if let Some(made) = crate::shared::take(&data) {
            return Ok(self.task(Job::SetShared(key, made, element)));
        }
        spillway_core::pool::reserve(data.len(), false);
        Ok(self.task(Job::Set(key, data, element)))
    }

    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn get(&self, key: String) -> AsyncTask<SpillTask> {
        if let Some(len) = self.inner.len_of(&key) {
            spillway_core::pool::reserve(len as usize, false);
        }
        self.task(Job::Get(key))
    }

    /// Like get, but a spilled chunk is read without coming back into memory.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn peek(&self, key: String) -> AsyncTask<SpillTask> {
        self.task(Job::Peek(key))
    }

    /// `peek` for a reader that never writes the bytes (a frame kernel's
    /// input): the Buffer is the stored bytes themselves, not a copy.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn peek_shared(&self, key: String) -> AsyncTask<SpillTask> {
        self.task(Job::PeekShared(key))
    }

    /// A spilled chunk as its compressed frame, verified but not decoded and
    /// left on disk; a chunk in memory as its bytes; null when not held.
    #[napi(ts_return_type = "Promise<NativeStoredBytes | null>")]
    pub fn get_frame(&self, key: String) -> AsyncTask<SpillTask> {
        self.task(Job::GetFrame(key))
    }

    /// Stores a frame (another buffer's spilled chunk, as `getFrame` gave
    /// it) straight on disk, verified, not decoded; resolves to the chunk's
    /// size. A bad frame rejects with ERR_SPILLWAY_CORRUPT_FRAME.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn set_frame(&self, key: String, frame: Buffer) -> AsyncTask<SpillTask> {
        self.task(Job::SetFrame(key, frame))
    }

    #[napi]
    pub fn has(&self, key: String) -> bool {
        self.inner.has(&key)
    }

    #[napi]
    pub fn delete(&self, key: String) -> Result<bool> {
        self.inner.delete(&key).map_err(to_js)
    }

    #[napi]
    pub fn keys(&self) -> Vec<String> {
        self.inner.keys()
    }

    /// null turns the target off.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn set_target(&self, target: Option<f64>) -> AsyncTask<SpillTask> {
        self.task(Job::SetTarget(target))
    }

    /// Spills LRU chunks until at most `bytes` stay in memory; resolves to the
    /// number of chunks spilled.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn evict_until(&self, bytes: f64) -> Result<AsyncTask<SpillTask>> {
        Ok(self.task(Job::EvictUntil(to_u64("bytes", bytes)?)))
    }

    /// Generates a chunk straight into the buffer; resolves to its size.
    #[napi(ts_return_type = "Promise<number>")]
    pub fn generate(&self, key: String, spec: JsChunkSpec) -> Result<AsyncTask<SpillTask>> {
        Ok(self.task(Job::Generate(key, to_spec(&spec)?)))
    }

    /// Reduces a held chunk where it lies (a spilled one is read without
    /// being brought back into memory); resolves to null when the key is
    /// not held.
    #[napi(ts_return_type = "Promise<JsPartial | null>")]
    pub fn reduce(&self, key: String, dtype: String, op: String) -> Result<AsyncTask<SpillTask>> {
        let (dtype, op) = parse_op(&dtype, &op)?;
        Ok(self.task(Job::Reduce(key, dtype, op)))
    }

    /// A rechunk's new chunk (the box lo..hi, `item_size`-byte elements)
    /// made from its pieces: box i (lo then hi, flat in `boxes`) is the key
    /// `keys[i]` held here, or, where that key is '', the next of `inline`.
    /// Resolves to null when a keyed piece is not held.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn assemble(&self, lo: Vec<f64>, hi: Vec<f64>, item_size: u32, boxes: Vec<f64>, keys: Vec<String>, inline: Vec<Buffer>) -> Result<AsyncTask<SpillTask>> {
        let out = to_region(&lo, &hi)?;
        let regions = to_regions(lo.len(), &boxes)?;
        let wanted = keys.iter().filter(|k| k.is_empty()).count();
        if regions.len() != keys.len() || wanted != inline.len() {
            return Err(crate::error::invalid("keys", format!("{} boxes, {} keys and {} inline pieces ({wanted} keys are '')", regions.len(), keys.len(), inline.len())));
        }
        let mut inline = inline.into_iter();
        let pieces = regions.into_iter().zip(keys).map(|(r, k)| if k.is_empty() { (r, None, inline.next()) } else { (r, Some(k), None) }).collect();
        spillway_core::pool::reserve(out.len() * item_size as usize, true);
        Ok(self.task(Job::Assemble(out, item_size as usize, pieces)))
    }

    #[napi]
    pub fn retry_spill_now(&self) {
        self.inner.retry_spill_now()
    }

    #[napi]
    pub fn metrics(&self) -> NativeSpillMetrics {
        to_js_metrics(self.inner.metrics())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<SpillTask> {
        self.task(Job::Close)
    }
}

/// Whether large buffers made from now on are marked for transparent huge
/// pages (on by default; workers turn it off).
#[napi]
pub fn set_huge_pages(on: bool) {
    spillway_core::pool::set_huge_pages(on)
}

/// Drops the idle chunk buffers kept for reuse; returns the bytes freed.
/// Workers call it first when process memory passes the spill threshold.
#[napi]
pub fn release_pooled_memory() -> f64 {
    spillway_core::pool::clear() as f64
}
