//! The binary layout of a shuffle shard whose items are the shapes shuffles
//! carry most: strings, numbers, bigints, booleans, null, `[key, value]`
//! pairs of those and flat records of those. The shard is columnar: one
//! tag stream (an item's kind, a record's shape), the numbers as f64, the
//! strings as one run of characters with their lengths, and one v8 blob
//! for the items of any other shape (a tag per item says where each goes).
//! JS walks its values once into these columns and back; the core writes
//! the layout and checks a shard whole before JS reads any of it, so bytes
//! that are not a shard (truncated, corrupt, hostile) never reach the walk.
//!
//! Layout (little-endian): `SWB1`, then u32 flags (bit 0: characters are
//! UTF-16 code units, else Latin-1), items, tag bytes, numbers, strings,
//! character bytes, v8 bytes; then the sections in that order: numbers
//! (f64, 8-aligned from the start), string lengths (u32, in characters),
//! characters, tags, v8.

use crate::error::{Error, Result};

pub const MAGIC: &[u8; 4] = b"SWB1";
pub const HEADER: usize = 32;

pub const NULL: u8 = 0;
pub const FALSE: u8 = 1;
pub const TRUE: u8 = 2;
pub const NUMBER: u8 = 3;
pub const STRING: u8 = 4;
pub const BIGINT: u8 = 5;
/// `[a, b]` of two scalars, which follow.
pub const PAIR: u8 = 6;
/// A record: a varint shape id, then one scalar per key of that shape.
pub const RECORD: u8 = 7;
/// A shape: a varint key count, the keys taken from the strings. Not an item.
pub const SHAPE: u8 = 8;
/// The next item of the v8 blob.
pub const V8: u8 = 9;

const WIDE: u32 = 1;

/// The sections of a shard, as JS made them.
pub struct Sections<'a> {
    pub items: u32,
    pub wide: bool,
    pub numbers: &'a [u8],
    pub lengths: &'a [u8],
    pub chars: &'a [u8],
    pub tags: &'a [u8],
    pub v8: &'a [u8],
}

/// Where each section of a checked shard starts, and its counts.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct Layout {
    pub items: u32,
    pub wide: bool,
    pub numbers_at: usize,
    pub numbers: usize,
    pub lengths_at: usize,
    pub strings: usize,
    pub chars_at: usize,
    pub char_bytes: usize,
    pub tags_at: usize,
    pub tags: usize,
    pub v8_at: usize,
    pub v8_bytes: usize,
    /// Items that are in the v8 blob.
    pub v8_items: u32,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::CorruptShard { reason: reason.into() }
}

