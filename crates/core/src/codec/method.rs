//! Settings as the config names them: a codec alone ('lz4'), a codec after
//! the byte shuffle ('lz4+shuffle'), or 'auto', which chooses per value.

use super::shuffle::MAX_ELEMENT;
use super::Codec;
use crate::error::{Error, Result};

/// What is done to the bytes before the codec, as a frame records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Filter {
    None,
    /// Byte shuffle of elements of this many bytes (2..=8).
    Shuffle(u8),
}

/// Flag bits of a shuffled frame; the low three bits hold the element size
/// less one. Any other bit set is a frame from a newer writer, refused.
const SHUFFLE_FLAG: u8 = 0x10;

impl Filter {
    /// The shuffle for `element_size`-byte values; none for single bytes,
    /// which a shuffle would leave as they are.
    pub fn shuffle(element_size: usize) -> Filter {
        match element_size {
            2..=MAX_ELEMENT => Filter::Shuffle(element_size as u8),
            _ => Filter::None,
        }
    }

    pub fn element_size(self) -> usize {
        match self {
            Filter::None => 1,
            Filter::Shuffle(s) => s as usize,
        }
    }

    pub(crate) fn flags(self) -> u8 {
        match self {
            Filter::None => 0,
            Filter::Shuffle(s) => SHUFFLE_FLAG | (s - 1),
        }
    }

    pub(crate) fn from_flags(flags: u8) -> Option<Filter> {
        match flags {
            0 => Some(Filter::None),
            f if f & !0x07 == SHUFFLE_FLAG && f & 0x07 != 0 => {
                Some(Filter::Shuffle((f & 0x07) + 1))
            }
            _ => None,
        }
    }
}

/// When values are shuffled before the codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shuffle {
    Never,
    /// Values of known element size are shuffled for it; others as 8-byte
    /// elements, Blosc's default.
    Always,
    /// A sample of each typed value decides: raw, the codec, or the shuffle
    /// and the codec.
    Auto,
}

/// A codec and when to shuffle, parsed from a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Method {
    pub codec: Codec,
    pub shuffle: Shuffle,
}

/// Blosc's element size for bytes of unknown type.
pub const DEFAULT_ELEMENT: usize = 8;

const SHUFFLED: [(&str, Codec); 4] = [
    ("lz4+shuffle", Codec::Lz4),
    ("zstd+shuffle", Codec::Zstd),
    ("snappy+shuffle", Codec::Snappy),
    ("zlib+shuffle", Codec::Zlib),
];

impl Method {
    pub const AUTO: Method = Method {
        codec: Codec::Lz4,
        shuffle: Shuffle::Auto,
    };

    pub fn plain(codec: Codec) -> Method {
        Method {
            codec,
            shuffle: Shuffle::Never,
        }
    }

    /// Parses every name the config accepts: 'auto', the codecs, and the
    /// codecs with '+shuffle'.
    pub fn parse(name: &str) -> Result<Method> {
        if name == "auto" {
            return Ok(Method::AUTO);
        }
        if let Some((_, codec)) = SHUFFLED.iter().find(|(n, _)| *n == name) {
            return Ok(Method {
                codec: *codec,
                shuffle: Shuffle::Always,
            });
        }
        match Codec::ALL.into_iter().find(|c| c.name() == name) {
            Some(codec) => Ok(Method::plain(codec)),
            None => Err(Error::UnknownCodec {
                name: name.to_string(),
                valid: valid_method_names(),
            }),
        }
    }

    /// The filter an exact encode uses for a value of `element_size` bytes
    /// (0: unknown).
    pub fn filter_for(self, element_size: usize) -> Filter {
        match self.shuffle {
            _ if self.codec == Codec::None => Filter::None,
            Shuffle::Never => Filter::None,
            Shuffle::Always if element_size == 0 => Filter::shuffle(DEFAULT_ELEMENT),
            Shuffle::Always | Shuffle::Auto => Filter::shuffle(element_size),
        }
    }
}

/// Every codec name compiled in, the shuffled ones after the plain ones.
pub fn available_methods() -> Vec<&'static str> {
    let mut names = super::available();
    names.extend(SHUFFLED.iter().map(|(n, _)| *n));
    names
}

fn valid_method_names() -> Vec<&'static str> {
    let mut names = vec!["auto"];
    names.extend(available_methods());
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_round_trip_and_unknown_bits_are_refused() {
        for s in 2..=8 {
            let f = Filter::Shuffle(s);
            assert_eq!(Filter::from_flags(f.flags()), Some(f));
        }
        assert_eq!(Filter::from_flags(0), Some(Filter::None));
        for bad in [0x01, 0x07, 0x10, 0x18, 0x20, 0x31, 0x80, 0xff] {
            assert_eq!(Filter::from_flags(bad), None, "{bad:#x}");
        }
    }

    #[test]
    fn names_parse_and_list() {
        assert_eq!(Method::parse("auto").unwrap(), Method::AUTO);
        assert_eq!(Method::parse("zstd").unwrap(), Method::plain(Codec::Zstd));
        assert_eq!(
            Method::parse("zstd+shuffle").unwrap(),
            Method {
                codec: Codec::Zstd,
                shuffle: Shuffle::Always
            }
        );
        let e = Method::parse("lz4+bitshuffle").unwrap_err();
        assert!(e.to_string().contains("'lz4+shuffle'"), "{e}");
        assert!(
            Method::parse("none+shuffle").is_err(),
            "a shuffle with no codec saves nothing"
        );
        for n in available_methods() {
            assert!(Method::parse(n).is_ok(), "{n}");
        }
        assert_eq!(
            Method::parse("lz4+shuffle").unwrap().filter_for(0),
            Filter::Shuffle(8)
        );
        assert_eq!(
            Method::parse("lz4+shuffle").unwrap().filter_for(1),
            Filter::None
        );
        assert_eq!(
            Method::parse("lz4+shuffle").unwrap().filter_for(4),
            Filter::Shuffle(4)
        );
        assert_eq!(Method::parse("lz4").unwrap().filter_for(4), Filter::None);
    }
}
