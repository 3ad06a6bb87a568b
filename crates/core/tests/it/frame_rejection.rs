//! Every damaged frame is refused with CorruptFrame rather than decoded into
//! wrong bytes or a huge allocation.


use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use crate::it::common::*;
use spillway_core::codec::{decode, encode, encode_filtered, Codec, Filter, FrameHeader, HEADER_LEN};
use spillway_core::Error;
use xxhash_rust::xxh3::Xxh3;

/// Records the largest single allocation made by each thread, so a test can
/// prove that decoding a forged frame never asks for the memory it declares.
/// Per thread, because the test harness runs other tests concurrently.
struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|c| {
        if size > c.get() {
            c.set(size)
        }
    });
}

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOC: Tracking = Tracking;

fn largest_allocation_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|c| c.set(0));
    let out = f();
    (out, LARGEST.with(|c| c.get()))
}

fn assert_corrupt(r: Result<Vec<u8>, Error>, what: &str) {
    match r {
        Err(Error::CorruptFrame { .. }) => {}
        Err(other) => panic!("{what}: expected CorruptFrame, got {other:?}"),
        Ok(v) => panic!("{what}: decoded {} bytes from a damaged frame", v.len()),
    }
}

/// Rewrites the checksum so that a deliberately edited frame passes it: what
/// remains to catch the edit are the length and codec checks.
fn reseal(frame: &mut [u8]) {
    let mut h = Xxh3::new();
    h.update(&frame[..24]);
    h.update(&frame[HEADER_LEN..]);
    let sum = h.digest();
    frame[24..32].copy_from_slice(&sum.to_le_bytes());
}

/// A small frame of each codec, plain and shuffled for 2-, 4- and 8-byte
/// elements, compressible enough that its payload is really encoded, for the
/// byte-by-byte corruption tests. The length is no multiple of 8, so the
/// shuffled frames carry a tail of loose bytes too.
fn small_frames() -> Vec<(Codec, Vec<u8>, Vec<u8>)> {
    let mut data = text(600);
    data.extend_from_slice(&random_bytes(13, 100));
    let mut out = Vec::new();
    for c in Codec::ALL {
        out.push((c, data.clone(), encode(&data, c, None).unwrap().to_vec()));
        if c != Codec::None {
            for size in [2, 4, 8] {
                let f = encode_filtered(&data, c, Filter::Shuffle(size), None).unwrap();
                assert_eq!(f.filter(), Filter::Shuffle(size));
                out.push((c, data.clone(), f.to_vec()));
            }
        }
    }
    out
}

#[test]
fn every_flipped_header_bit_is_rejected() {
    for (codec, _, frame) in small_frames() {
        for i in 0..HEADER_LEN {
            for bit in 0..8 {
                let mut f = frame.clone();
                f[i] ^= 1 << bit;
                assert_corrupt(decode(&f), &format!("{codec:?} header byte {i} bit {bit}"));
                assert_corrupt(decode_split(&f), &format!("{codec:?} header byte {i} bit {bit} (split)"));
            }
        }
    }
}

#[test]
fn every_flipped_payload_byte_is_rejected() {
    for (codec, _, frame) in small_frames() {
        for i in HEADER_LEN..frame.len() {
            for x in [0x01, 0x80, 0xFF] {
                let mut f = frame.clone();
                f[i] ^= x;
                assert_corrupt(decode(&f), &format!("{codec:?} payload byte {i} ^ {x:#x}"));
                assert_corrupt(decode_split(&f), &format!("{codec:?} payload byte {i} ^ {x:#x} (split)"));
            }
        }
    }
}

#[test]
fn truncation_at_every_length_is_rejected() {
    for (codec, _, frame) in small_frames() {
        for n in 0..frame.len() {
            assert_corrupt(decode(&frame[..n]), &format!("{codec:?} cut to {n} of {}", frame.len()));
            if n >= HEADER_LEN {
                assert_corrupt(decode_split(&frame[..n]), &format!("{codec:?} cut to {n} (split)"));
            } else {
                assert!(matches!(FrameHeader::parse(&frame[..n]), Err(Error::CorruptFrame { .. })));
            }
        }
    }
}

#[test]
fn trailing_bytes_are_rejected() {
    for (codec, _, frame) in small_frames() {
        for extra in [&[0u8][..], &[0; 7], b"SPWF", &frame[..]] {
            let mut f = frame.clone();
            f.extend_from_slice(extra);
            assert_corrupt(decode(&f), &format!("{codec:?} + {} bytes", extra.len()));
            assert_corrupt(decode_split(&f), &format!("{codec:?} + {} bytes (split)", extra.len()));
        }
    }
}

