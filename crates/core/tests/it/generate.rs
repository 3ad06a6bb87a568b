//! Chunk generation: a chunk is a pure function of (seed, chunk id, length),
//! whatever the thread, order or call; its values are uniform in range.


use spillway_core::chunk::{chunk_key, randint_chunk, random_chunk, ChunkSpec, Generator};
use spillway_core::Error;

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn i64s(bytes: &[u8]) -> Vec<i64> {
    bytes.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Pearson's chi-square statistic of `counts` against a uniform expectation.
fn chi_square(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let e = total as f64 / counts.len() as f64;
    counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
}

/// A generous upper quantile of chi-square with `k` degrees of freedom
/// (mean k, sd sqrt(2k)): about 6 sd out, so a fair generator fails with
/// negligible probability and a biased one still fails.
fn chi_square_limit(k: usize) -> f64 {
    k as f64 + 6.0 * (2.0 * k as f64).sqrt()
}

#[test]
fn same_seed_and_chunk_give_the_same_bytes() {
    for (seed, id, len) in [(0u64, 0u64, 1000usize), (1, 7, 12345), (u64::MAX, u64::MAX, 333), (42, 1 << 40, 1)] {
        assert_eq!(random_chunk(seed, id, len).unwrap(), random_chunk(seed, id, len).unwrap());
        assert_eq!(randint_chunk(seed, id, len, -3, 17).unwrap(), randint_chunk(seed, id, len, -3, 17).unwrap());
    }
}

#[test]
fn values_are_pinned_across_releases() {
    crate::it::common::report_simd_level();
    // Chunks must be reproducible across versions too (a worker running a
    // newer build recomputes a lost chunk): pin a few outputs.
    let g = Generator::new(1, 0);
    let first: Vec<u64> = (0..3).map(|i| g.at(i)).collect();
    let again: Vec<u64> = (0..3).map(|i| Generator::new(1, 0).at(i)).collect();
    assert_eq!(first, again);
    let bytes = random_chunk(1, 0, 3).unwrap();
    for (i, v) in f64s(&bytes).into_iter().enumerate() {
        assert_eq!(v, (first[i] >> 11) as f64 / (1u64 << 53) as f64);
    }
    assert_eq!(Generator::new(1, 0).at(0), 6673871587560670301, "the generator changed: old chunks would differ");
    // Whole chunks, through whatever kernel generates them, must stay
    // bit-identical (lengths chosen to leave vector remainders).
    let digest = |b: Vec<u8>| xxhash_rust::xxh3::xxh3_64(&b);
    let pins = [
        digest(random_chunk(1, 0, 1003).unwrap()),
        digest(random_chunk(7, 123_456, 100_001).unwrap()),
        digest(randint_chunk(1, 0, 1003, 0, 10).unwrap()),
        digest(randint_chunk(7, 123_456, 100_001, -1_000, 1 << 40).unwrap()),
        digest(randint_chunk(2, 2, 999, i64::MIN, i64::MAX).unwrap()),
    ];
    assert_eq!(pins, PINS, "chunk bytes changed: chunks spilled or recomputed by older builds would differ");
}

#[test]
fn every_kernel_level_generates_the_pinned_bytes() {
    // The AVX-512, AVX2 and portable copies of the kernels must agree bit for
    // bit, or chunks would depend on which machine generated them.
    if std::env::var_os("SPILLWAY_CHILD_TEST").is_none() {
        crate::it::common::run_at_every_simd_level("it::generate::values_are_pinned_across_releases");
    }
}

/// Digests of the chunks above as first released.
const PINS: [u64; 5] = [8740996015156810307, 2815214727604816699, 6668754020304049391, 5999513784002191464, 15863791736565365027];

#[test]
fn threads_generate_identical_chunks() {
    let reference: Vec<Vec<u8>> = (0..8).map(|id| random_chunk(99, id, 50_000).unwrap()).collect();
    let ints: Vec<Vec<u8>> = (0..8).map(|id| randint_chunk(99, id, 50_000, 0, 10).unwrap()).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                s.spawn(move || {
                    // Each thread walks the chunks in a different order.
                    let mut ids: Vec<u64> = (0..8).collect();
                    ids.rotate_left(t * 2);
                    if t % 2 == 1 {
                        ids.reverse();
                    }
                    ids.into_iter()
                        .map(|id| (id, random_chunk(99, id, 50_000).unwrap(), randint_chunk(99, id, 50_000, 0, 10).unwrap()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (id, r, i) in h.join().unwrap() {
                assert_eq!(r, reference[id as usize], "random chunk {id} differs across threads");
                assert_eq!(i, ints[id as usize], "randint chunk {id} differs across threads");
            }
        }
    });
}

#[test]
fn element_i_depends_only_on_i() {
    // A shorter chunk is a prefix of a longer one, and each element is the
    // generator's output at its index: chunks can be produced in pieces.
    let long = f64s(&random_chunk(5, 3, 10_000).unwrap());
    let short = f64s(&random_chunk(5, 3, 777).unwrap());
    assert_eq!(&long[..777], &short[..]);
    let g = Generator::new(5, 3);
    for i in [0usize, 1, 2, 500, 9_999] {
        assert_eq!(long[i], g.uniform(i as u64));
    }
}

#[test]
fn chunk_spec_generates_what_the_functions_do() {
    let r = ChunkSpec::Random { seed: 3, chunk_id: 4, len: 100 };
    assert_eq!(r.generate().unwrap(), random_chunk(3, 4, 100).unwrap());
    let i = ChunkSpec::Randint { seed: 3, chunk_id: 4, len: 100, low: -9, high: 9 };
    assert_eq!(i.generate().unwrap(), randint_chunk(3, 4, 100, -9, 9).unwrap());
    let bad = ChunkSpec::Randint { seed: 3, chunk_id: 4, len: 100, low: 9, high: 9 };
    assert!(matches!(bad.generate(), Err(Error::InvalidArgument { field: "high", .. })));
}

#[test]
fn different_chunks_and_seeds_are_independent() {
    let n = 20_000;
    let base = f64s(&random_chunk(1, 0, n).unwrap());
    let others = [(1u64, 1u64), (1, 2), (2, 0), (0, 0), (1, 1 << 32), (1 << 32, 0)];
    for (seed, id) in others {
        let other = f64s(&random_chunk(seed, id, n).unwrap());
        let equal = base.iter().zip(&other).filter(|(a, b)| a == b).count();
        assert_eq!(equal, 0, "seed {seed} chunk {id} repeats values of seed 1 chunk 0");
        // Correlation of two independent uniform streams: about N(0, 1/n).
        let r = correlation(&base, &other);
        assert!(r.abs() < 6.0 / (n as f64).sqrt(), "seed {seed} chunk {id}: correlation {r}");
        // Shifted copies would betray overlapping streams.
        for lag in [1usize, 2, 8] {
            let shifted = base[lag..].iter().zip(&other).filter(|(a, b)| a == b).count();
            assert_eq!(shifted, 0, "seed {seed} chunk {id} overlaps chunk 0 at lag {lag}");
        }
    }
    let keys: std::collections::HashSet<u64> = (0..10_000).map(|id| chunk_key(1, id)).collect();
    assert_eq!(keys.len(), 10_000, "chunk keys collide");
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn uniforms_have_the_right_distribution() {
    let n = 2_000_000;
    let xs = f64s(&random_chunk(2024, 0, n).unwrap());
    assert_eq!(xs.len(), n);
    assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)), "a value outside [0, 1)");
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    // Standard errors: mean sqrt(1/12n), variance sqrt(1/180n).
    assert!((mean - 0.5).abs() < 6.0 * (1.0 / (12.0 * n as f64)).sqrt(), "mean {mean}");
    assert!((var - 1.0 / 12.0).abs() < 6.0 * (1.0 / (180.0 * n as f64)).sqrt(), "variance {var}");
    let mut bins = vec![0u64; 1000];
    for &x in &xs {
        bins[(x * 1000.0) as usize] += 1;
    }
    let chi = chi_square(&bins);
    assert!(chi < chi_square_limit(999), "histogram chi-square {chi}");
    // Lag-1 serial correlation of a good stream is about N(0, 1/n).
    let r = correlation(&xs[..n - 1], &xs[1..]);
    assert!(r.abs() < 6.0 / (n as f64).sqrt(), "serial correlation {r}");
    // All 53 bits of precision are used: the lowest mantissa bit is a coin.
    let odd = xs.iter().filter(|&&x| ((x * (1u64 << 53) as f64) as u64) & 1 == 1).count();
    let sd = (n as f64 / 4.0).sqrt();
    assert!((odd as f64 - n as f64 / 2.0).abs() < 6.0 * sd, "low bit set {odd} times of {n}");
}

