//! Reductions against exact references: integer sums in i128, float data
//! drawn on a binary grid (x = k * 2^-E) so that sums and variances can be
//! computed exactly in integers. Grouping and scale are in reduce_grouping.rs.


use crate::it::common::reduce::*;
use spillway_core::chunk::{partial, random_chunk, Dtype, Generator, Op};

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
