use napi::bindgen_prelude::*;
use napi_derive::napi;
use spillway_core::shard::{self, Sections};

use crate::error::to_js;

/// Writes a binary shuffle shard from the columns JS made of its items
/// (see core's shard module). On the calling thread: a copy of a few MiB,
/// less than a hop to the pool and back.
#[napi(ts_return_type = "Buffer")]
#[allow(clippy::too_many_arguments)]
pub fn shard_encode(env: Env, items: u32, wide: bool, numbers: Buffer, lengths: Buffer, chars: Buffer, tags: Buffer, v8: Buffer) -> Result<Unknown<'static>> {
    let out = shard::encode(&Sections { items, wide, numbers: &numbers, lengths: &lengths, chars: &chars, tags: &tags, v8: &v8 }).map_err(to_js)?;
    crate::buffer::to_js_buffer(&env, out)
}

/// A binary shard checked whole: [items, wide (0/1), numbersAt, numbers,
/// lengthsAt, strings, charsAt, charBytes, tagsAt, tags, v8At, v8Bytes,
/// v8Items], offsets from the start of `data`.
#[napi]
pub fn shard_layout(data: Buffer) -> Result<Vec<u32>> {
    let l = shard::layout(&data).map_err(to_js)?;
    Ok([l.items as usize, l.wide as usize, l.numbers_at, l.numbers, l.lengths_at, l.strings, l.chars_at, l.char_bytes, l.tags_at, l.tags, l.v8_at, l.v8_bytes, l.v8_items as usize].map(|v| v as u32).to_vec())
}
