//! Exactly computable inputs and references shared by the reduction tests.

use spillway_core::chunk::{partial, Dtype, Generator, Op};

pub const ALL_OPS: [Op; 7] = [Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Var, Op::Std, Op::Count];

pub fn to_bytes_f64(xs: &[f64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn to_bytes_i64(xs: &[i64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Float data on the grid k * 2^-e, with its exact sum and variance.
pub struct Grid {
    pub ks: Vec<i64>,
    pub e: i32,
}

impl Grid {
    pub fn values(&self) -> Vec<f64> {
        let s = 2f64.powi(-self.e);
        self.ks.iter().map(|&k| k as f64 * s).collect()
    }

    pub fn exact_sum(&self) -> f64 {
        let k: i128 = self.ks.iter().map(|&k| k as i128).sum();
        k as f64 * 2f64.powi(-self.e)
    }

    pub fn abs_sum(&self) -> f64 {
        let k: i128 = self.ks.iter().map(|&k| (k as i128).abs()).sum();
        k as f64 * 2f64.powi(-self.e)
    }

    /// Population variance, exactly: (n Σk² − (Σk)²) / (n² 2^2e).
    pub fn exact_var(&self) -> f64 {
        let n = self.ks.len() as i128;
        let s: i128 = self.ks.iter().map(|&k| k as i128).sum();
        let s2: i128 = self.ks.iter().map(|&k| (k as i128) * (k as i128)).sum();
        let num = n * s2 - s * s;
        num as f64 / (n * n) as f64 * 2f64.powi(-2 * self.e)
    }
}

pub fn draws(seed: u64, n: usize) -> impl Iterator<Item = u64> {
    let g = Generator::new(seed, 77);
    (0..n as u64).map(move |i| g.at(i))
}

/// Uniform on [0, 1) with 40 bits.
pub fn grid_uniform(seed: u64, n: usize) -> Grid {
    Grid { ks: draws(seed, n).map(|r| (r >> 24) as i64).collect(), e: 40 }
}

/// Mixed signs over twelve orders of magnitude, the case where naive
/// summation loses digits.
pub fn grid_wild(seed: u64, n: usize) -> Grid {
    let ks = draws(seed, n)
        .map(|r| {
            let mag = (r >> 24) as i64 >> (r % 40); // 40 bits, shifted 0..39
            if r & (1 << 20) != 0 {
                -mag
            } else {
                mag
            }
        })
        .collect();
    Grid { ks, e: 20 }
}

/// A large offset with a small spread: one-pass variance formulas fail here.
pub fn grid_offset(seed: u64, n: usize) -> Grid {
    let base = 100_000_000i64 << 26;
    Grid { ks: draws(seed, n).map(|r| base + (r >> 38) as i64).collect(), e: 26 }
}

/// Alternating huge values that cancel, plus small ones that carry the sum.
pub fn grid_cancelling(n: usize) -> Grid {
    let ks = (0..n as i64)
        .map(|i| match i % 4 {
            0 => 1 << 50,
            1 => 3,
            2 => -(1 << 50),
            _ => 1,
        })
        .collect();
    Grid { ks, e: 10 }
}

pub fn assert_close(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: got {got:e}, want {want:e}, off by {:e} > {tol:e}", (got - want).abs());
}

pub fn reduce(values: &[f64], op: Op) -> f64 {
    partial(&to_bytes_f64(values), Dtype::F64, op).unwrap().finish(op)
}
