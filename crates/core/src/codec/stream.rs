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

/// The whole content of a compressed file. With `max_output`, refused with
/// `OutputTooLarge` as soon as the content passes that many bytes, while
/// decoding: a bomb (a megabyte that inflates to gigabytes) is never
/// inflated whole, and the result never grows past `max_output + 1` bytes.
pub fn decode_stream(format: StreamFormat, data: &[u8], max_output: Option<usize>) -> Result<Vec<u8>> {
    let mut input = data;
    decode_from(format, &mut input, max_output.unwrap_or(usize::MAX))
}

/// Decodes `input`, advancing it past what the decoder read: what is left
/// shows how far a refused bomb was read.
fn decode_from(format: StreamFormat, input: &mut &[u8], limit: usize) -> Result<Vec<u8>> {
    let mut out = Bounded { buf: Vec::new(), len: 0, limit, format };
    match format {
        // One decoder reads every frame of a concatenated stream. Its window
        // is bounded (2^27 bytes unless a frame is allowed more), so only
        // the output needs the bound.
        StreamFormat::Zstd => {
            let mut decoder = zstd::stream::read::Decoder::with_buffer(&mut *input).map_err(|e| failed(format, e))?;
            out.fill(&mut decoder)?;
        }
        // lz4_flex ends its stream at the end of each frame; the lz4 tool
        // reads frames written one after another as one file, and so do we.
        StreamFormat::Lz4 => {
            let mut decoder = lz4_flex::frame::FrameDecoder::new(&mut *input);
            loop {
                let left = decoder.get_ref().len();
                out.fill(&mut decoder)?;
                if decoder.get_ref().is_empty() || decoder.get_ref().len() == left {
                    break;
                }
            }
        }
    }
    Ok(out.finish())
}

/// The first read size: small files stay small, large ones double from here.
const FIRST_READ: usize = 64 * 1024;

/// Decoded bytes, written straight into a buffer that doubles as it fills
/// but never past `limit + 1` bytes: one byte past the limit is the proof
/// that the content is too large.
struct Bounded {
    buf: Vec<u8>,
    /// Bytes decoded; `buf` past them is room for the next read.
    len: usize,
    limit: usize,
    format: StreamFormat,
}

impl Bounded {
    /// Reads `r` to its end, or refuses as soon as the limit is passed.
    fn fill(&mut self, r: &mut impl Read) -> Result<()> {
        loop {
            if self.len == self.buf.len() {
                // len <= limit here, so the buffer always grows by at least a byte.
                let grown = self.len.saturating_mul(2).max(self.len.saturating_add(FIRST_READ)).min(self.limit.saturating_add(1));
                self.buf.resize(grown, 0);
            }
            match r.read(&mut self.buf[self.len..]) {
                Ok(0) => return Ok(()),
                Ok(n) => self.len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(failed(self.format, e)),
            }
            if self.len > self.limit {
                return Err(Error::OutputTooLarge { codec: self.format.name(), limit: self.limit });
            }
        }
    }

