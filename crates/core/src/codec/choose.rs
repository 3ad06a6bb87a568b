//! How a spilled value is encoded, as Dask's `maybe_compress` decides it:
//! small values and values whose sample does not shrink by 10% are stored
//! raw, so random floats cost no compression CPU. 'auto' weighs the byte
//! shuffle on the same sample, so a typed value is shuffled only where that
//! beats both the codec alone and storing it raw.

use std::borrow::Cow;

use super::frame::{compress_payload, frame, raw_frame, Encoded};
use super::method::DEFAULT_ELEMENT;
use super::{Codec, Filter, Method, Shuffle};
use crate::error::Result;

/// Below this size compression is not worth a sample (Dask's `min_size`).
const MIN_COMPRESS: usize = 10_000;
const SAMPLE: usize = 10_000;
const SAMPLES: usize = 5;
/// Keep compressed output only when it saves at least 10% (as Dask does).
const WORTHWHILE: f64 = 0.9;
/// What 'auto' asks of the shuffle: 20%. Random float64 in [0, 1) saves
/// 12% with it (its exponent bytes), which on a page cache that writes a
/// few GB/s costs more in coding than the writes it saves (bench/limit,
/// BENCHMARKS.md 2026-12-05); smooth fields and small integers save far more.
const WORTHWHILE_SHUFFLED: f64 = 0.8;

/// The largest share of its input a payload may keep.
fn worthwhile(method: Method, filter: Filter) -> f64 {
    if method.shuffle == Shuffle::Auto && filter != Filter::None {
        WORTHWHILE_SHUFFLED
    } else {
        WORTHWHILE
    }
}

/// The smallest of `(size, filter, payload)` that is worth keeping for an
/// input of `len` bytes.
fn pick<T>(method: Method, len: usize, tried: Vec<(usize, Filter, T)>) -> Option<(Filter, T)> {
    tried
        .into_iter()
        .filter(|(n, f, _)| *n as f64 <= worthwhile(method, *f) * len as f64)
        .min_by_key(|(n, _, _)| *n)
        .map(|(_, f, t)| (f, t))
}

/// Encodes `data` as Dask's `maybe_compress` does, with the codec alone.
pub fn encode_if_smaller(data: &[u8], codec: Codec, level: Option<i32>) -> Result<Encoded<'_>> {
    encode_for_spill(data, Method::plain(codec), level, 0)
}

/// The filters worth trying for a value of `element_size` bytes (0: unknown).
fn candidates(method: Method, element_size: usize) -> Vec<Filter> {
    match method.shuffle {
        Shuffle::Never => vec![Filter::None],
        Shuffle::Always if element_size == 0 => vec![Filter::shuffle(DEFAULT_ELEMENT)],
        Shuffle::Always => vec![Filter::shuffle(element_size)],
        Shuffle::Auto if Filter::shuffle(element_size) == Filter::None => vec![Filter::None],
        Shuffle::Auto => vec![Filter::None, Filter::shuffle(element_size)],
    }
}

/// Five pieces spread over `data`, each starting on an element boundary so
/// a shuffle of the sample groups the same bytes as one of the whole would.
fn sample(data: &[u8], element: usize) -> Vec<u8> {
    let piece = SAMPLE - SAMPLE % element;
    let stride = data.len() / SAMPLES;
    let mut out = Vec::with_capacity(piece * SAMPLES);
    for i in 0..SAMPLES {
        let at = i * stride - (i * stride) % element;
        out.extend_from_slice(&data[at..at + piece]);
    }
    out
}

/// The filter whose compressed sample is smallest, of those worth keeping.
fn best_on_sample(data: &[u8], method: Method, level: i32, filters: &[Filter]) -> Result<Option<Filter>> {
    let mut tried = Vec::with_capacity(filters.len());
    let mut sampled = 0;
    for &f in filters {
        let s = sample(data, f.element_size());
        sampled = s.len();
        tried.push((compress_payload(&s, method.codec, f, level)?.len(), f, ()));
    }
    Ok(pick(method, sampled, tried).map(|(f, ())| f))
}

/// Encodes a value about to be spilled: raw when small or incompressible,
/// else with the method's codec, shuffled for `element_size` (0: unknown)
/// where the method and the sample say so.
pub fn encode_for_spill(
    data: &[u8],
    method: Method,
    level: Option<i32>,
    element_size: usize,
) -> Result<Encoded<'_>> {
    let codec = method.codec;
    let level = codec.resolve_level(level)?;
    if codec == Codec::None || data.len() < MIN_COMPRESS {
        return Ok(raw_frame(data));
    }
    let mut filters = candidates(method, element_size);
    if data.len() > SAMPLE * SAMPLES * 2 {
        match best_on_sample(data, method, level, &filters)? {
            Some(f) => filters = vec![f],
            None => return Ok(raw_frame(data)),
        }
    }
    // Too small to sample: each candidate on the whole value is cheap.
    let mut tried = Vec::with_capacity(filters.len());
    for f in filters {
        let payload = compress_payload(data, codec, f, level)?;
        tried.push((payload.len(), f, payload));
    }
    let Some((filter, payload)) = pick(method, data.len(), tried) else { return Ok(raw_frame(data)) };
    Ok(frame(codec, filter, level, data.len(), Cow::Owned(payload)))
}
