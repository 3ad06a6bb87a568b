//! Property tests of the frame decoder: whatever bytes it is handed, it
//! never panics, and it never returns data other than what was encoded.


use proptest::prelude::*;
use spillway_core::codec::{decode, encode_filtered, Codec, Filter, FrameHeader, HEADER_LEN};
use spillway_core::Error;
use xxhash_rust::xxh3::Xxh3;

fn reseal(frame: &mut [u8]) {
    if frame.len() < HEADER_LEN {
        return;
    }
    let mut h = Xxh3::new();
    h.update(&frame[..24]);
    h.update(&frame[HEADER_LEN..]);
    let sum = h.digest();
    frame[24..32].copy_from_slice(&sum.to_le_bytes());
}

fn codec() -> impl Strategy<Value = (Codec, Option<i32>)> {
    prop_oneof![
        Just((Codec::Lz4, None)),
        Just((Codec::Snappy, None)),
        Just((Codec::None, None)),
        (1..=6i32).prop_map(|l| (Codec::Zstd, Some(l))),
        (1..=9i32).prop_map(|l| (Codec::Zlib, Some(l))),
    ]
}

/// No filter half of the time, else a byte shuffle of any element size.
fn filter() -> impl Strategy<Value = Filter> {
    prop_oneof![Just(Filter::None), (2..=8u8).prop_map(Filter::Shuffle)]
}

/// Data the codecs treat differently: noise, runs, and a small alphabet.
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..3000),
        proptest::collection::vec(0u8..4, 0..3000),
        (any::<u8>(), 0usize..20_000).prop_map(|(b, n)| vec![b; n]),
        (1usize..64, 0usize..40).prop_map(|(n, r)| crate::it::common::text(n).repeat(r)),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    Flip { at: usize, xor: u8 },
    Truncate { to: usize },
    Insert { at: usize, byte: u8 },
    Remove { at: usize },
    Append { bytes: Vec<u8> },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 1..=255u8).prop_map(|(at, xor)| Mutation::Flip { at, xor }),
        1 => any::<usize>().prop_map(|to| Mutation::Truncate { to }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        1 => any::<usize>().prop_map(|at| Mutation::Remove { at }),
        1 => proptest::collection::vec(any::<u8>(), 1..16).prop_map(|bytes| Mutation::Append { bytes }),
    ]
}

fn apply(frame: &mut Vec<u8>, m: &Mutation) {
    let n = frame.len();
    match m {
        Mutation::Flip { at, xor } if n > 0 => frame[at % n] ^= xor,
        Mutation::Truncate { to } => frame.truncate(to % (n + 1)),
        Mutation::Insert { at, byte } => frame.insert(at % (n + 1), *byte),
        Mutation::Remove { at } if n > 0 => {
            frame.remove(at % n);
        }
        Mutation::Append { bytes } => frame.extend_from_slice(bytes),
        _ => {}
    }
}

fn decode_split(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let header = FrameHeader::parse(bytes)?;
    header.decode_payload(bytes[HEADER_LEN..].to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = FrameHeader::parse(&bytes);
        prop_assert!(decode(&bytes).is_err(), "noise decoded");
        if bytes.len() >= HEADER_LEN {
            prop_assert!(decode_split(&bytes).is_err());
        }
    }

    /// Our magic and version, any other header fields, any payload, and a
    /// checksum that matches: the codec decoders themselves face noise.
    #[test]
    fn sealed_noise_never_panics_or_lies_about_its_length(
        codec_id in 0u8..6,
        level in any::<u8>(),
        flags in prop_oneof![Just(0u8), 0x11u8..=0x17, any::<u8>()],
        decoded_len in prop_oneof![0u64..5000, any::<u64>()],
        payload in proptest::collection::vec(any::<u8>(), 0..600),
        honest_payload_len in any::<bool>(),
        wrong_payload_len in any::<u64>(),
    ) {
        let mut f = b"SPWF\x01".to_vec();
        f.push(codec_id);
        f.push(level);
        f.push(flags);
        f.extend_from_slice(&decoded_len.to_le_bytes());
        let payload_len = if honest_payload_len { payload.len() as u64 } else { wrong_payload_len };
        f.extend_from_slice(&payload_len.to_le_bytes());
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&payload);
        reseal(&mut f);
        for r in [decode(&f), decode_split(&f)] {
            match r {
                Ok(v) => {
                    prop_assert_eq!(v.len() as u64, decoded_len);
                    if codec_id == 0 {
                        prop_assert_eq!(flags, 0);
                        prop_assert_eq!(&v, &payload);
                    }
                }
                Err(Error::CorruptFrame { .. }) => {}
                Err(e) => prop_assert!(false, "not a CorruptFrame: {e:?}"),
            }
        }
    }

    /// Any edit to a valid frame is either caught or harmless: whenever
    /// decoding succeeds it yields exactly the original bytes.
    #[test]
    fn mutated_frames_never_decode_to_other_data(
        data in data(),
        (codec, level) in codec(),
        filter in filter(),
        mutations in proptest::collection::vec(mutation(), 0..4),
    ) {
        let frame = encode_filtered(&data, codec, filter, level).unwrap().to_vec();
        prop_assert_eq!(&decode(&frame).unwrap(), &data);
        let mut f = frame.clone();
        for m in &mutations {
            apply(&mut f, m);
        }
        for r in [decode(&f), decode_split(&f)] {
            match r {
                Ok(v) => prop_assert_eq!(&v, &data, "a mutated frame decoded to other bytes"),
                Err(Error::CorruptFrame { .. }) => prop_assert!(f != frame, "an intact frame was refused"),
                Err(e) => prop_assert!(false, "not a CorruptFrame: {e:?}"),
            }
        }
    }

    /// The same edits with the checksum recomputed, so the payload reaches
    /// the codec: any outcome but a panic or a wrong length is acceptable.
    #[test]
    fn resealed_mutations_never_panic_or_lie_about_their_length(
        data in data(),
        (codec, level) in codec(),
        filter in filter(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        let mut f = encode_filtered(&data, codec, filter, level).unwrap().to_vec();
        for m in &mutations {
            apply(&mut f, m);
        }
        // Keep the declared payload length honest half of the time so the
        // codec, not the length check, gets to see the damage.
        if f.len() >= HEADER_LEN && data.len() % 2 == 0 {
            let n = (f.len() - HEADER_LEN) as u64;
            f[16..24].copy_from_slice(&n.to_le_bytes());
        }
        reseal(&mut f);
        for r in [decode(&f), decode_split(&f)] {
            match r {
                Ok(v) => {
                    let h = FrameHeader::parse(&f).unwrap();
                    prop_assert_eq!(v.len() as u64, h.decoded_len);
                }
                Err(Error::CorruptFrame { .. }) => {}
                Err(e) => prop_assert!(false, "not a CorruptFrame: {e:?}"),
            }
        }
    }
}
