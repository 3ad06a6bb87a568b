//! Reductions against exact references: integer sums in i128, float data
//! drawn on a binary grid (x = k * 2^-E) so that sums and variances can be
//! computed exactly in integers, and any grouping of chunk partials must
//! agree with the whole.

mod common;

use spillway_core::chunk::{partial, random_chunk, Dtype, Generator, Op, Partial};
use spillway_core::Error;

const ALL_OPS: [Op; 7] = [Op::Sum, Op::Mean, Op::Min, Op::Max, Op::Var, Op::Std, Op::Count];

fn to_bytes_f64(xs: &[f64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_bytes_i64(xs: &[i64]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Float data on the grid k * 2^-e, with its exact sum and variance.
struct Grid {
    ks: Vec<i64>,
    e: i32,
}

impl Grid {
    fn values(&self) -> Vec<f64> {
        let s = 2f64.powi(-self.e);
        self.ks.iter().map(|&k| k as f64 * s).collect()
    }

    fn exact_sum(&self) -> f64 {
        let k: i128 = self.ks.iter().map(|&k| k as i128).sum();
        k as f64 * 2f64.powi(-self.e)
    }

    fn abs_sum(&self) -> f64 {
        let k: i128 = self.ks.iter().map(|&k| (k as i128).abs()).sum();
        k as f64 * 2f64.powi(-self.e)
    }

    /// Population variance, exactly: (n Σk² − (Σk)²) / (n² 2^2e).
    fn exact_var(&self) -> f64 {
        let n = self.ks.len() as i128;
        let s: i128 = self.ks.iter().map(|&k| k as i128).sum();
        let s2: i128 = self.ks.iter().map(|&k| (k as i128) * (k as i128)).sum();
        let num = n * s2 - s * s;
        num as f64 / (n * n) as f64 * 2f64.powi(-2 * self.e)
    }
}

fn draws(seed: u64, n: usize) -> impl Iterator<Item = u64> {
    let g = Generator::new(seed, 77);
    (0..n as u64).map(move |i| g.at(i))
}

/// Uniform on [0, 1) with 40 bits.
fn grid_uniform(seed: u64, n: usize) -> Grid {
    Grid { ks: draws(seed, n).map(|r| (r >> 24) as i64).collect(), e: 40 }
}

/// Mixed signs over twelve orders of magnitude, the case where naive
/// summation loses digits.
fn grid_wild(seed: u64, n: usize) -> Grid {
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
fn grid_offset(seed: u64, n: usize) -> Grid {
    let base = 100_000_000i64 << 26;
    Grid { ks: draws(seed, n).map(|r| base + (r >> 38) as i64).collect(), e: 26 }
}

/// Alternating huge values that cancel, plus small ones that carry the sum.
fn grid_cancelling(n: usize) -> Grid {
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

fn assert_close(got: f64, want: f64, tol: f64, what: &str) {
    assert!((got - want).abs() <= tol, "{what}: got {got:e}, want {want:e}, off by {:e} > {tol:e}", (got - want).abs());
}

fn reduce(values: &[f64], op: Op) -> f64 {
    partial(&to_bytes_f64(values), Dtype::F64, op).unwrap().finish(op)
}

#[test]
fn float_sums_match_the_exact_sum() {
    for (name, g) in [
        ("uniform", grid_uniform(1, 1_000_003)),
        ("wild", grid_wild(2, 1_000_003)),
        ("offset", grid_offset(3, 200_000)),
        ("cancelling", grid_cancelling(100_000)),
    ] {
        let xs = g.values();
        let exact = g.exact_sum();
        // The kernel's error bound: its lanes add up to 256 values naively
        // before compensated accumulation, so 256 eps of the absolute sum.
        let tol = 256.0 * f64::EPSILON * g.abs_sum();
        for op in [Op::Sum, Op::Mean] {
            let got = reduce(&xs, op);
            let want = if op == Op::Sum { exact } else { exact / xs.len() as f64 };
            let t = if op == Op::Sum { tol } else { tol / xs.len() as f64 };
            assert_close(got, want, t, &format!("{name} {op:?}"));
        }
    }
}

#[test]
fn cancellation_leaves_the_small_terms_exactly() {
    let g = grid_cancelling(1_000_000);
    // 250 000 blocks of (2^50 + 3 - 2^50 + 1), each 4 * 2^-10.
    assert_eq!(reduce(&g.values(), Op::Sum), g.exact_sum());
    assert_eq!(g.exact_sum(), 250_000.0 * 4.0 / 1024.0);
}

#[test]
fn float_variance_matches_the_exact_variance() {
    for (name, g) in [("uniform", grid_uniform(4, 500_001)), ("wild", grid_wild(5, 500_001)), ("offset", grid_offset(6, 500_001))] {
        let xs = g.values();
        let exact = g.exact_var();
        let var = reduce(&xs, Op::Var);
        assert_close(var, exact, 1e-12 * exact, &format!("{name} var"));
        assert_close(reduce(&xs, Op::Std), exact.sqrt(), 1e-12 * exact.sqrt(), &format!("{name} std"));
    }
}

#[test]
fn variance_matches_a_two_pass_reference_on_generated_chunks() {
    let xs = f64s(&random_chunk(8, 8, 1_000_000).unwrap());
    let n = xs.len() as f64;
    // Reference: exact mean (the values are k * 2^-53), then compensated
    // sum of squared deviations.
    let k: u128 = xs.iter().map(|&x| (x * (1u64 << 53) as f64) as u128).sum();
    let mean = k as f64 / (1u64 << 53) as f64 / n;
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for &x in &xs {
        let d = (x - mean) * (x - mean);
        let t = s + d;
        c += if s.abs() >= d.abs() { (s - t) + d } else { (d - t) + s };
        s = t;
    }
    let var = (s + c) / n;
    assert_close(reduce(&xs, Op::Var), var, 1e-12 * var, "var");
    assert_close(reduce(&xs, Op::Mean), mean, 1e-15, "mean");
}

#[test]
fn integer_sums_are_exact() {
    let g = Generator::new(9, 9);
    let mut xs: Vec<i64> = (0..1_000_003u64).map(|i| g.at(i) as i64).collect();
    // Extremes that would overflow any 64-bit accumulator.
    xs.extend(std::iter::repeat(i64::MAX).take(10_000));
    xs.extend(std::iter::repeat(i64::MIN).take(3_000));
    let exact: i128 = xs.iter().map(|&x| x as i128).sum();
    let p = partial(&to_bytes_i64(&xs), Dtype::I64, Op::Sum).unwrap();
    assert_eq!(p.int_sum, Some(exact));
    assert_eq!(p.count, xs.len() as u64);
    assert_eq!(p.finish(Op::Sum), exact as f64);
    assert_eq!(p.finish(Op::Mean), exact as f64 / xs.len() as f64);
    for (name, vals) in [("all max", vec![i64::MAX; 2_000_000]), ("all min", vec![i64::MIN; 2_000_000])] {
        let p = partial(&to_bytes_i64(&vals), Dtype::I64, Op::Sum).unwrap();
        assert_eq!(p.int_sum, Some(vals[0] as i128 * vals.len() as i128), "{name}");
    }
}

#[test]
fn integer_variance_min_max_match_exact_references() {
    let g = Generator::new(10, 10);
    let xs: Vec<i64> = (0..700_001u64).map(|i| (g.at(i) % 2_000_001) as i64 - 1_000_000).collect();
    let bytes = to_bytes_i64(&xs);
    let n = xs.len() as i128;
    let s: i128 = xs.iter().map(|&x| x as i128).sum();
    let s2: i128 = xs.iter().map(|&x| (x as i128).pow(2)).sum();
    let var = (n * s2 - s * s) as f64 / (n * n) as f64;
    let p = partial(&bytes, Dtype::I64, Op::Var).unwrap();
    assert_close(p.finish(Op::Var), var, 1e-12 * var, "int var");
    assert_close(p.finish(Op::Std), var.sqrt(), 1e-12 * var.sqrt(), "int std");
    assert_eq!(p.int_sum, Some(s));
    let p = partial(&bytes, Dtype::I64, Op::Min).unwrap();
    assert_eq!(p.finish(Op::Min), *xs.iter().min().unwrap() as f64);
    assert_eq!(partial(&bytes, Dtype::I64, Op::Max).unwrap().finish(Op::Max), *xs.iter().max().unwrap() as f64);
    assert_eq!(partial(&bytes, Dtype::I64, Op::Count).unwrap().finish(Op::Count), xs.len() as f64);
}

#[test]
fn min_and_max_are_exact_for_floats() {
    let g = grid_wild(11, 100_003);
    let xs = g.values();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(lo < 0.0 && hi > 0.0);
    assert_eq!(reduce(&xs, Op::Min), lo);
    assert_eq!(reduce(&xs, Op::Max), hi);
    // Extremes in the remainder after the vector lanes, and alone.
    let mut ys = vec![0.5; 17];
    ys[16] = -3.0;
    ys[15] = 9.0;
    assert_eq!((reduce(&ys, Op::Min), reduce(&ys, Op::Max)), (-3.0, 9.0));
    assert_eq!((reduce(&[2.5], Op::Min), reduce(&[2.5], Op::Max)), (2.5, 2.5));
    let neg: Vec<f64> = (1..=20).map(|i| -(i as f64)).collect();
    assert_eq!((reduce(&neg, Op::Min), reduce(&neg, Op::Max)), (-20.0, -1.0));
}

#[test]
fn count_is_the_number_of_values_for_every_op() {
    for n in [0usize, 1, 7, 8, 9, 2047, 2048, 2049, 100_000] {
        let bytes = to_bytes_f64(&vec![1.0; n]);
        for op in ALL_OPS {
            let p = partial(&bytes, Dtype::F64, op).unwrap();
            assert_eq!(p.count, n as u64, "{op:?} n={n}");
            assert_eq!(p.finish(Op::Count), n as f64);
        }
        if n > 0 {
            assert_eq!(reduce(&vec![1.0; n], Op::Sum), n as f64);
            assert_eq!(reduce(&vec![1.0; n], Op::Var), 0.0);
        }
    }
}

#[test]
fn empty_chunks_reduce_to_identities() {
    for dtype in [Dtype::F64, Dtype::I64] {
        for op in ALL_OPS {
            let p = partial(&[], dtype, op).unwrap();
            assert_eq!(p.count, 0);
            assert_eq!(p.finish(Op::Sum), 0.0, "{dtype:?} {op:?}");
            assert_eq!(p.finish(Op::Count), 0.0);
            assert!(p.finish(Op::Mean).is_nan(), "the mean of nothing is undefined");
            assert!(p.finish(Op::Var).is_nan());
            assert_eq!(p.finish(Op::Min), f64::INFINITY);
            assert_eq!(p.finish(Op::Max), f64::NEG_INFINITY);
            // An empty chunk anywhere in a combination changes nothing.
            let full = partial(&to_bytes_f64(&[1.0, 2.0, 4.0]), Dtype::F64, op).unwrap();
            let full = if dtype == Dtype::I64 { partial(&to_bytes_i64(&[1, 2, 4]), dtype, op).unwrap() } else { full };
            assert_eq!(p.combine(&full), full);
            assert_eq!(full.combine(&p), full);
            assert_eq!(p.combine(&p).count, 0);
        }
    }
}

/// Splits `n` values into pieces of random sizes, some of them empty.
fn cut_points(seed: u64, n: usize) -> Vec<usize> {
    let g = Generator::new(seed, 1);
    let mut cuts = vec![0];
    let mut i = 0;
    while *cuts.last().unwrap() < n {
        let step = match g.at(i) % 10 {
            0 => 0,
            1 => 1,
            2..=4 => (g.at(i + 1000) % 100) as usize,
            _ => (g.at(i + 2000) % 60_000) as usize,
        };
        cuts.push((cuts.last().unwrap() + step).min(n));
        i += 1;
    }
    cuts
}

fn fold_tree(ps: &[Partial]) -> Partial {
    match ps.len() {
        1 => ps[0].clone(),
        n => fold_tree(&ps[..n / 2]).combine(&fold_tree(&ps[n / 2..])),
    }
}

fn groupings(ps: &[Partial]) -> Vec<(&'static str, Partial)> {
    let left = ps[1..].iter().fold(ps[0].clone(), |acc, p| acc.combine(p));
    let right = ps[..ps.len() - 1].iter().rev().fold(ps[ps.len() - 1].clone(), |acc, p| p.combine(&acc));
    let mut shuffled = ps.to_vec();
    let g = Generator::new(3, 3);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, (g.at(i as u64) % (i as u64 + 1)) as usize);
    }
    let shuffled_left = shuffled[1..].iter().fold(shuffled[0].clone(), |acc, p| acc.combine(p));
    vec![("left", left), ("right", right), ("tree", fold_tree(ps)), ("shuffled", shuffled_left), ("shuffled tree", fold_tree(&shuffled))]
}

#[test]
fn any_grouping_of_float_partials_agrees() {
    for (name, g) in [("uniform", grid_uniform(12, 600_000)), ("wild", grid_wild(13, 600_000)), ("offset", grid_offset(14, 600_000))] {
        let bytes = to_bytes_f64(&g.values());
        let cuts = cut_points(15, g.ks.len());
        assert!(cuts.len() > 20, "enough pieces to make grouping matter");
        for op in ALL_OPS {
            let whole = partial(&bytes, Dtype::F64, op).unwrap().finish(op);
            let ps: Vec<Partial> =
                cuts.windows(2).map(|w| partial(&bytes[w[0] * 8..w[1] * 8], Dtype::F64, op).unwrap()).collect();
            let exact = match op {
                Op::Sum => g.exact_sum(),
                Op::Mean => g.exact_sum() / g.ks.len() as f64,
                Op::Var => g.exact_var(),
                Op::Std => g.exact_var().sqrt(),
                _ => whole,
            };
            for (how, p) in groupings(&ps) {
                let got = p.finish(op);
                assert_eq!(p.count, g.ks.len() as u64);
                match op {
                    Op::Min | Op::Max | Op::Count => assert_eq!(got, whole, "{name} {op:?} {how}"),
                    _ => {
                        let scale = if matches!(op, Op::Sum | Op::Mean) { g.abs_sum() / g.ks.len() as f64 } else { exact };
                        let per = if op == Op::Sum { g.ks.len() as f64 } else { 1.0 };
                        assert_close(got, whole, 1e-12 * scale * per, &format!("{name} {op:?} {how} vs whole"));
                        assert_close(got, exact, 1e-12 * scale * per, &format!("{name} {op:?} {how} vs exact"));
                    }
                }
            }
        }
    }
}

#[test]
fn any_grouping_of_integer_partials_is_exact() {
    let g = Generator::new(16, 16);
    let xs: Vec<i64> = (0..500_000u64).map(|i| g.at(i) as i64 >> (i % 50)).collect();
    let bytes = to_bytes_i64(&xs);
    let exact: i128 = xs.iter().map(|&x| x as i128).sum();
    let cuts = cut_points(17, xs.len());
    for op in ALL_OPS {
        let whole = partial(&bytes, Dtype::I64, op).unwrap();
        let ps: Vec<Partial> = cuts.windows(2).map(|w| partial(&bytes[w[0] * 8..w[1] * 8], Dtype::I64, op).unwrap()).collect();
        for (how, p) in groupings(&ps) {
            if matches!(op, Op::Sum | Op::Mean | Op::Var | Op::Std) {
                assert_eq!(p.int_sum, Some(exact), "{op:?} {how}");
            }
            match op {
                Op::Var | Op::Std => {
                    let w = whole.finish(op);
                    assert_close(p.finish(op), w, 1e-12 * w, &format!("{op:?} {how}"));
                }
                _ => assert_eq!(p.finish(op), whole.finish(op), "{op:?} {how}"),
            }
        }
    }
}

#[test]
fn mean_of_four_hundred_million_uniforms() {
    // The recipe's x.mean() at scale: 100 chunks of 4e6, each generated,
    // reduced and dropped so memory stays at one chunk. The values are
    // k * 2^-53, so the exact mean comes from an integer sum.
    const CHUNK: usize = 4_000_000;
    const CHUNKS: u64 = 100;
    let mut acc: Option<Partial> = None;
    let mut exact_k: u128 = 0;
    let scale = (1u64 << 53) as f64;
    for id in 0..CHUNKS {
        let bytes = random_chunk(1, id, CHUNK).unwrap();
        let p = partial(&bytes, Dtype::F64, Op::Var).unwrap();
        exact_k += bytes.chunks_exact(8).map(|c| (f64::from_le_bytes(c.try_into().unwrap()) * scale) as u64 as u128).sum::<u128>();
        acc = Some(match acc {
            None => p,
            Some(a) => a.combine(&p),
        });
    }
    let p = acc.unwrap();
    let n = CHUNK as u64 * CHUNKS;
    assert_eq!(p.count, n);
    let exact_mean = (exact_k as f64 / scale) / n as f64;
    let mean = p.finish(Op::Mean);
    assert!((mean - exact_mean).abs() < 1e-9, "mean {mean} vs exact {exact_mean}");
    // The kernel's bound is far tighter than the requirement.
    assert!((mean - exact_mean).abs() < 1e-13, "mean {mean} vs exact {exact_mean}");
    assert_close(p.finish(Op::Sum), exact_k as f64 / scale, 1e-13 * n as f64, "sum");
    // And the numbers are what a uniform sample of this size gives.
    let nf = n as f64;
    assert!((mean - 0.5).abs() < 6.0 * (1.0 / (12.0 * nf)).sqrt(), "mean {mean}");
    let var = p.finish(Op::Var);
    assert!((var - 1.0 / 12.0).abs() < 6.0 * (1.0 / (180.0 * nf)).sqrt(), "var {var}");
}

#[test]
fn misaligned_buffers_reduce_like_aligned_ones() {
    let g = grid_wild(18, 10_001);
    let bytes = to_bytes_f64(&g.values());
    let mut shifted = vec![0u8; bytes.len() + 3];
    for off in 1..4 {
        shifted[off..off + bytes.len()].copy_from_slice(&bytes);
        for op in ALL_OPS {
            let a = partial(&bytes, Dtype::F64, op).unwrap();
            let b = partial(&shifted[off..off + bytes.len()], Dtype::F64, op).unwrap();
            assert_eq!(a, b, "offset {off} {op:?}");
        }
    }
}

#[test]
fn ragged_data_and_bad_names_are_rejected() {
    for len in [1usize, 7, 9, 15] {
        match partial(&vec![0u8; len], Dtype::F64, Op::Sum) {
            Err(Error::InvalidArgument { field: "data", .. }) => {}
            other => panic!("{len} bytes: {other:?}"),
        }
    }
    assert_eq!(Dtype::parse("float64").unwrap(), Dtype::F64);
    assert_eq!(Dtype::parse("int64").unwrap(), Dtype::I64);
    assert!(matches!(Dtype::parse("float32"), Err(Error::InvalidArgument { field: "dtype", .. })));
    for (name, op) in [("sum", Op::Sum), ("mean", Op::Mean), ("min", Op::Min), ("max", Op::Max), ("var", Op::Var), ("std", Op::Std), ("count", Op::Count)] {
        assert_eq!(Op::parse(name).unwrap(), op);
    }
    let e = Op::parse("median").unwrap_err();
    assert!(e.to_string().contains("'sum'"), "{e}");
}

#[test]
fn reductions_are_pinned() {
    common::report_simd_level();
    // Bit patterns of whole partials over data with remainders after the
    // vector lanes; any change of lanes or kernels shows up here.
    let mut text = String::new();
    for (dtype, bytes) in [
        (Dtype::F64, to_bytes_f64(&grid_wild(30, 100_003).values())),
        (Dtype::F64, random_chunk(31, 0, 77_777).unwrap()),
        (Dtype::I64, to_bytes_i64(&grid_wild(32, 100_003).ks)),
    ] {
        for op in ALL_OPS {
            let p = partial(&bytes, dtype, op).unwrap();
            text += &format!(
                "{} {:x} {:x} {:?} {:x} {:x} {:x}\n",
                p.count,
                p.sum.to_bits(),
                p.comp.to_bits(),
                p.int_sum,
                p.min.to_bits(),
                p.max.to_bits(),
                p.m2.to_bits()
            );
        }
    }
    assert_eq!(xxhash_rust::xxh3::xxh3_64(text.as_bytes()), PINNED_PARTIALS, "{text}");
}

/// The digest of the partials above with the kernels first released.
const PINNED_PARTIALS: u64 = 14605357657738107967;

#[test]
fn every_kernel_level_reduces_identically() {
    if std::env::var_os("SPILLWAY_CHILD_TEST").is_none() {
        common::run_at_every_simd_level("reductions_are_pinned");
    }
}
