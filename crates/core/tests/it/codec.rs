//! Codec frames: every codec round-trips every kind of input, incompressible
//! data is stored raw, levels and names are checked. Damaged frames are in
//! frame_rejection.rs.


use crate::it::common::*;
use spillway_core::codec::{self, decode, encode, encode_if_smaller, encode_to_vec, Codec, HEADER_LEN};
use spillway_core::Error;

fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("empty", vec![]),
        ("one byte", vec![42]),
        ("seven bytes", b"spillwy".to_vec()),
        ("random 300 KB", random_bytes(1, 300_000)),
        ("random floats", random_floats(2, 40_000)),
        ("small ints", small_ints(3, 40_000)),
        ("text", text(100_000)),
        ("zeros 1 MB", vec![0; 1 << 20]),
        ("odd length", random_bytes(4, 10_001)),
    ]
}

#[test]
fn encode_roundtrips_every_codec_level_and_input() {
    for (codec, level) in settings() {
        for (name, data) in inputs() {
            let f = encode(&data, codec, level).unwrap();
            assert_eq!(f.codec(), codec, "{codec:?} {name}: encode must use the codec asked for");
            assert_eq!(f.header.decoded_len, data.len() as u64);
            assert_eq!(f.header.payload_len, f.payload.len() as u64);
            let bytes = f.to_vec();
            assert_eq!(bytes.len(), f.len());
            assert_eq!(bytes.len(), HEADER_LEN + f.payload.len());
            let mut written = Vec::new();
            f.write_to(&mut written).unwrap();
            assert_eq!(written, bytes, "write_to and to_vec must produce the same frame");
            assert_eq!(encode_to_vec(&data, codec, level).unwrap(), bytes, "{codec:?} {level:?} {name}: encode_to_vec");
            assert_eq!(decode(&bytes).unwrap(), data, "{codec:?} {level:?} {name}");
            assert_eq!(decode_split(&bytes).unwrap(), data, "{codec:?} {level:?} {name} (split)");
        }
    }
}

#[test]
fn encode_if_smaller_roundtrips_every_codec_level_and_input() {
    for (codec, level) in settings() {
        for (name, data) in inputs() {
            let f = encode_if_smaller(&data, codec, level).unwrap();
            assert!(f.codec() == codec || f.codec() == Codec::None, "{codec:?} {name}: got {:?}", f.codec());
            // Never worse than raw by more than the header.
            assert!(f.payload.len() <= data.len(), "{codec:?} {name}: payload grew");
            assert_eq!(decode(&f.to_vec()).unwrap(), data, "{codec:?} {level:?} {name}");
        }
    }
}

#[test]
fn levels_are_recorded_and_change_the_output() {
    let data = text(200_000);
    let l1 = encode(&data, Codec::Zstd, Some(1)).unwrap();
    let l19 = encode(&data, Codec::Zstd, Some(19)).unwrap();
    assert_eq!((l1.header.level, l19.header.level), (1, 19));
    assert!(l19.payload.len() < l1.payload.len(), "zstd 19 should beat zstd 1 on text");
    let z1 = encode(&data, Codec::Zlib, Some(1)).unwrap();
    let z9 = encode(&data, Codec::Zlib, Some(9)).unwrap();
    assert!(z9.payload.len() < z1.payload.len());
    assert_eq!(encode(&data, Codec::Zstd, None).unwrap().header.level, 3);
    assert_eq!(encode(&data, Codec::Zlib, None).unwrap().header.level, 6);
}

#[test]
fn incompressible_data_is_stored_raw_and_borrowed() {
    let floats = random_floats(9, 500_000);
    let bytes = random_bytes(10, 1_000_000);
    for codec in compressing_codecs() {
        for (name, data) in [("floats", &floats), ("bytes", &bytes)] {
            let f = encode_if_smaller(data, codec, None).unwrap();
            assert_eq!(f.codec(), Codec::None, "{codec:?} on random {name} must come out raw");
            assert!(matches!(f.payload, std::borrow::Cow::Borrowed(_)), "a raw frame must not copy the chunk");
            assert_eq!(decode(&f.to_vec()).unwrap(), *data);
        }
    }
}

#[test]
fn compressible_data_is_compressed() {
    let ints = small_ints(11, 500_000);
    for (codec, level) in settings() {
        if codec == Codec::None {
            continue;
        }
        let f = encode_if_smaller(&ints, codec, level).unwrap();
        assert_eq!(f.codec(), codec, "{codec:?} {level:?} must compress small ints");
        assert!(f.payload.len() * 2 < ints.len(), "{codec:?} {level:?}: {} of {}", f.payload.len(), ints.len());
    }
}

#[test]
fn small_inputs_are_not_worth_compressing() {
    // Dask's maybe_compress skips inputs under 10 kB: the header and the
    // call cost more than they save.
    let data = vec![0u8; 9_000];
    for codec in compressing_codecs() {
        assert_eq!(encode_if_smaller(&data, codec, None).unwrap().codec(), Codec::None);
        assert_eq!(encode(&data, codec, None).unwrap().codec(), codec);
    }
}

#[test]
fn a_compressible_middle_is_not_missed_by_sampling() {
    // Random data with compressible stretches between the samples still ends
    // up raw or compressed, but always decodes exactly.
    let mut data = random_bytes(12, 2_000_000);
    data[300_000..1_700_000].fill(7);
    for codec in compressing_codecs() {
        let f = encode_if_smaller(&data, codec, None).unwrap();
        assert_eq!(decode(&f.to_vec()).unwrap(), data);
    }
}

#[test]
fn levels_outside_the_range_are_rejected() {
    let data = b"abc";
    for (codec, level) in [
        (Codec::Zstd, 0),
        (Codec::Zstd, 20),
        (Codec::Zstd, -5),
        (Codec::Zlib, 0),
        (Codec::Zlib, 10),
        (Codec::Lz4, 3),
        (Codec::Snappy, 1),
        (Codec::None, 9),
    ] {
        for r in [encode(data, codec, Some(level)).map(|_| ()), encode_if_smaller(data, codec, Some(level)).map(|_| ())] {
            match r {
                Err(Error::InvalidLevel { level: l, .. }) => assert_eq!(l, level),
                other => panic!("{codec:?} level {level}: {other:?}"),
            }
        }
    }
    // Codecs without levels take the conventional "default" values.
    for codec in [Codec::Lz4, Codec::Snappy, Codec::None] {
        for level in [0, -1] {
            assert!(encode(data, codec, Some(level)).is_ok(), "{codec:?} {level}");
        }
    }
}

#[test]
fn codec_names_parse_and_unknown_names_list_the_valid_ones() {
    assert_eq!(Codec::parse("auto").unwrap(), Codec::Lz4);
    for c in Codec::ALL {
        assert_eq!(Codec::parse(c.name()).unwrap(), c);
    }
    assert_eq!(codec::available(), vec!["lz4", "zstd", "snappy", "zlib", "none"]);
    assert_eq!(
        codec::available_methods(),
        vec!["lz4", "zstd", "snappy", "zlib", "none", "lz4+shuffle", "zstd+shuffle", "snappy+shuffle", "zlib+shuffle"]
    );
    let e = Codec::parse("brotli").unwrap_err();
    assert_eq!(e.code(), "ERR_SPILLWAY_UNKNOWN_CODEC");
    let msg = e.to_string();
    for name in ["'auto'", "'lz4'", "'zstd'", "'snappy'", "'zlib'", "'none'", "brotli"] {
        assert!(msg.contains(name), "{msg} should mention {name}");
    }
    assert!(Codec::parse("LZ4").is_err(), "names are case-sensitive, as in the config");
}
