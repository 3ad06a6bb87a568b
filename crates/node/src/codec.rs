use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::codec::{self, Codec};
use spillway_core::pool;

use crate::error::to_js;

/// Codec names compiled into this build ('auto' resolves to 'lz4').
#[napi]
pub fn available_codecs() -> Vec<String> {
    codec::available().into_iter().map(String::from).collect()
}

pub struct CompressTask {
    data: Buffer,
    codec: Codec,
    level: Option<i32>,
}

impl Task for CompressTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        codec::encode_to_vec(&self.data, self.codec, self.level).map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// Compresses `data` into a spillway frame with exactly this codec.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn compress(data: Buffer, codec: String, level: Option<i32>) -> Result<AsyncTask<CompressTask>> {
    let codec = Codec::parse(&codec).map_err(to_js)?;
    codec.resolve_level(level).map_err(to_js)?;
    pool::reserve(codec::max_frame_len(codec, data.len()), false);
    Ok(AsyncTask::new(CompressTask { data, codec, level }))
}

/// `compress` on the calling thread, with no hop to the thread pool: for
/// small inputs, or callers that already run off the main thread.
#[napi(ts_return_type = "Buffer")]
pub fn compress_sync(env: Env, data: Buffer, codec: String, level: Option<i32>) -> Result<Unknown<'static>> {
    let codec = Codec::parse(&codec).map_err(to_js)?;
    let out = codec::encode_to_vec(&data, codec, level).map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}

/// `decompress` on the calling thread.
#[napi(ts_return_type = "Buffer")]
pub fn decompress_sync(env: Env, data: Buffer) -> Result<Unknown<'static>> {
    let out = codec::decode(&data).map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}

pub struct DecompressTask {
    data: Buffer,
}

impl Task for DecompressTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        codec::decode(&self.data).map_err(to_js)
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// Verifies and decodes a spillway frame.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn decompress(data: Buffer) -> AsyncTask<DecompressTask> {
    // A forged length only reserves what the pool would hold anyway.
    if let Ok(h) = codec::FrameHeader::parse(&data) {
        pool::reserve(h.decoded_len as usize, true);
    }
    AsyncTask::new(DecompressTask { data })
}

#[napi(object)]
pub struct FrameInfo {
    pub codec: String,
    pub level: i32,
    pub decoded_length: f64,
    pub payload_length: f64,
}

/// Reads a frame's header (without verifying the payload).
#[napi]
pub fn frame_info(data: Buffer) -> Result<FrameInfo> {
    let h = codec::FrameHeader::parse(&data).map_err(to_js)?;
    Ok(FrameInfo {
        codec: h.codec.name().to_string(),
        level: h.level as i32,
        decoded_length: h.decoded_len as f64,
        payload_length: h.payload_len as f64,
    })
}

pub struct StreamTask {
    data: Buffer,
    format: codec::stream::StreamFormat,
    decode: bool,
    level: Option<i32>,
}

impl Task for StreamTask {
    type Output = Vec<u8>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Vec<u8>> {
        if self.decode {
            codec::stream::decode_stream(self.format, &self.data).map_err(to_js)
        } else {
            codec::stream::encode_stream(self.format, &self.data, self.level).map_err(to_js)
        }
    }

    fn resolve(&mut self, env: Env, out: Vec<u8>) -> Result<Unknown<'static>> {
        crate::buffer::to_js_buffer(&env, out)
    }
}

/// The content of a standard compressed file ('zstd': .zst, 'lz4': an LZ4 frame stream), off the JS thread.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn decompress_file(data: Buffer, format: String) -> Result<AsyncTask<StreamTask>> {
    let format = codec::stream::StreamFormat::parse(&format).map_err(to_js)?;
    Ok(AsyncTask::new(StreamTask { data, format, decode: true, level: None }))
}

/// `data` as a standard compressed file ('zstd' or 'lz4'), off the JS thread.
#[napi(ts_return_type = "Promise<Buffer>")]
pub fn compress_file(data: Buffer, format: String, level: Option<i32>) -> Result<AsyncTask<StreamTask>> {
    let format = codec::stream::StreamFormat::parse(&format).map_err(to_js)?;
    Ok(AsyncTask::new(StreamTask { data, format, decode: false, level }))
}
