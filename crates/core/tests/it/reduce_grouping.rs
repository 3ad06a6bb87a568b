//! Grouping and scale: any grouping of chunk partials agrees with the whole,
//! the mean of 4·10⁸ uniforms is right to 1e-9, and every kernel level
//! reduces identically.


use spillway_core::chunk::{partial, random_chunk, Dtype, Generator, Op, Partial};
use spillway_core::Error;
use crate::it::common::reduce::*;

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
    let left = Partial::combine_all(ps).unwrap();
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
fn combining_no_partials_is_an_error_naming_them() {
    assert!(matches!(Partial::combine_all(&[]), Err(Error::InvalidArgument { field: "partials", .. })));
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
    crate::it::common::report_simd_level();
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
        crate::it::common::run_at_every_simd_level("it::reduce_grouping::reductions_are_pinned");
    }
}