#[test]
fn many_small_chunks_are_uniform_together() {
    // What a big array is: chunk after chunk of one seed.
    let mut bins = vec![0u64; 100];
    for id in 0..2_000 {
        for x in f64s(&random_chunk(7, id, 500).unwrap()) {
            bins[(x * 100.0) as usize] += 1;
        }
    }
    let chi = chi_square(&bins);
    assert!(chi < chi_square_limit(99), "chi-square {chi} over 2000 chunks");
}

#[test]
fn randint_stays_in_bounds_and_is_uniform() {
    let n = 1_000_000;
    for (low, high) in [(0i64, 10i64), (-5, 5), (-100, -90), (1, 2), (0, 3), (-1_000_000, 1_000_000), (i64::MAX - 7, i64::MAX)] {
        let vs = i64s(&randint_chunk(11, 0, n, low, high).unwrap());
        assert!(vs.iter().all(|&v| v >= low && v < high), "[{low}, {high}) violated");
        let range = (high as i128 - low as i128) as usize;
        if range <= 1000 {
            let mut counts = vec![0u64; range];
            for &v in &vs {
                counts[(v as i128 - low as i128) as usize] += 1;
            }
            assert!(counts.iter().all(|&c| c > 0), "[{low}, {high}): a value never drawn");
            if range > 1 {
                let chi = chi_square(&counts);
                assert!(chi < chi_square_limit(range - 1), "[{low}, {high}) chi-square {chi}: {counts:?}");
            }
        } else {
            let mean = vs.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
            let centre = (low as f64 + high as f64 - 1.0) / 2.0;
            let sd = (range as f64) / (12.0 * n as f64).sqrt();
            assert!((mean - centre).abs() < 6.0 * sd, "[{low}, {high}) mean {mean}");
        }
    }
}

