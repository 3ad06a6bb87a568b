//! Codecs compiled into spillway, and the framing every compressed block uses.

mod block;
mod blocks;
mod choose;
mod frame;
mod lz4c;
mod method;
mod raw;
pub mod shuffle;
pub mod stream;

pub use block::{decode_block, encode_block};
pub use choose::{encode_for_spill, encode_if_smaller};
pub use frame::{
    decode, encode, encode_filtered, encode_to_vec, encode_to_vec_filtered, max_frame_len, max_frame_len_filtered, Encoded, FrameHeader,
    HEADER_LEN,
};
pub use method::{available_methods, Filter, Method, Shuffle};

use crate::error::{Error, Result};

/// A compression codec. `Auto` is not a codec of its own: it resolves to lz4,
/// as in Dask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    None,
    Lz4,
    Zstd,
    Snappy,
    Zlib,
}

impl Codec {
    pub const ALL: [Codec; 5] = [Codec::Lz4, Codec::Zstd, Codec::Snappy, Codec::Zlib, Codec::None];

    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
            Codec::Snappy => "snappy",
            Codec::Zlib => "zlib",
        }
    }

    pub(crate) fn id(self) -> u8 {
        match self {
            Codec::None => 0,
            Codec::Lz4 => 1,
            Codec::Zstd => 2,
            Codec::Snappy => 3,
            Codec::Zlib => 4,
        }
    }

    pub(crate) fn from_id(id: u8) -> Option<Codec> {
        Codec::ALL.into_iter().find(|c| c.id() == id)
    }

    /// Parses a codec name as the config accepts it ('auto' included).
    pub fn parse(name: &str) -> Result<Codec> {
        match name {
            "auto" => Ok(Codec::Lz4),
            other => Codec::ALL
                .into_iter()
                .find(|c| c.name() == other)
                .ok_or_else(|| Error::UnknownCodec { name: other.to_string(), valid: valid_names() }),
        }
    }

    /// Inclusive level range; codecs without levels accept only their default.
    pub fn level_range(self) -> (i32, i32) {
        match self {
            Codec::Zstd => (1, 19),
            Codec::Zlib => (1, 9),
            _ => (0, 0),
        }
    }

    pub fn default_level(self) -> i32 {
        match self {
            Codec::Zstd => 3,
            Codec::Zlib => 6,
            _ => 0,
        }
    }

    /// Resolves an optional level, rejecting values the codec cannot take.
    pub fn resolve_level(self, level: Option<i32>) -> Result<i32> {
        let (min, max) = self.level_range();
        match level {
            None => Ok(self.default_level()),
            Some(l) if (min..=max).contains(&l) => Ok(l),
            // Codecs without levels ignore the conventional "default" values.
            Some(l) if min == max && (l == 0 || l == -1) => Ok(min),
            Some(l) => Err(Error::InvalidLevel { codec: self.name(), level: l, min, max }),
        }
    }

    /// The largest ratio of decoded to encoded size the codec can produce.
    /// Frames that declare more are forged: refusing them bounds allocation.
    pub(crate) fn max_expansion(self) -> u64 {
        match self {
            Codec::None => 1,
            Codec::Lz4 => 256,
            Codec::Snappy => 64,
            Codec::Zlib => 1100,
            // RLE blocks encode 128 KiB in a handful of bytes.
            Codec::Zstd => 1 << 16,
        }
    }
}

/// Names of the codecs compiled in, as listed by `availableCodecs()`.
pub fn available() -> Vec<&'static str> {
    Codec::ALL.iter().map(|c| c.name()).collect()
}

fn valid_names() -> Vec<&'static str> {
    let mut names = vec!["auto"];
    names.extend(available());
    names
}
