//! The sort's fast path for up to four fixed-width keys (integers, floats,
//! dates, times, timestamps, durations, booleans): each key becomes a u64
//! whose unsigned order is arrow-row's byte order for that key under the
//! sort's options, held inline beside the row's index. Comparing two inline
//! words costs a fraction of a memcmp over variable row slices (the general
//! path's profile: memcmp and page faults of the row buffers led), and no
//! row buffer is built. Strings and other keys take the general path;
//! sort_keys_tests.rs checks the two give the same order.

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::{ArrowNativeType, NullBuffer};
use arrow_schema::DataType;

use super::partition::{columns, SortKey};
use crate::Result;

const SIGN: u64 = 1 << 63;

/// A row's keys, normalized: `rank` holds bit c when key c sorts in the
/// second group of its column (values when nulls come first, nulls when
/// they come last); a null's word is 0.
#[derive(Clone, Copy)]
pub(crate) struct Entry<const N: usize> {
    k: [u64; N],
    idx: u32,
    rank: u8,
}

impl<const N: usize> Entry<N> {
    #[inline(always)]
    fn cmp_key(&self, o: &Self) -> Ordering {
        for c in 0..N {
            let (a, b) = ((self.rank >> c) & 1, (o.rank >> c) & 1);
            match a.cmp(&b).then(self.k[c].cmp(&o.k[c])) {
                Ordering::Equal => continue,
                x => return x,
            }
        }
        Ordering::Equal
    }
}

/// How a column's values map to order-preserving words, or None: the general path.
#[derive(Clone, Copy)]
enum Kind {
    Signed(usize),
    Unsigned(usize),
    F32,
    F64,
    Bool,
}

fn kind(t: &DataType) -> Option<Kind> {
    use DataType::*;
    Some(match t {
        Int8 => Kind::Signed(1),
        Int16 => Kind::Signed(2),
        Int32 | Date32 | Time32(_) => Kind::Signed(4),
        Int64 | Date64 | Time64(_) | Timestamp(_, _) | Duration(_) => Kind::Signed(8),
        UInt8 => Kind::Unsigned(1),
        UInt16 => Kind::Unsigned(2),
        UInt32 => Kind::Unsigned(4),
        UInt64 => Kind::Unsigned(8),
        Float32 => Kind::F32,
        Float64 => Kind::F64,
        Boolean => Kind::Bool,
        _ => return None,
    })
}

/// Whether keys of these types (one per sort key) take the fast path.
pub(crate) fn fast(types: &[DataType]) -> bool {
    (1..=4).contains(&types.len()) && types.iter().all(|t| kind(t).is_some())
}

// f64::total_cmp's order as bits: negative values' magnitude bits flipped, then the sign moved to the top;
// of the value made canonical first (-0.0 as 0.0, one NaN after every number: canonical.rs).
#[inline(always)]
fn f64_word(v: f64) -> u64 {
    let s = super::canonical::f64_canonical(v).to_bits() as i64;
    ((s ^ ((((s >> 63) as u64) >> 1) as i64)) as u64) ^ SIGN
}

#[inline(always)]
fn f32_word(v: f32) -> u64 {
    let s = super::canonical::f32_canonical(v).to_bits() as i32;
    (((s ^ ((((s >> 31) as u32) >> 1) as i32)) as u32) ^ (1 << 31)) as u64
}

fn put<T: ArrowNativeType, const N: usize>(e: &mut [Entry<N>], c: usize, a: &dyn Array, key: &SortKey, f: impl Fn(T) -> u64) {
    let d = a.to_data();
    let vals: &[T] = &d.buffer::<T>(0)[..a.len()];
    let flip = if key.descending { u64::MAX } else { 0 };
    let (value_rank, null_rank) = if key.nulls_last { (0u8, 1u8 << c) } else { (1u8 << c, 0u8) };
    for (x, &v) in e.iter_mut().zip(vals) {
        x.k[c] = f(v) ^ flip;
        x.rank |= value_rank;
    }
    nulls_at(e, c, a.nulls(), null_rank);
}

fn nulls_at<const N: usize>(e: &mut [Entry<N>], c: usize, nulls: Option<&NullBuffer>, null_rank: u8) {
    if let Some(n) = nulls.filter(|n| n.null_count() > 0) {
        for i in n.iter().enumerate().filter(|(_, valid)| !valid).map(|(i, _)| i) {
            e[i].k[c] = 0;
            e[i].rank = (e[i].rank & !(1 << c)) | null_rank;
        }
    }
}