#[test]
fn resealed_payload_edits_are_caught_by_the_codec_or_the_length() {
    // With the checksum recomputed, only the codec's own validation and the
    // declared length stand between an edited payload and wrong output. An
    // edit may decode to other bytes of the right length (a changed literal);
    // it must never decode to a different length, panic or crash.
    for (codec, data, frame) in small_frames() {
        if codec == Codec::None {
            continue;
        }
        for i in HEADER_LEN..frame.len() {
            let mut f = frame.clone();
            f[i] ^= 0x5A;
            reseal(&mut f);
            match decode(&f) {
                Ok(v) => assert_eq!(v.len(), data.len(), "{codec:?} byte {i}"),
                Err(Error::CorruptFrame { .. }) => {}
                Err(e) => panic!("{codec:?} byte {i}: {e:?}"),
            }
        }
        // Dropping the last payload byte of a resealed frame: truncated stream.
        let mut f = frame[..frame.len() - 1].to_vec();
        let payload_len = (f.len() - HEADER_LEN) as u64;
        f[16..24].copy_from_slice(&payload_len.to_le_bytes());
        reseal(&mut f);
        assert_corrupt(decode(&f), &format!("{codec:?} resealed truncation"));
    }
}

#[test]
fn a_declared_length_that_differs_from_the_stream_is_rejected() {
    for (codec, data, frame) in small_frames() {
        for delta in [-100i64, -1, 1, 100] {
            let mut f = frame.clone();
            let forged = (data.len() as i64 + delta) as u64;
            f[8..16].copy_from_slice(&forged.to_le_bytes());
            if codec == Codec::None {
                // A raw frame must declare its payload length.
                let n = forged;
                f[16..24].copy_from_slice(&n.to_le_bytes());
            }
            reseal(&mut f);
            assert_corrupt(decode(&f), &format!("{codec:?} length {delta:+}"));
            assert_corrupt(decode_split(&f), &format!("{codec:?} length {delta:+} (split)"));
        }
    }
}

/// zstd without the content size in its own frame header, so only our
/// header declares the length: the worst case for a forged length.
fn zstd_without_content_size(data: &[u8]) -> Vec<u8> {
    use zstd::zstd_safe::{CCtx, CParameter};
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::ContentSizeFlag(false)).unwrap();
    let mut out = vec![0u8; zstd::zstd_safe::compress_bound(data.len())];
    let n = cctx.compress2(&mut out[..], data).unwrap();
    out.truncate(n);
    out
}

#[test]
fn a_forged_huge_length_is_rejected_without_a_huge_allocation() {
    // A resealed frame declaring the largest length the header check lets
    // through for its payload size. Decoding must fail on the real stream
    // length before it commits memory anywhere near the declared size.
    let data = random_bytes(14, 64_000);
    let mut data2 = text(16_000);
    data2.extend_from_slice(&data);
    let mut frames: Vec<(String, Vec<u8>)> = Vec::new();
    for codec in compressing_codecs() {
        frames.push((format!("{codec:?}"), encode(&data2, codec, None).unwrap().to_vec()));
        frames.push((format!("{codec:?}+shuffle"), encode_filtered(&data2, codec, Filter::Shuffle(8), None).unwrap().to_vec()));
    }
    // Swap in a zstd stream that does not state its own length.
    let mut bare = encode(&data2, Codec::Zstd, None).unwrap().to_vec();
    bare.truncate(HEADER_LEN);
    bare.extend_from_slice(&zstd_without_content_size(&data2));
    let payload_len = (bare.len() - HEADER_LEN) as u64;
    bare[16..24].copy_from_slice(&payload_len.to_le_bytes());
    reseal(&mut bare);
    assert_eq!(decode(&bare).unwrap(), data2, "the bare zstd frame is valid before forging");
    frames.push(("zstd without content size".into(), bare));

    for (name, frame) in frames {
        let payload_len = u64::from_le_bytes(frame[16..24].try_into().unwrap());
        let mut passed_the_header_check = 0;
        let near_each_codec_limit = [20, 30, 60, 250, 1000, 60_000].map(|r| r * payload_len);
        for forged in [1u64 << 20, 1 << 24, 1 << 30, 1 << 36, 1 << 44, u64::MAX / 2, u64::MAX]
            .into_iter()
            .chain(near_each_codec_limit)
        {
            let mut f = frame.clone();
            f[8..16].copy_from_slice(&forged.to_le_bytes());
            reseal(&mut f);
            if FrameHeader::parse(&f).is_ok() {
                passed_the_header_check += 1;
            }
            let (r, largest) = largest_allocation_during(|| decode(&f));
            assert_corrupt(r, &format!("{name} declaring {forged}"));
            let (r2, largest2) = largest_allocation_during(|| decode_split(&f));
            assert_corrupt(r2, &format!("{name} declaring {forged} (split)"));
            // 8 MiB is far below most forged sizes, and far above anything an
            // 80 kB frame legitimately needs.
            let bound = 8 << 20;
            assert!(largest <= bound, "{name} declaring {forged}: allocated {largest} bytes");
            assert!(largest2 <= bound, "{name} declaring {forged} (split): allocated {largest2} bytes");
        }
        // Otherwise only the cheap header check would have been exercised.
        assert!(passed_the_header_check >= 3, "{name}: {payload_len}-byte payload");
    }
}

