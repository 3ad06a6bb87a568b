//! How a spilled value is encoded, as Dask's `maybe_compress` decides it:
//! small values and values whose sample does not shrink by 10% are stored
//! raw, so random floats cost no compression CPU. 'auto' (and a '+shuffle'
//! setting) weighs the byte shuffle on the same sample, so a typed value is
//! shuffled only where that beats the codec alone.

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

/// The filter whose compressed sample is smallest, if any saves 10%.
fn best_on_sample(
    data: &[u8],
    codec: Codec,
    level: i32,
    filters: &[Filter],
) -> Result<Option<Filter>> {
    let mut best: Option<(usize, Filter)> = None;
    let mut sampled = 0;
    for &f in filters {
        let s = sample(data, f.element_size());
        sampled = s.len();
        let n = compress_payload(&s, codec, f, level)?.len();
        if best.is_none_or(|(b, _)| n < b) {
            best = Some((n, f));
        }
    }
    Ok(best
        .filter(|(n, _)| *n as f64 <= WORTHWHILE * sampled as f64)
        .map(|(_, f)| f))
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
        match best_on_sample(data, codec, level, &filters)? {
            Some(f) => filters = vec![f],
            None => return Ok(raw_frame(data)),
        }
    }
    // Too small to sample: each candidate on the whole value is cheap.
    let mut best: Option<(Vec<u8>, Filter)> = None;
    for f in filters {
        let payload = compress_payload(data, codec, f, level)?;
        if best.as_ref().is_none_or(|(b, _)| payload.len() < b.len()) {
            best = Some((payload, f));
        }
    }
    let (payload, filter) = best.expect("at least one candidate");
    if payload.len() as f64 > WORTHWHILE * data.len() as f64 {
        return Ok(raw_frame(data));
    }
    Ok(frame(codec, filter, level, data.len(), Cow::Owned(payload)))
}