/// Fills key `c` of `e` (one entry per row of `a`).
fn fill<const N: usize>(e: &mut [Entry<N>], c: usize, a: &ArrayRef, key: &SortKey) -> bool {
    let a = a.as_ref();
    match kind(a.data_type()) {
        Some(Kind::Signed(1)) => put::<i8, N>(e, c, a, key, |v| (v as i64 as u64) ^ SIGN),
        Some(Kind::Signed(2)) => put::<i16, N>(e, c, a, key, |v| (v as i64 as u64) ^ SIGN),
        Some(Kind::Signed(4)) => put::<i32, N>(e, c, a, key, |v| (v as i64 as u64) ^ SIGN),
        Some(Kind::Signed(_)) => put::<i64, N>(e, c, a, key, |v| (v as u64) ^ SIGN),
        Some(Kind::Unsigned(1)) => put::<u8, N>(e, c, a, key, |v| v as u64),
        Some(Kind::Unsigned(2)) => put::<u16, N>(e, c, a, key, |v| v as u64),
        Some(Kind::Unsigned(4)) => put::<u32, N>(e, c, a, key, |v| v as u64),
        Some(Kind::Unsigned(_)) => put::<u64, N>(e, c, a, key, |v| v),
        Some(Kind::F32) => put::<f32, N>(e, c, a, key, f32_word),
        Some(Kind::F64) => put::<f64, N>(e, c, a, key, f64_word),
        Some(Kind::Bool) => {
            let b = a.as_boolean();
            let flip = if key.descending { u64::MAX } else { 0 };
            let (value_rank, null_rank) = if key.nulls_last { (0u8, 1u8 << c) } else { (1u8 << c, 0u8) };
            for (i, x) in e.iter_mut().enumerate() {
                x.k[c] = (b.values().value(i) as u64) ^ flip;
                x.rank |= value_rank;
            }
            nulls_at(e, c, b.nulls(), null_rank);
        }
        None => return false,
    }
    true
}

/// Entries for the rows of `keys` (columns of one batch), indices from `base`.
fn entries<const N: usize>(keys: &[ArrayRef], sort: &[SortKey], base: u32, out: &mut Vec<Entry<N>>) -> bool {
    let n = keys.first().map_or(0, |a| a.len());
    let at = out.len();
    out.extend((0..n as u32).map(|i| Entry { k: [0; N], idx: base + i, rank: 0 }));
    keys.iter().zip(sort).enumerate().all(|(c, (a, k))| fill(&mut out[at..], c, a, k))
}

fn key_names(sort: &[SortKey]) -> Vec<String> {
    sort.iter().map(|k| k.name.clone()).collect()
}

fn positions<const N: usize>(batches: &[RecordBatch], sort: &[SortKey]) -> Result<Vec<(usize, usize)>> {
    let mut e: Vec<Entry<N>> = Vec::with_capacity(batches.iter().map(|b| b.num_rows()).sum());
    let mut starts = Vec::with_capacity(batches.len());
    for b in batches {
        starts.push(e.len());
        entries(&columns(b, &key_names(sort), "sortBy")?, sort, e.len() as u32, &mut e);
    }
    // Unstable pdqsort with ties broken by index: the stable order, without merge sort's buffer.
    e.sort_unstable_by(|x, y| x.cmp_key(y).then(x.idx.cmp(&y.idx)));
    Ok(e.iter()
        .map(|x| {
            let i = x.idx as usize;
            let b = starts.partition_point(|&s| s <= i) - 1;
            (b, i - starts[b])
        })
        .collect())
}

/// The rows of `batches` in sorted order as (batch, row), stable; None when the keys need the general path.
pub(crate) fn sorted_positions(batches: &[RecordBatch], sort: &[SortKey], types: &[DataType]) -> Result<Option<Vec<(usize, usize)>>> {
    if !fast(types) {
        return Ok(None);
    }
    Ok(Some(match sort.len() {
        1 => positions::<1>(batches, sort)?,
        2 => positions::<2>(batches, sort)?,
        3 => positions::<3>(batches, sort)?,
        _ => positions::<4>(batches, sort)?,
    }))
}

fn ranges<const N: usize>(keys: &[ArrayRef], sort: &[SortKey], boundaries: &[ArrayRef]) -> Vec<u32> {
    let (mut rows, mut bounds) = (Vec::<Entry<N>>::new(), Vec::<Entry<N>>::new());
    entries(keys, sort, 0, &mut rows);
    entries(boundaries, sort, 0, &mut bounds);
    rows.iter().map(|r| bounds.partition_point(|b| b.cmp_key(r) != Ordering::Greater) as u32).collect()
}

/// partition::range_outputs on normalized keys, or None when the keys (or the boundaries' types) need the general path.
pub(crate) fn range_outputs(keys: &[ArrayRef], sort: &[SortKey], boundaries: &[ArrayRef]) -> Option<Vec<u32>> {
    let types: Vec<DataType> = keys.iter().map(|a| a.data_type().clone()).collect();
    if !fast(&types) || sort.len() != keys.len() || boundaries.len() != keys.len() || boundaries.iter().zip(&types).any(|(b, t)| b.data_type() != t) {
        return None;
    }
    Some(match sort.len() {
        1 => ranges::<1>(keys, sort, boundaries),
        2 => ranges::<2>(keys, sort, boundaries),
        3 => ranges::<3>(keys, sort, boundaries),
        _ => ranges::<4>(keys, sort, boundaries),
    })
}

#[cfg(test)]
#[path = "sort_keys_tests.rs"]
mod tests;
