//! Where a codec call's time goes, piece by piece, on 32 MB buffers: fresh
//! memory's first touch, the checksum pass, the codec kernel into warm and
//! into fresh output. `cargo run --release -p spillway-core --example codec_parts`
use std::hash::Hasher;

mod common;
use common::{buffers, median};
use spillway_core::codec::{self, Codec};

fn main() {
    let n = 4_000_000;
    let reps = 15;
    for (name, data) in buffers(n) {
        println!("== {name} ({} bytes), median ms", data.len());
        println!("  fresh zeroed + touch every page: {:.2}", median(reps, || {
            let mut v = vec![0u8; data.len()];
            for i in (0..v.len()).step_by(4096) { v[i] = 1; }
            v
        }));
        println!("  memcpy into warm buffer:         {:.2}", {
            let mut out = vec![1u8; data.len()];
            median(reps, || { out.copy_from_slice(&data); out[7] })
        });
        println!("  xxh3 (twox-hash) of input:       {:.2}", median(reps, || {
            let mut h = twox_hash::XxHash3_64::new(); h.write(&data); h.finish()
        }));
        let mut warm = vec![1u8; lz4_flex::block::get_maximum_output_size(data.len())];
        println!("  lz4_flex into warm buffer:       {:.2}", median(reps, || lz4_flex::block::compress_into(&data, &mut warm).unwrap()));
        println!("  lz4_flex compress (own alloc):   {:.2}", median(reps, || lz4_flex::block::compress(&data)));
        let mut warm_s = vec![1u8; snap::raw::max_compress_len(data.len())];
        println!("  snap into warm buffer:           {:.2}", median(reps, || snap::raw::Encoder::new().compress(&data, &mut warm_s).unwrap()));
        for c in [Codec::Lz4, Codec::Snappy, Codec::Zstd, Codec::Zlib] {
            let lvl = if c == Codec::Zstd { Some(1) } else if c == Codec::Zlib { Some(1) } else { None };
            let f = codec::encode_to_vec(&data, c, lvl).unwrap();
            println!("  {:>6} encode_to_vec: {:.2}  decode: {:.2}  (ratio {:.2})", c.name(),
                median(reps, || codec::encode_to_vec(&data, c, lvl).unwrap()),
                median(reps, || codec::decode(&f).unwrap()),
                data.len() as f64 / f.len() as f64);
        }
    }
}
