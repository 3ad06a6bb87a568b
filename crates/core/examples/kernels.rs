//! The reduction and generation kernels alone on 32 MB, median of 31 calls:
//! what the JS-facing figures in bench/core cost before any thread hop.
//! `cargo run --release -p spillway-core --example kernels`
use std::time::Instant;

use spillway_core::chunk::{partial, randint_chunk, random_chunk, Dtype, Op};

fn median_ms<T>(mut f: impl FnMut() -> T) -> f64 {
    let mut times: Vec<f64> = (0..31)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[times.len() / 2]
}

fn main() {
    let n = 4_000_000;
    let floats = random_chunk(1, 0, n).unwrap();
    let ints = randint_chunk(1, 0, n, 0, 10).unwrap();
    println!("simd level: {}", spillway_core::chunk::simd_level());
    println!("sum float64: {:.3} ms", median_ms(|| partial(&floats, Dtype::F64, Op::Sum).unwrap()));
    println!("sum int64:   {:.3} ms", median_ms(|| partial(&ints, Dtype::I64, Op::Sum).unwrap()));
    println!("plain f64 sum (no compensation): {:.3} ms", median_ms(|| {
        let xs: &[f64] = unsafe { floats.align_to::<f64>().1 };
        let mut s = [0.0f64; 16];
        for c in xs.chunks_exact(16) { for k in 0..16 { s[k] += c[k]; } }
        s.iter().sum::<f64>()
    }));
}
