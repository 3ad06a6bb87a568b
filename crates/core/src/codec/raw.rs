//! Codec payloads without framing: each function writes into a caller-sized
//! buffer so that decoding can never allocate more than the frame declared.

use super::Codec;
use crate::error::{Error, Result};

fn codec_err(codec: Codec, message: impl ToString) -> Error {
    Error::Codec { codec: codec.name(), message: message.to_string() }
}

/// Upper bound of the compressed size of `len` input bytes.
pub(crate) fn max_compressed_len(codec: Codec, len: usize) -> usize {
    match codec {
        Codec::None => len,
        Codec::Lz4 => lz4_flex::block::get_maximum_output_size(len),
        Codec::Zstd => zstd::zstd_safe::compress_bound(len),
        Codec::Snappy => snap::raw::max_compress_len(len),
        // zlib's compressBound() plus room for the stream header.
        Codec::Zlib => len + (len >> 12) + (len >> 14) + (len >> 25) + 64,
    }
}

/// Compresses `input` into `out` (sized by `max_compressed_len`) and returns
/// the payload length.
pub(crate) fn compress_into(codec: Codec, level: i32, input: &[u8], out: &mut [u8]) -> Result<usize> {
    match codec {
        Codec::None => {
            out[..input.len()].copy_from_slice(input);
            Ok(input.len())
        }
        Codec::Lz4 => lz4_flex::block::compress_into(input, out).map_err(|e| codec_err(codec, e)),
        Codec::Zstd => zstd::zstd_safe::compress(out, input, level).map_err(|code| {
            codec_err(codec, zstd::zstd_safe::get_error_name(code))
        }),
        Codec::Snappy => snap::raw::Encoder::new().compress(input, out).map_err(|e| codec_err(codec, e)),
        Codec::Zlib => {
            use flate2::{Compress, Compression, FlushCompress, Status};
            let mut z = Compress::new(Compression::new(level as u32), true);
            match z.compress(input, out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => Ok(z.total_out() as usize),
                Ok(status) => Err(codec_err(codec, format!("stream did not end ({status:?})"))),
                Err(e) => Err(codec_err(codec, e)),
            }
        }
    }
}

/// Decompresses `input` into `out`, which must come out exactly full.
pub(crate) fn decompress_into(codec: Codec, input: &[u8], out: &mut [u8]) -> Result<()> {
    let expected = out.len();
    let written = match codec {
        Codec::None => {
            if input.len() != expected {
                return Err(Error::corrupt("raw payload length differs from the declared length"));
            }
            out.copy_from_slice(input);
            expected
        }
        Codec::Lz4 => lz4_flex::block::decompress_into(input, out).map_err(|e| Error::corrupt(format!("lz4: {e}")))?,
        Codec::Zstd => zstd::zstd_safe::decompress(out, input)
            .map_err(|code| Error::corrupt(format!("zstd: {}", zstd::zstd_safe::get_error_name(code))))?,
        Codec::Snappy => {
            let n = snap::raw::decompress_len(input).map_err(|e| Error::corrupt(format!("snappy: {e}")))?;
            if n != expected {
                return Err(Error::corrupt("snappy payload length differs from the declared length"));
            }
            snap::raw::Decoder::new().decompress(input, out).map_err(|e| Error::corrupt(format!("snappy: {e}")))?
        }
        Codec::Zlib => {
            use flate2::{Decompress, FlushDecompress, Status};
            let mut z = Decompress::new(true);
            match z.decompress(input, out, FlushDecompress::Finish) {
                Ok(Status::StreamEnd) if z.total_in() as usize == input.len() => z.total_out() as usize,
                Ok(_) => return Err(Error::corrupt("zlib stream is truncated or longer than declared")),
                Err(e) => return Err(Error::corrupt(format!("zlib: {e}"))),
            }
        }
    };
    if written != expected {
        return Err(Error::corrupt(format!("decoded {written} bytes, frame declared {expected}")));
    }
    Ok(())
}
