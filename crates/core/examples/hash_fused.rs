//! Whether XXH3 over a frame's payload costs less block by block, right
//! after (encode) or before (decode) the codec touches each block, than as a
//! pass of its own. `cargo run --release -p spillway-core --example hash_fused`
use std::hash::Hasher;

mod common;
use common::{buffers, median};

fn main() {
    let reps = 31;
    for (name, data) in buffers(4_000_000) {
        let mut out = vec![1u8; lz4_flex::block::get_maximum_output_size(data.len()) + 4096];
        let mut back = vec![1u8; data.len()];
        let whole = median(reps, || {
            let n = lz4_flex::block::compress_into(&data, &mut out).unwrap();
            let mut h = twox_hash::XxHash3_64::new();
            h.write(&out[..n]);
            h.finish()
        });
        let lz_only = median(reps, || lz4_flex::block::compress_into(&data, &mut out).unwrap());
        let n = lz4_flex::block::compress_into(&data, &mut out).unwrap();
        let d_whole = median(reps, || {
            let mut h = twox_hash::XxHash3_64::new();
            h.write(&out[..n]);
            let s = h.finish();
            lz4_flex::block::decompress_into(&out[..n], &mut back).unwrap();
            s
        });
        println!("== {name}: lz4 c alone {lz_only:.2}, c then hash {whole:.2}; d hash then lz4 {d_whole:.2}");
        for block in [64usize << 10, 256 << 10, 1 << 20] {
            let mut sizes = Vec::new();
            let blocked = median(reps, || {
                let mut h = twox_hash::XxHash3_64::new();
                let mut pos = 0;
                sizes.clear();
                for piece in data.chunks(block) {
                    let c = lz4_flex::block::compress_into(piece, &mut out[pos..]).unwrap();
                    h.write(&out[pos..pos + c]);
                    sizes.push(c);
                    pos += c;
                }
                h.finish()
            });
            let d_blocked = median(reps, || {
                let mut h = twox_hash::XxHash3_64::new();
                let mut pos = 0;
                for (i, &c) in sizes.iter().enumerate() {
                    h.write(&out[pos..pos + c]);
                    let at = i * block;
                    let end = (at + block).min(back.len());
                    lz4_flex::block::decompress_into(&out[pos..pos + c], &mut back[at..end]).unwrap();
                    pos += c;
                }
                h.finish()
            });
            assert_eq!(back, data);
            println!("   blocks of {:>4} KiB: c+hash {blocked:.2}  d+hash {d_blocked:.2}  ({} bytes)", block >> 10, sizes.iter().sum::<usize>());
        }
    }
}
