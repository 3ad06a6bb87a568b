//! What the codec examples share: the median of repeated runs, and
//! bench/core's two 32 MB buffers (random float64, randint int64).
use std::time::Instant;

use spillway_core::chunk::{randint_chunk, random_chunk};

/// The median of `reps` timings of `f`, in milliseconds.
pub fn median<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        std::hint::black_box(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[times.len() / 2] * 1e3
}

/// bench/core's buffers of `n` values: ("float64", random), ("int64", randint 0..10).
pub fn buffers(n: usize) -> [(&'static str, Vec<u8>); 2] {
    [("float64", random_chunk(1, 0, n).unwrap()), ("int64", randint_chunk(1, 0, n, 0, 10).unwrap())]
}
