//! The codec kernels alone on bench/core's 32 MB buffers, into warm output:
//! lz4_flex against LZ4's C library per direction, zstd one-shot (a fresh
//! context per call) against a reused context, and the XXH3 pass a frame
//! adds. `cargo run --release -p spillway-core --example codec_kernels`
use std::hash::Hasher;
use std::os::raw::c_int;

mod common;
use common::{buffers, median};

fn main() {
    let n = 4_000_000;
    let reps: usize = std::env::var("REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(21);
    for (name, data) in buffers(n) {
        println!("== {name} ({} bytes), median ms of {reps}", data.len());
        println!("  xxh3-64 (twox-hash):      {:.2}", median(reps, || {
            let mut h = twox_hash::XxHash3_64::new();
            h.write(&data);
            h.finish()
        }));
        let mut out = vec![1u8; lz4_flex::block::get_maximum_output_size(data.len())];
        let mut back = vec![1u8; data.len()];
        println!("  memcpy:                   {:.2}", median(reps, || back.copy_from_slice(&data)));
        let flex_c = median(reps, || lz4_flex::block::compress_into(&data, &mut out).unwrap());
        let cn = lz4_flex::block::compress_into(&data, &mut out).unwrap();
        let flex_d = median(reps, || lz4_flex::block::decompress_into(&out[..cn], &mut back).unwrap());
        let cap = out.len() as c_int;
        let sys_c = median(reps, || unsafe { lz4_sys::LZ4_compress_default(data.as_ptr().cast(), out.as_mut_ptr().cast(), data.len() as c_int, cap) });
        let sn = unsafe { lz4_sys::LZ4_compress_default(data.as_ptr().cast(), out.as_mut_ptr().cast(), data.len() as c_int, cap) } as usize;
        let sys_d = median(reps, || unsafe { lz4_sys::LZ4_decompress_safe(out.as_ptr().cast(), back.as_mut_ptr().cast(), sn as c_int, back.len() as c_int) });
        assert_eq!(back, data);
        println!("  lz4_flex  c {flex_c:.2}  d {flex_d:.2}  ({cn} bytes)");
        println!("  lz4 (C)   c {sys_c:.2}  d {sys_d:.2}  ({sn} bytes)");
        for level in [1, 3, 9] {
            let mut zo = vec![1u8; zstd::zstd_safe::compress_bound(data.len())];
            let fresh_c = median(reps.min(9), || zstd::zstd_safe::compress(&mut zo[..], &data, level).unwrap());
            let mut cctx = zstd::zstd_safe::CCtx::create();
            let reuse_c = median(reps.min(9), || cctx.compress(&mut zo[..], &data, level).unwrap());
            let zn = cctx.compress(&mut zo[..], &data, level).unwrap();
            let fresh_d = median(reps, || zstd::zstd_safe::decompress(&mut back[..], &zo[..zn]).unwrap());
            let mut dctx = zstd::zstd_safe::DCtx::create();
            let reuse_d = median(reps, || dctx.decompress(&mut back[..], &zo[..zn]).unwrap());
            println!("  zstd-{level}    c fresh {fresh_c:.2} reused {reuse_c:.2}   d fresh {fresh_d:.2} reused {reuse_d:.2}");
        }
    }
}
