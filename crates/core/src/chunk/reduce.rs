//! Per-chunk partials that combine associatively, so chunks can be reduced
//! where they live and only a few numbers travel.

use std::borrow::Cow;

use super::sum::{self, Compensated};
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F64,
    I64,
}

impl Dtype {
    pub fn parse(name: &str) -> Result<Dtype> {
        match name {
            "float64" => Ok(Dtype::F64),
            "int64" => Ok(Dtype::I64),
            other => Err(Error::invalid("dtype", format!("{other:?} is not one of 'float64', 'int64'"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "float64",
            Dtype::I64 => "int64",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Sum,
    Mean,
    Min,
    Max,
    Var,
    Std,
    Count,
}

impl Op {
    pub fn parse(name: &str) -> Result<Op> {
        Ok(match name {
            "sum" => Op::Sum,
            "mean" => Op::Mean,
            "min" => Op::Min,
            "max" => Op::Max,
            "var" => Op::Var,
            "std" => Op::Std,
            "count" => Op::Count,
            other => {
                return Err(Error::invalid(
                    "op",
                    format!("{other:?} is not one of 'sum', 'mean', 'min', 'max', 'var', 'std', 'count'"),
                ))
            }
        })
    }

    fn needs_sum(self) -> bool {
        matches!(self, Op::Sum | Op::Mean | Op::Var | Op::Std)
    }

    fn needs_extremes(self) -> bool {
        matches!(self, Op::Min | Op::Max)
    }

    fn needs_moments(self) -> bool {
        matches!(self, Op::Var | Op::Std)
    }
}

/// What one or more chunks contribute to a reduction.
#[derive(Clone, Debug, PartialEq)]
pub struct Partial {
    pub count: u64,
    pub sum: f64,
    pub comp: f64,
    /// Exact sum of int64 data; `None` for float data.
    pub int_sum: Option<i128>,
    pub min: f64,
    pub max: f64,
    /// Sum of squared deviations from this partial's own mean.
    pub m2: f64,
}

impl Partial {
    pub fn empty(dtype: Dtype) -> Partial {
        Partial {
            count: 0,
            sum: 0.0,
            comp: 0.0,
            int_sum: (dtype == Dtype::I64).then_some(0),
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            m2: 0.0,
        }
    }

    fn total(&self) -> f64 {
        match self.int_sum {
            Some(s) => s as f64,
            None => self.sum + self.comp,
        }
    }

    pub fn mean(&self) -> f64 {
        self.total() / self.count as f64
    }

    /// The mean as an unevaluated sum hi + lo, carrying the digits that a
    /// single f64 drops when the mean is large against the spread.
    fn mean_parts(&self) -> (f64, f64) {
        let n = self.count as f64;
        let hi = self.sum / n;
        // The residual of the division is exact with a fused multiply-add.
        let r = (-hi).mul_add(n, self.sum);
        (hi, (r + self.comp) / n)
    }

    /// mean(other) − mean(self), accurate even when both means are large and
    /// nearly equal; Chan's update squares it, so its rounding error would
    /// otherwise dominate the combined m2 of offset data.
    fn mean_delta(&self, other: &Partial) -> f64 {
        if let (Some(a), Some(b)) = (self.int_sum, other.int_sum) {
            let (na, nb) = (self.count as i128, other.count as i128);
            if let Some(num) = b.checked_mul(na).and_then(|x| a.checked_mul(nb).and_then(|y| x.checked_sub(y))) {
                return num as f64 / (self.count as f64 * other.count as f64);
            }
            return other.mean() - self.mean();
        }
        let (ha, la) = self.mean_parts();
        let (hb, lb) = other.mean_parts();
        (hb - ha) + (lb - la)
    }

    /// Combines partials in order; at least one is needed, since an empty
    /// list has no dtype.
    pub fn combine_all(partials: &[Partial]) -> Result<Partial> {
        let (first, rest) = partials.split_first().ok_or_else(|| Error::invalid("partials", "needs at least one partial"))?;
        Ok(rest.iter().fold(first.clone(), |acc, p| acc.combine(p)))
    }

    /// Chan et al.'s pairwise update, so var/std stay accurate however the
    /// chunks are grouped.
    pub fn combine(&self, other: &Partial) -> Partial {
        if self.count == 0 {
            return other.clone();
        }
        if other.count == 0 {
            return self.clone();
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        let delta = self.mean_delta(other);
        let mut s = Compensated { sum: self.sum, comp: self.comp };
        s.merge(Compensated { sum: other.sum, comp: other.comp });
        Partial {
            count: self.count + other.count,
            sum: s.sum,
            comp: s.comp,
            int_sum: match (self.int_sum, other.int_sum) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            },
            min: self.min.min(other.min),
            max: self.max.max(other.max),
            m2: self.m2 + other.m2 + delta * delta * na * nb / n,
        }
    }

    /// The final value of `op` over everything this partial covers.
    pub fn finish(&self, op: Op) -> f64 {
        match op {
            Op::Sum => self.total(),
            Op::Mean => self.mean(),
            Op::Min => self.min,
            Op::Max => self.max,
            Op::Var => self.m2 / self.count as f64,
            Op::Std => (self.m2 / self.count as f64).sqrt(),
            Op::Count => self.count as f64,
        }
    }
}

fn view<T: Copy + Default>(data: &[u8], from: fn([u8; 8]) -> T) -> Cow<'_, [T]> {
    // SAFETY: f64 and i64 have no invalid bit patterns; align_to only hands
    // out the correctly aligned middle.
    let (pre, mid, post) = unsafe { data.align_to::<T>() };
    if pre.is_empty() && post.is_empty() {
        Cow::Borrowed(mid)
    } else {
        Cow::Owned(data.chunks_exact(8).map(|c| from(c.try_into().unwrap())).collect())
    }
}

/// The partial of one chunk of little-endian `dtype` values for `op`.
pub fn partial(data: &[u8], dtype: Dtype, op: Op) -> Result<Partial> {
    if data.len() % 8 != 0 {
        return Err(Error::invalid("data", format!("{} bytes is not a whole number of 8-byte values", data.len())));
    }
    let mut p = Partial::empty(dtype);
    p.count = (data.len() / 8) as u64;
    match dtype {
        Dtype::F64 => {
            let xs = view(data, f64::from_le_bytes);
            if op.needs_sum() {
                let s = sum::sum_f64(&xs);
                p.sum = s.sum;
                p.comp = s.comp;
            }
            if op.needs_extremes() {
                (p.min, p.max) = sum::min_max_f64(&xs);
            }
            if op.needs_moments() && p.count > 0 {
                p.m2 = sum::m2_f64(&xs, p.mean());
            }
        }
        Dtype::I64 => {
            let xs = view(data, i64::from_le_bytes);
            if op.needs_sum() {
                p.int_sum = Some(sum::sum_i64(&xs));
            }
            if op.needs_extremes() {
                let (lo, hi) = sum::min_max_i64(&xs);
                if p.count > 0 {
                    (p.min, p.max) = (lo as f64, hi as f64);
                }
            }
            if op.needs_moments() && p.count > 0 {
                p.m2 = sum::m2_i64(&xs, p.mean());
            }
        }
    }
    Ok(p)
}