#[test]
fn forged_lengths_on_high_ratio_streams_are_rejected() {
    // Streams that decode far past the eager allocation, declared a little
    // longer or shorter than they are: the growing decoders must notice.
    let real = 4usize << 20;
    let data = vec![0u8; real];
    for codec in compressing_codecs() {
        let frame = encode(&data, codec, None).unwrap().to_vec();
        for forged in [real - 1, real + 1, real + (1 << 20), real / 2, real * 2] {
            let mut f = frame.clone();
            f[8..16].copy_from_slice(&(forged as u64).to_le_bytes());
            reseal(&mut f);
            let (r, largest) = largest_allocation_during(|| decode(&f));
            assert_corrupt(r, &format!("{codec:?} {real} zeros declared as {forged}"));
            assert!(largest <= 2 * real.max(forged), "{codec:?} declared {forged}: allocated {largest}");
        }
    }
}

#[test]
fn legitimately_extreme_ratios_still_decode() {
    // The allocation guard must not refuse real high-ratio data.
    for (codec, level) in settings() {
        for len in [1usize << 20, 32 << 20] {
            if matches!(level, Some(19)) && len > 1 << 20 {
                continue;
            }
            let data = vec![0u8; len];
            let f = encode(&data, codec, level).unwrap().to_vec();
            assert_eq!(decode(&f).unwrap(), data, "{codec:?} {level:?} {len} zeros");
            assert_eq!(decode_split(&f).unwrap(), data, "{codec:?} {level:?} {len} zeros (split)");
        }
    }
}

#[test]
fn foreign_data_is_rejected() {
    let gzip = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let zstd_frame = zstd::bulk::compress(b"hello", 3).unwrap();
    let mut lookalike = b"SPWF".to_vec();
    lookalike.extend_from_slice(&random_bytes(15, 200));
    let mut future = encode(b"hello", Codec::Lz4, None).unwrap().to_vec();
    future[4] = 2;
    reseal(&mut future);
    let mut flagged = encode(b"hello", Codec::Lz4, None).unwrap().to_vec();
    flagged[7] = 1;
    reseal(&mut flagged);
    // A shuffle flag with a bit no writer sets, and one on a raw frame.
    let mut shuffled_unknown = encode_filtered(b"hello, hello", Codec::Lz4, Filter::Shuffle(4), None).unwrap().to_vec();
    shuffled_unknown[7] |= 0x20;
    reseal(&mut shuffled_unknown);
    let mut raw_shuffled = encode(b"hello", Codec::None, None).unwrap().to_vec();
    raw_shuffled[7] = 0x13;
    reseal(&mut raw_shuffled);
    let mut unknown_codec = encode(b"hello", Codec::Lz4, None).unwrap().to_vec();
    unknown_codec[5] = 9;
    reseal(&mut unknown_codec);
    for (name, bytes) in [
        ("nothing", vec![]),
        ("random", random_bytes(16, 4096)),
        ("gzip", gzip.to_vec()),
        ("bare zstd", zstd_frame),
        ("text", b"this is not a frame at all, just a sentence".to_vec()),
        ("magic then noise", lookalike),
        ("version 2", future),
        ("flags set", flagged),
        ("unknown shuffle flag", shuffled_unknown),
        ("shuffled raw frame", raw_shuffled),
        ("codec id 9", unknown_codec),
        ("header of zeros", vec![0; HEADER_LEN]),
    ] {
        assert_corrupt(decode(&bytes), name);
        if bytes.len() >= HEADER_LEN {
            assert_corrupt(decode_split(&bytes), name);
        }
        let e = decode(&bytes).unwrap_err();
        assert_eq!(e.code(), "ERR_SPILLWAY_CORRUPT_FRAME");
        assert!(e.to_string().starts_with("corrupt spill frame: "), "{e}");
    }
}

#[test]
fn header_fields_are_what_was_encoded() {
    let data = small_ints(17, 10_000);
    for (codec, level) in settings() {
        let bytes = encode(&data, codec, level).unwrap().to_vec();
        let h = FrameHeader::parse(&bytes).unwrap();
        assert_eq!(h.codec, codec);
        assert_eq!(h.level as i32, codec.resolve_level(level).unwrap());
        assert_eq!(h.decoded_len, data.len() as u64);
        assert_eq!(h.payload_len as usize, bytes.len() - HEADER_LEN);
        assert_eq!(&h.to_bytes()[..], &bytes[..HEADER_LEN]);
        assert_eq!(&bytes[..4], b"SPWF");
    }
}

#[test]
fn decode_payload_checks_the_payload_length() {
    let bytes = encode(&text(5_000), Codec::Zstd, None).unwrap().to_vec();
    let h = FrameHeader::parse(&bytes).unwrap();
    let mut short = bytes[HEADER_LEN..].to_vec();
    short.pop();
    assert_corrupt(h.decode_payload(short), "short payload");
    let mut long = bytes[HEADER_LEN..].to_vec();
    long.push(0);
    assert_corrupt(h.decode_payload(long), "long payload");
}
