//! Summation kernels. Floats: blocks of 8 independent lanes (vectorisable,
//! error bounded by the block length) whose block sums are added with
//! Neumaier compensation. Integers: exact, by splitting each value into a
//! signed high half and an unsigned low half so both lanes vectorise without
//! overflow.

const BLOCK: usize = 2048;

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

#[inline]
fn block_sum(xs: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let mut it = xs.chunks_exact(8);
    for c in &mut it {
        for k in 0..8 {
            lanes[k] += c[k];
        }
    }
    let mut s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for &x in it.remainder() {
        s += x;
    }
    s
}

pub(crate) fn sum_f64(xs: &[f64]) -> Compensated {
    let mut acc = Compensated::default();
    for b in xs.chunks(BLOCK) {
        acc.add(block_sum(b));
    }
    acc
}

/// Sum of squared deviations from `mean`, the second pass of var/std.
pub(crate) fn m2_f64(xs: &[f64], mean: f64) -> f64 {
    let mut acc = Compensated::default();
    for b in xs.chunks(BLOCK) {
        let mut lanes = [0.0f64; 8];
        let mut it = b.chunks_exact(8);
        for c in &mut it {
            for k in 0..8 {
                let d = c[k] - mean;
                lanes[k] += d * d;
            }
        }
        let mut s: f64 = lanes.iter().sum();
        for &x in it.remainder() {
            s += (x - mean) * (x - mean);
        }
        acc.add(s);
    }
    acc.value()
}

pub(crate) fn min_max_f64(xs: &[f64]) -> (f64, f64) {
    let mut lo = [f64::INFINITY; 8];
    let mut hi = [f64::NEG_INFINITY; 8];
    let mut it = xs.chunks_exact(8);
    for c in &mut it {
        for k in 0..8 {
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

/// Exact sum of int64 values.
pub(crate) fn sum_i64(xs: &[i64]) -> i128 {
    let mut total: i128 = 0;
    // Each block holds < 2^31 values, so neither half-sum can overflow.
    for b in xs.chunks(1 << 20) {
        let mut hi = [0i64; 4];
        let mut lo = [0u64; 4];
        let mut it = b.chunks_exact(4);
        for c in &mut it {
            for k in 0..4 {
                hi[k] += c[k] >> 32;
                lo[k] += (c[k] as u64) & 0xFFFF_FFFF;
            }
        }
        for &x in it.remainder() {
            hi[0] += x >> 32;
            lo[0] += (x as u64) & 0xFFFF_FFFF;
        }
        for k in 0..4 {
            total += ((hi[k] as i128) << 32) + lo[k] as i128;
        }
    }
    total
}

pub(crate) fn min_max_i64(xs: &[i64]) -> (i64, i64) {
    let mut lo = [i64::MAX; 8];
    let mut hi = [i64::MIN; 8];
    let mut it = xs.chunks_exact(8);
    for c in &mut it {
        for k in 0..8 {
            lo[k] = lo[k].min(c[k]);
            hi[k] = hi[k].max(c[k]);
        }
    }
    let mut l = *lo.iter().min().unwrap();
    let mut h = *hi.iter().max().unwrap();
    for &x in it.remainder() {
        l = l.min(x);
        h = h.max(x);
    }
    (l, h)
}

pub(crate) fn m2_i64(xs: &[i64], mean: f64) -> f64 {
    let mut acc = Compensated::default();
    for b in xs.chunks(BLOCK) {
        let mut s = 0.0;
        for &x in b {
            let d = x as f64 - mean;
            s += d * d;
        }
        acc.add(s);
    }
    acc.value()
}
