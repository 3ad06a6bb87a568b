//! Inputs shared by the integration tests (one binary, `tests/it/main.rs`);
//! not every helper is used by every test.
#![allow(dead_code)]

pub mod reduce;
pub mod spill;

use spillway_core::chunk::{randint_chunk, random_chunk, Generator};
use spillway_core::codec::{Codec, FrameHeader, HEADER_LEN};
use spillway_core::Error;

/// Incompressible bytes, reproducible from `seed`.
pub fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let g = Generator::new(seed, 0xB17E5);
    let mut out = Vec::with_capacity(len + 8);
    let mut i = 0;
    while out.len() < len {
        out.extend_from_slice(&g.at(i).to_le_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}

/// int64 values in [0, 10): the recipe's `randint(0, 10)`, which every codec
/// shrinks several-fold.
pub fn small_ints(seed: u64, values: usize) -> Vec<u8> {
    randint_chunk(seed, 7, values, 0, 10).unwrap()
}

pub fn random_floats(seed: u64, values: usize) -> Vec<u8> {
    random_chunk(seed, 3, values).unwrap()
}

/// Text-like data: repeated words with some variation.
pub fn text(len: usize) -> Vec<u8> {
    let words = ["spill ", "chunk ", "worker ", "memory ", "target ", "lz4 ", "zstd "];
    let g = Generator::new(5, 5);
    let mut out = Vec::with_capacity(len + 8);
    let mut i = 0;
    while out.len() < len {
        out.extend_from_slice(words[(g.at(i) % words.len() as u64) as usize].as_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}

/// Every codec with the levels worth covering: zstd's range ends and
/// defaults, zlib's fastest, default and best.
pub fn settings() -> Vec<(Codec, Option<i32>)> {
    let mut v = vec![(Codec::Lz4, None), (Codec::Snappy, None), (Codec::None, None)];
    for l in [1, 3, 9, 19] {
        v.push((Codec::Zstd, Some(l)));
    }
    v.push((Codec::Zstd, None));
    for l in [1, 6, 9] {
        v.push((Codec::Zlib, Some(l)));
    }
    v.push((Codec::Zlib, None));
    v
}

pub fn compressing_codecs() -> [Codec; 4] {
    [Codec::Lz4, Codec::Zstd, Codec::Snappy, Codec::Zlib]
}

/// Runs the test `name` of the current test binary again in a child process
/// for each kernel level (SPILLWAY_SIMD), and checks that it passed there and
/// really ran at that level. Levels the CPU lacks fall back to lower ones,
/// which the child reports; "base" is always available.
pub fn run_at_every_simd_level(name: &str) {
    let exe = std::env::current_exe().unwrap();
    for level in ["base", "avx2", "avx512"] {
        let out = std::process::Command::new(&exe)
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env("SPILLWAY_SIMD", level)
            .env("SPILLWAY_CHILD_TEST", "1")
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && text.contains("1 passed"), "{name} at {level}:\n{text}");
        let ran = text.split("simd level: ").nth(1).and_then(|t| t.split_whitespace().next()).unwrap_or("?").to_string();
        if level == "base" {
            assert_eq!(ran, "base", "{text}");
        }
        eprintln!("{name}: asked for {level}, ran at {ran}");
    }
}

/// Prints the kernel level for `run_at_every_simd_level` to read.
pub fn report_simd_level() {
    println!("simd level: {}", spillway_core::chunk::simd_level());
}

/// Decodes by the route the SpillBuffer takes (header first, then the
/// payload read separately), which must agree with `decode`.
pub fn decode_split(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let header = FrameHeader::parse(bytes)?;
    header.decode_payload(bytes[HEADER_LEN..].to_vec())
}