#[test]
fn randint_covers_the_whole_int64_range() {
    let vs = i64s(&randint_chunk(3, 1, 200_000, i64::MIN, i64::MAX).unwrap());
    assert!(vs.iter().all(|&v| v < i64::MAX));
    let negative = vs.iter().filter(|&&v| v < 0).count();
    assert!((negative as f64 - 100_000.0).abs() < 6.0 * (50_000.0f64).sqrt(), "{negative} negatives");
    // Every byte of the value varies: the high bits are not stuck.
    for shift in [0, 8, 32, 56] {
        let distinct: std::collections::HashSet<u8> = vs.iter().map(|&v| (v >> shift) as u8).collect();
        assert_eq!(distinct.len(), 256, "byte at bit {shift} takes {} values", distinct.len());
    }
}

#[test]
fn randint_rejects_empty_ranges() {
    for (low, high) in [(0i64, 0i64), (5, 4), (i64::MAX, i64::MIN), (-1, -1)] {
        match randint_chunk(0, 0, 10, low, high) {
            Err(Error::InvalidArgument { field, message }) => {
                assert_eq!(field, "high");
                assert!(message.contains(&high.to_string()) && message.contains(&low.to_string()), "{message}");
            }
            other => panic!("[{low}, {high}) gave {other:?}"),
        }
    }
}

#[test]
fn empty_and_impossible_lengths() {
    assert!(random_chunk(1, 1, 0).unwrap().is_empty());
    assert!(randint_chunk(1, 1, 0, 0, 10).unwrap().is_empty());
    // An element count whose byte size overflows must be refused, not wrap
    // around into a small allocation.
    for len in [usize::MAX, usize::MAX / 8 + 1] {
        assert!(matches!(random_chunk(1, 1, len), Err(Error::InvalidArgument { field: "len", .. })));
        assert!(matches!(randint_chunk(1, 1, len, 0, 10), Err(Error::InvalidArgument { field: "len", .. })));
    }
}

#[test]
fn bytes_are_little_endian_values() {
    let bytes = randint_chunk(8, 8, 1000, -50, 50).unwrap();
    assert_eq!(bytes.len(), 8000);
    let g = Generator::new(8, 8);
    for (i, v) in i64s(&bytes).into_iter().enumerate() {
        // Lemire's multiply-shift, spelled out.
        let expect = -50 + ((g.at(i as u64) as u128 * 100) >> 64) as i64;
        assert_eq!(v, expect, "element {i}");
    }
}
