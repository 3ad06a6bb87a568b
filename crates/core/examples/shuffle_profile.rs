//! Decode speed of one shuffled lz4 frame, decoded in a loop for 5 s with
//! warm buffers: the core alone, without Node's call or memory.
//!
//!   cargo run --release -p spillway-core --example shuffle_profile smooth|ints|dem
//!
//! `dem` reads /tmp/dem.i16, the int16 elevation grid of matplotlib's sample
//! data as bench/core/blosc.js extracts it (bench/.venv/bin/python -c "import
//! numpy as np, matplotlib.cbook as cb; np.load(cb.get_sample_data(
//! 'jacksboro_fault_dem.npz', asfileobj=False))['elevation'].astype('<i2').tofile('/tmp/dem.i16')").
use spillway_core::codec::{self, Codec, Filter};
use std::time::Instant;
fn main() {
    let kind = std::env::args().nth(1).unwrap_or("smooth".into());
    let (data, es): (Vec<u8>, u8) = if kind == "dem" { (std::fs::read("/tmp/dem.i16").unwrap(), 2) } else if kind == "ints" {
        (spillway_core::chunk::randint_chunk(1, 0, 4_000_000, 0, 10).unwrap(), 8)
    } else {
        ((0..4_000_000u64).flat_map(|i| (280.0 + 15.0 * (i as f64 * 1e-3).sin() + ((i * 2654435761) % 1000) as f64 * 1e-7).to_le_bytes()).collect(), 8)
    };
    let frame = codec::encode_to_vec_filtered(&data, Codec::Lz4, Filter::Shuffle(es), None).unwrap();
    let t = Instant::now();
    let mut n = 0;
    while t.elapsed().as_secs_f64() < 5.0 {
        let out = codec::decode(&frame).unwrap();
        spillway_core::pool::give(out);
        n += 1;
    }
    println!("{kind}: ratio {:.3} decode {:.0} MB/s", data.len() as f64 / frame.len() as f64, n as f64 * data.len() as f64 / 1e6 / t.elapsed().as_secs_f64());
}
