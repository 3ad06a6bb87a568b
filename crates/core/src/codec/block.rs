//! A codec's payload without spillway's frame, as other formats store it: a
//! Parquet page is one zstd frame, one LZ4 block or one snappy block whose
//! decoded length the page header gives.

use super::{raw, Codec};
use crate::error::{Error, Result};

/// Decodes one block whose decoded length the caller knows; a block that
/// decodes to any other length is corrupt.
pub fn decode_block(codec: Codec, input: &[u8], decoded_len: usize) -> Result<Vec<u8>> {
    if codec == Codec::None && input.len() != decoded_len {
        return Err(Error::corrupt("raw payload length differs from the declared length"));
    }
    raw::decompress_to_vec(codec, input, decoded_len)
}

/// Encodes `input` as one block (an LZ4 block, a zstd frame, a snappy block, a zlib stream).
pub fn encode_block(codec: Codec, input: &[u8], level: Option<i32>) -> Result<Vec<u8>> {
    let level = codec.resolve_level(level)?;
    let mut out = vec![0u8; raw::max_compressed_len(codec, input.len())];
    let n = raw::compress_into(codec, level, input, &mut out)?;
    out.truncate(n);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips_a_block() {
        let data: Vec<u8> = (0..100_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        for codec in Codec::ALL {
            let enc = encode_block(codec, &data, None).unwrap();
            assert_eq!(decode_block(codec, &enc, data.len()).unwrap(), data, "{}", codec.name());
        }
    }

    #[test]
    fn a_wrong_decoded_length_is_corrupt() {
        let data = vec![7u8; 4096];
        for codec in [Codec::Lz4, Codec::Zstd, Codec::Snappy, Codec::None] {
            let enc = encode_block(codec, &data, None).unwrap();
            assert!(decode_block(codec, &enc, data.len() + 1).is_err(), "{}", codec.name());
        }
    }

    #[test]
    fn a_zstd_block_is_a_standard_zstd_frame() {
        let data = b"parquet page bytes ".repeat(100);
        let enc = encode_block(Codec::Zstd, &data, Some(3)).unwrap();
        assert_eq!(zstd::stream::decode_all(&enc[..]).unwrap(), data);
    }
}