/// Writes a shard of `s`, checked as a reader would check it.
pub fn encode(s: &Sections) -> Result<Vec<u8>> {
    if s.numbers.len() % 8 != 0 || s.lengths.len() % 4 != 0 {
        return Err(Error::invalid("sections", "numbers must be whole f64s and lengths whole u32s"));
    }
    let count = |n: usize, what: &'static str| u32::try_from(n).map_err(|_| Error::invalid("sections", format!("{what} of {n} pass a shard's u32 counts")));
    let mut out = Vec::with_capacity(HEADER + s.numbers.len() + s.lengths.len() + s.chars.len() + s.tags.len() + s.v8.len());
    out.extend_from_slice(MAGIC);
    for v in [
        if s.wide { WIDE } else { 0 },
        s.items,
        count(s.tags.len(), "tags")?,
        count(s.numbers.len() / 8, "numbers")?,
        count(s.lengths.len() / 4, "strings")?,
        count(s.chars.len(), "characters")?,
        count(s.v8.len(), "v8 bytes")?,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for part in [s.numbers, s.lengths, s.chars, s.tags, s.v8] {
        out.extend_from_slice(part);
    }
    layout(&out).map_err(|e| Error::invalid("sections", e.to_string()))?;
    Ok(out)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// Whether `b` starts as a shard of this layout (else it is a v8 blob).
pub fn is_shard(b: &[u8]) -> bool {
    b.len() >= 4 && &b[..4] == MAGIC
}

/// Checks a whole shard: sizes that add up, a tag stream that parses and
/// uses exactly the numbers and strings there are, shapes defined before
/// use, bigints written as decimal digits.
pub fn layout(b: &[u8]) -> Result<Layout> {
    if b.len() < HEADER || !is_shard(b) {
        return Err(bad(format!("{} bytes do not start with a shard header", b.len())));
    }
    let flags = u32_at(b, 4);
    if flags & !WIDE != 0 {
        return Err(bad(format!("unknown flags {flags:#x}")));
    }
    let [items, tags, numbers, strings, char_bytes, v8_bytes] = [8, 12, 16, 20, 24, 28].map(|at| u32_at(b, at) as u64);
    let total = HEADER as u64 + 8 * numbers + 4 * strings + char_bytes + tags + v8_bytes;
    if total != b.len() as u64 {
        return Err(bad(format!("sections add up to {total} bytes, the shard has {}", b.len())));
    }
    let wide = flags & WIDE != 0;
    let numbers_at = HEADER;
    let lengths_at = numbers_at + 8 * numbers as usize;
    let chars_at = lengths_at + 4 * strings as usize;
    let tags_at = chars_at + char_bytes as usize;
    let v8_at = tags_at + tags as usize;
    let l = Layout {
        items: items as u32,
        wide,
        numbers_at,
        numbers: numbers as usize,
        lengths_at,
        strings: strings as usize,
        chars_at,
        char_bytes: char_bytes as usize,
        tags_at,
        tags: tags as usize,
        v8_at,
        v8_bytes: v8_bytes as usize,
        v8_items: 0,
    };
    let v8_items = Walk::new(b, &l)?.run()?;
    if (v8_items == 0) != (l.v8_bytes == 0) {
        return Err(bad(format!("{v8_items} items in a v8 blob of {} bytes", l.v8_bytes)));
    }
    Ok(Layout { v8_items, ..l })
}

/// The tag stream read through once, each value taken from its column.
struct Walk<'a> {
    tags: &'a [u8],
    at: usize,
    lengths: &'a [u8],
    chars: &'a [u8],
    unit: usize,
    numbers_left: usize,
    string: usize,
    char_at: usize,
    shapes: Vec<u32>,
    items: u32,
}

impl<'a> Walk<'a> {
    fn new(b: &'a [u8], l: &Layout) -> Result<Self> {
        let unit = if l.wide { 2 } else { 1 };
        if l.char_bytes % unit != 0 {
            return Err(bad(format!("{} bytes of UTF-16 characters", l.char_bytes)));
        }
        Ok(Walk {
            tags: &b[l.tags_at..l.v8_at],
            at: 0,
            lengths: &b[l.lengths_at..l.chars_at],
            chars: &b[l.chars_at..l.tags_at],
            unit,
            numbers_left: l.numbers,
            string: 0,
            char_at: 0,
            shapes: Vec::new(),
            items: l.items,
        })
    }

    fn byte(&mut self) -> Result<u8> {
        let t = *self.tags.get(self.at).ok_or_else(|| bad(format!("tags end at {} in the middle of an item", self.at)))?;
        self.at += 1;
        Ok(t)
    }

    fn varint(&mut self) -> Result<u32> {
        let mut v: u64 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(v).map_err(|_| bad(format!("a count of {v} at tag {}", self.at)));
            }
        }
        Err(bad(format!("a count longer than 5 bytes at tag {}", self.at)))
    }

    /// The next string's characters, as bytes.
    fn string(&mut self) -> Result<&'a [u8]> {
        if (self.string + 1) * 4 > self.lengths.len() {
            return Err(bad(format!("tags use more than the {} strings there are", self.lengths.len() / 4)));
        }
        let n = u32_at(self.lengths, self.string * 4) as usize * self.unit;
        self.string += 1;
        let s = self.chars.get(self.char_at..self.char_at + n).ok_or_else(|| bad(format!("string {} passes the {} character bytes", self.string - 1, self.chars.len())))?;
        self.char_at += n;
        Ok(s)
    }

    fn scalar(&mut self, t: u8) -> Result<()> {
        match t {
            NULL | FALSE | TRUE => Ok(()),
            NUMBER => {
                self.numbers_left = self.numbers_left.checked_sub(1).ok_or_else(|| bad("tags use more numbers than there are"))?;
                Ok(())
            }
            STRING => self.string().map(|_| ()),
            BIGINT => {
                let unit = self.unit;
                let s = self.string()?;
                // Code units of UTF-16 are read by their low byte; the high one must be 0 for a digit.
                let chars: Vec<u8> = s.chunks(unit).map(|c| if unit == 2 && c[1] != 0 { 0xff } else { c[0] }).collect();
                let digits = chars.strip_prefix(b"-").unwrap_or(&chars);
                if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                    return Err(bad(format!("a bigint written as {:?}", String::from_utf8_lossy(&chars[..chars.len().min(40)]))));
                }
                Ok(())
            }
            t => Err(bad(format!("tag {t} where a string, number, bigint, boolean or null belongs"))),
        }
    }

    fn run(mut self) -> Result<u32> {
        let mut items = 0u32;
        let mut v8 = 0u32;
        while self.at < self.tags.len() {
            let t = self.byte()?;
            match t {
                SHAPE => {
                    let n = self.varint()?;
                    for _ in 0..n {
                        self.string()?;
                    }
                    self.shapes.push(n);
                    continue;
                }
                PAIR => {
                    for _ in 0..2 {
                        let s = self.byte()?;
                        self.scalar(s)?;
                    }
                }
                RECORD => {
                    let id = self.varint()? as usize;
                    let n = *self.shapes.get(id).ok_or_else(|| bad(format!("record of shape {id}; {} defined", self.shapes.len())))?;
                    for _ in 0..n {
                        let s = self.byte()?;
                        self.scalar(s)?;
                    }
                }
                V8 => v8 += 1,
                t => self.scalar(t)?,
            }
            items += 1;
        }
        if items != self.items {
            return Err(bad(format!("{items} items in the tags, {} in the header", self.items)));
        }
        if self.numbers_left != 0 || self.string * 4 != self.lengths.len() || self.char_at != self.chars.len() {
            return Err(bad("numbers, strings or characters left over after the last item"));
        }
        Ok(v8)
    }
}

#[cfg(test)]
mod tests;