    fn finish(mut self) -> Vec<u8> {
        self.buf.truncate(self.len);
        self.buf
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
            assert_eq!(decode_stream(f, &packed, None).unwrap(), text);
            assert_eq!(decode_stream(f, &encode_stream(f, b"", None).unwrap(), None).unwrap(), b"");
        }
    }

    #[test]
    fn concatenated_zstd_frames_decode_as_one_file() {
        let mut two = encode_stream(StreamFormat::Zstd, b"a\n", None).unwrap();
        two.extend(encode_stream(StreamFormat::Zstd, b"b\n", None).unwrap());
        assert_eq!(decode_stream(StreamFormat::Zstd, &two, None).unwrap(), b"a\nb\n");
    }

    #[test]
    fn garbage_is_a_codec_error() {
        for f in [StreamFormat::Zstd, StreamFormat::Lz4] {
            for max in [None, Some(1 << 20)] {
                let e = decode_stream(f, b"definitely not compressed", max).unwrap_err();
                assert_eq!(e.code(), "ERR_SPILLWAY_CODEC");
            }
        }
        assert_eq!(StreamFormat::parse("gzip").unwrap_err().code(), "ERR_SPILLWAY_INVALID_ARGUMENT");
    }

    #[test]
    fn concatenated_lz4_frames_decode_as_one_file() {
        let mut three = encode_stream(StreamFormat::Lz4, b"a\n", None).unwrap();
        three.extend(encode_stream(StreamFormat::Lz4, b"", None).unwrap());
        three.extend(encode_stream(StreamFormat::Lz4, b"b\n", None).unwrap());
        assert_eq!(decode_stream(StreamFormat::Lz4, &three, None).unwrap(), b"a\nb\n");
        assert_eq!(decode_stream(StreamFormat::Lz4, &three, Some(3)).unwrap_err().code(), "ERR_SPILLWAY_TOO_LARGE");
    }

    fn too_large(e: Error) -> usize {
        match e {
            Error::OutputTooLarge { limit, .. } => limit,
            other => panic!("expected OutputTooLarge, got {other}"),
        }
    }

    #[test]
    fn a_bomb_is_refused_while_decoding_not_after() {
        const MIB: usize = 1 << 20;
        // Frames of 8 MiB of one byte, repeated: 64 GiB of zstd content
        // from 2-3 MB, 4 GiB of lz4 content from about 18 MB. Inflated
        // whole, either would take the machine's memory.
        for (f, copies) in [(StreamFormat::Zstd, 8192), (StreamFormat::Lz4, 512)] {
            let frame = encode_stream(f, &vec![b'a'; 8 * MIB], None).unwrap();
            let bomb = frame.repeat(copies);
            let mut input = &bomb[..];
            let e = decode_from(f, &mut input, MIB).unwrap_err();
            assert_eq!(e.code(), "ERR_SPILLWAY_TOO_LARGE");
            assert_eq!(e.to_string(), format!("{} content passes 1048576 bytes: decoding stopped there, before inflating the rest", f.name()));
            assert_eq!(too_large(e), MIB);
            // Stopped in its first frame: no more than one frame was read.
            assert!(bomb.len() - input.len() <= frame.len(), "{f:?} read {} of {} bytes", bomb.len() - input.len(), bomb.len());
        }
    }

    #[test]
    fn the_limit_is_exact() {
        let text: Vec<u8> = (0..40_000u32).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        for f in [StreamFormat::Zstd, StreamFormat::Lz4] {
            for n in [0, 1, FIRST_READ - 1, FIRST_READ, FIRST_READ + 1, 2 * FIRST_READ + 7, text.len()] {
                let packed = encode_stream(f, &text[..n], None).unwrap();
                assert_eq!(decode_stream(f, &packed, Some(n)).unwrap(), &text[..n], "{f:?} {n} bytes at a limit of {n}");
                assert_eq!(decode_stream(f, &packed, Some(n + 1)).unwrap(), &text[..n]);
                if n > 0 {
                    assert_eq!(too_large(decode_stream(f, &packed, Some(n - 1)).unwrap_err()), n - 1, "{f:?} {n} bytes");
                }
            }
        }
    }

    mod property {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn bounded_decoding_is_the_content_or_refused(
                data in prop::collection::vec(any::<u8>(), 0..200_000),
                limit in 0usize..250_000,
                zstd in any::<bool>(),
            ) {
                let f = if zstd { StreamFormat::Zstd } else { StreamFormat::Lz4 };
                let packed = encode_stream(f, &data, None).unwrap();
                match decode_stream(f, &packed, Some(limit)) {
                    Ok(out) => prop_assert!(data.len() <= limit && out == data),
                    Err(e) => prop_assert!(data.len() > limit && too_large(e) == limit),
                }
            }
        }
    }
}
