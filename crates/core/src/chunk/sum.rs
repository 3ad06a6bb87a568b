//! Reduction kernels, written over fixed lanes so LLVM vectorises them and
//! compiled for AVX2 and AVX-512 too (see `simd`). Floats: Kahan summation in
//! 32 independent lanes, whose (sum, compensation) pairs are then merged with
//! Neumaier's rule, so the result carries about twice f64 precision and is
//! independent of the vector width. Integers: exact, by splitting each
//! (biased) value into unsigned halves whose lane sums cannot overflow.

use super::simd::dispatch;

/// Lanes per kernel: enough independent chains to hide the latency of the
/// four dependent adds of a Kahan step on two 512-bit FP pipes.
const LANES: usize = 32;

/// Compensated running sum; `add` is Neumaier's improvement on Kahan.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Compensated {
    pub sum: f64,
    pub comp: f64,
}

impl Compensated {
    #[inline]
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.comp += (self.sum - t) + x;
        } else {
            self.comp += (x - t) + self.sum;
        }
        self.sum = t;
    }

    pub fn merge(&mut self, other: Compensated) {
        self.add(other.sum);
        self.comp += other.comp;
    }

    pub fn value(&self) -> f64 {
        self.sum + self.comp
    }
}

/// Kahan-sums `f(x)` over `xs` in `LANES` lanes.
#[inline(always)]
fn kahan_lanes<T: Copy>(xs: &[T], f: impl Fn(T) -> f64) -> Compensated {
    let mut s = [0.0f64; LANES];
    let mut c = [0.0f64; LANES];
    let mut it = xs.chunks_exact(LANES);
    for chunk in &mut it {
        for k in 0..LANES {
            let y = f(chunk[k]) - c[k];
            let t = s[k] + y;
            c[k] = (t - s[k]) - y;
            s[k] = t;
        }
    }
    let mut acc = Compensated::default();
    for k in 0..LANES {
        acc.add(s[k]);
        acc.comp -= c[k];
    }
    for &x in it.remainder() {
        acc.add(f(x));
    }
    acc
}

#[inline(always)]
fn sum_f64_body(xs: &[f64]) -> Compensated {
    kahan_lanes(xs, |x| x)
}

dispatch!(pub(crate) fn sum_f64(xs: &[f64]) -> Compensated => sum_f64_body);

#[inline(always)]
fn m2_f64_body(xs: &[f64], mean: f64) -> f64 {
    kahan_lanes(xs, |x| (x - mean) * (x - mean)).value()
}

dispatch!(
    /// Sum of squared deviations from `mean`, the second pass of var/std.
    pub(crate) fn m2_f64(xs: &[f64], mean: f64) -> f64 => m2_f64_body
);

#[inline(always)]
fn min_max_f64_body(xs: &[f64]) -> (f64, f64) {
    let mut lo = [f64::INFINITY; LANES];
    let mut hi = [f64::NEG_INFINITY; LANES];
    let mut it = xs.chunks_exact(LANES);
    for c in &mut it {
        for k in 0..LANES {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
    }
    let mut l = lo.iter().copied().fold(f64::INFINITY, f64::min);
    let mut h = hi.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for &x in it.remainder() {
        l = l.min(x);
        h = h.max(x);
    }
    (l, h)
}

dispatch!(pub(crate) fn min_max_f64(xs: &[f64]) -> (f64, f64) => min_max_f64_body);

const BIAS: u64 = 1 << 63;

#[inline(always)]
fn sum_i64_body(xs: &[i64]) -> i128 {
    // x + 2^63 is unsigned (only logical shifts are needed: AVX2 has no
    // 64-bit arithmetic shift). Per block of 2^24 values, the high halves sum
    // exactly (each under 2^32) and the whole values sum modulo 2^64; the low
    // halves' sum is under 2^56, so it is that wrapped sum less 2^32 times
    // the high one, modulo 2^64. Three vector operations a value, where
    // summing both halves took four.
    let mut total: i128 = -(BIAS as i128) * xs.len() as i128;
    for block in xs.chunks(1 << 24) {
        let (mut wrapped, mut hi) = (0u64, 0u64);
        for &x in block {
            let u = (x as u64) ^ BIAS;
            wrapped = wrapped.wrapping_add(u);
            hi += u >> 32;
        }
        let lo = wrapped.wrapping_sub(hi << 32);
        total += ((hi as i128) << 32) + lo as i128;
    }
    total
}

dispatch!(
    /// Exact sum of int64 values.
    pub(crate) fn sum_i64(xs: &[i64]) -> i128 => sum_i64_body
);

#[inline(always)]
fn min_max_i64_body(xs: &[i64]) -> (i64, i64) {
    xs.iter().fold((i64::MAX, i64::MIN), |(l, h), &x| (l.min(x), h.max(x)))
}

dispatch!(pub(crate) fn min_max_i64(xs: &[i64]) -> (i64, i64) => min_max_i64_body);

#[inline(always)]
fn m2_i64_body(xs: &[i64], mean: f64) -> f64 {
    kahan_lanes(xs, |x| {
        let d = x as f64 - mean;
        d * d
    })
    .value()
}

dispatch!(pub(crate) fn m2_i64(xs: &[i64], mean: f64) -> f64 => m2_i64_body);
