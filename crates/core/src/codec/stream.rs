//! Standard compressed files, as other tools write them: a zstd stream (one
//! or more frames, `.zst`) and an LZ4 frame stream (`.lz4`). Unlike spillway's
//! own frames these carry no header of ours; they are for reading and
//! writing a user's files (bag readers and writers), never for spill.

use std::io::{Read, Write};

use crate::error::{Error, Result};

/// A standard file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFormat {
    Zstd,
    Lz4,
}

impl StreamFormat {
    pub fn parse(name: &str) -> Result<StreamFormat> {
        match name {
            "zstd" => Ok(StreamFormat::Zstd),
            "lz4" => Ok(StreamFormat::Lz4),
            other => Err(Error::invalid("format", format!("'zstd' or 'lz4', got {other:?}"))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            StreamFormat::Zstd => "zstd",
            StreamFormat::Lz4 => "lz4",
        }
    }
}

fn failed(format: StreamFormat, e: impl std::fmt::Display) -> Error {
    Error::Codec { codec: format.name(), message: e.to_string() }
}

/// The whole content of a compressed file.
pub fn decode_stream(format: StreamFormat, data: &[u8]) -> Result<Vec<u8>> {
    match format {
        StreamFormat::Zstd => zstd::stream::decode_all(data).map_err(|e| failed(format, e)),
        StreamFormat::Lz4 => {
            let mut out = Vec::new();
            lz4_flex::frame::FrameDecoder::new(data).read_to_end(&mut out).map_err(|e| failed(format, e))?;
            Ok(out)
        }
    }
}

/// `data` as a compressed file (zstd at `level`, default 3).
pub fn encode_stream(format: StreamFormat, data: &[u8], level: Option<i32>) -> Result<Vec<u8>> {
    match format {
        StreamFormat::Zstd => zstd::stream::encode_all(data, level.unwrap_or(3)).map_err(|e| failed(format, e)),
        StreamFormat::Lz4 => {
            let mut enc = lz4_flex::frame::FrameEncoder::new(Vec::new());
            enc.write_all(data).map_err(|e| failed(format, e))?;
            enc.finish().map_err(|e| failed(format, e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_both_formats() {
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        for f in [StreamFormat::Zstd, StreamFormat::Lz4] {
            let packed = encode_stream(f, &text, None).unwrap();
            assert!(packed.len() < text.len() / 2, "{f:?} compresses: {} of {}", packed.len(), text.len());
            assert_eq!(decode_stream(f, &packed).unwrap(), text);
            assert_eq!(decode_stream(f, &encode_stream(f, b"", None).unwrap()).unwrap(), b"");
        }
    }

    #[test]
    fn concatenated_zstd_frames_decode_as_one_file() {
        let mut two = encode_stream(StreamFormat::Zstd, b"a\n", None).unwrap();
        two.extend(encode_stream(StreamFormat::Zstd, b"b\n", None).unwrap());
        assert_eq!(decode_stream(StreamFormat::Zstd, &two).unwrap(), b"a\nb\n");
    }

    #[test]
    fn garbage_is_a_codec_error() {
        for f in [StreamFormat::Zstd, StreamFormat::Lz4] {
            let e = decode_stream(f, b"definitely not compressed").unwrap_err();
            assert_eq!(e.code(), "ERR_SPILLWAY_CODEC");
        }
        assert_eq!(StreamFormat::parse("gzip").unwrap_err().code(), "ERR_SPILLWAY_INVALID_ARGUMENT");
    }
}
