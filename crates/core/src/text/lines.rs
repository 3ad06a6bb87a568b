//! Where the lines of text are, found over the bytes (memchr / memmem), so
//! JS decodes a piece of about a MiB once and slices its lines out of the
//! string instead of searching it. Lines are given without their delimiter;
//! a final delimiter ends a file's last line and does not start an empty
//! one; a line never runs from one file into the next.

use memchr::memmem;

/// Line positions, in UTF-16 code units from the start of their piece's
/// decoded string (what JS's `slice` takes).
#[derive(Debug, Default, PartialEq)]
pub struct LineIndex {
    pub starts: Vec<u32>,
    pub ends: Vec<u32>,
    /// Per piece: its first byte, its end byte, its first line and whether
    /// its bytes are all ASCII (JS then decodes them as one-byte Latin-1, a
    /// copy, instead of UTF-8). A piece holds whole lines of about `piece`
    /// bytes, decoded as one string.
    pub pieces: Vec<(usize, usize, usize, bool)>,
    /// Lines per file, in order.
    pub file_lines: Vec<u32>,
}

/// UTF-16 code units the valid UTF-8 `b` decodes to: one per character,
/// two for those past U+FFFF (the 4-byte ones). A batch of source files
/// with one non-ASCII byte somewhere has this asked of every line: the
/// ASCII check first keeps those lines at memory speed.
pub fn utf16_len(b: &[u8]) -> usize {
    if b.is_ascii() {
        return b.len();
    }
    // Two counting passes vectorize where one mapped sum does not.
    let starts = b.iter().filter(|&&x| (x as i8) >= -0x40).count();
    starts + b.iter().filter(|&&x| x >= 0xf0).count()
}

/// Offset of the first byte that is not valid UTF-8 (no overlongs,
/// surrogates or code points past U+10FFFF), or None.
pub fn first_invalid_utf8(b: &[u8]) -> Option<usize> {
    std::str::from_utf8(b).err().map(|e| e.valid_up_to())
}

struct Builder<'a> {
    bytes: &'a [u8],
    ascii: bool,
    piece: usize,
    out: LineIndex,
    /// The open piece's first byte and first line.
    piece_start: usize,
    piece_first: usize,
    /// A byte position in the open piece and the units before it.
    at: usize,
    units: usize,
}

impl Builder<'_> {
    /// Units from the open piece's start to byte `pos` (at or after `at`).
    fn units_to(&mut self, pos: usize) -> u32 {
        self.units += if self.ascii { pos - self.at } else { utf16_len(&self.bytes[self.at..pos]) };
        self.at = pos;
        self.units as u32
    }

    fn line(&mut self, start: usize, end: usize) {
        let s = self.units_to(start);
        let e = self.units_to(end);
        self.out.starts.push(s);
        self.out.ends.push(e);
    }

    /// Closes the open piece at `pos`, a line boundary, once it holds `piece` bytes (or when `last`).
    fn cut(&mut self, pos: usize, last: bool) {
        if pos > self.piece_start && (last || pos - self.piece_start >= self.piece) {
            let ascii = self.ascii || self.bytes[self.piece_start..pos].is_ascii();
            self.out.pieces.push((self.piece_start, pos, self.piece_first, ascii));
            self.piece_start = pos;
            self.piece_first = self.out.starts.len();
            self.at = pos;
            self.units = 0;
        }
    }
}

/// The lines of `bytes` (valid UTF-8, or any bytes when every one is
/// ASCII), which hold files back to back ending at `file_ends`, split at
/// `delim`, in pieces of about `piece` bytes.
pub fn index_lines(bytes: &[u8], file_ends: &[usize], delim: &[u8], piece: usize) -> LineIndex {
    assert!(!delim.is_empty(), "a delimiter has at least one byte");
    let finder = memmem::Finder::new(delim);
    let mut b = Builder { bytes, ascii: bytes.is_ascii(), piece: piece.max(1), out: LineIndex::default(), piece_start: 0, piece_first: 0, at: 0, units: 0 };
    let mut file_start = 0;
    for &file_end in file_ends {
        let before = b.out.starts.len();
        let mut pos = file_start;
        if delim.len() == 1 {
            // memchr's iterator: no searcher set up again for every line.
            for i in memchr::memchr_iter(delim[0], &bytes[file_start..file_end]) {
                b.line(pos, file_start + i);
                pos = file_start + i + 1;
                b.cut(pos, false);
            }
        } else {
            while let Some(i) = finder.find(&bytes[pos..file_end]) {
                b.line(pos, pos + i);
                pos += i + delim.len();
                b.cut(pos, false);
            }
        }
        if pos < file_end {
            b.line(pos, file_end);
            b.cut(file_end, false);
        }
        b.out.file_lines.push((b.out.starts.len() - before) as u32);
        file_start = file_end;
    }
    b.cut(file_start, true);
    b.out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines as JS makes them: each file decoded, split, a final empty one dropped.
    fn js_lines(text: &str, ends: &[usize], delim: &str) -> Vec<Vec<String>> {
        let mut start = 0;
        let mut out = Vec::new();
        for &e in ends {
            let mut lines: Vec<String> = text[start..e].split(delim).map(String::from).collect();
            if lines.last().is_some_and(|l| l.is_empty()) {
                lines.pop();
            }
            out.push(lines);
            start = e;
        }
        out
    }

    fn sliced(text: &str, ix: &LineIndex) -> Vec<Vec<String>> {
        let mut all = Vec::new();
        for (k, &(s, e, first, ascii)) in ix.pieces.iter().enumerate() {
            assert_eq!(ascii, text[s..e].is_ascii());
            let units: Vec<u16> = text[s..e].encode_utf16().collect();
            let last = ix.pieces.get(k + 1).map_or(ix.starts.len(), |p| p.2);
            for l in first..last {
                all.push(String::from_utf16(&units[ix.starts[l] as usize..ix.ends[l] as usize]).unwrap());
            }
        }
        let mut out = Vec::new();
        let mut it = all.into_iter();
        for &n in &ix.file_lines {
            out.push(it.by_ref().take(n as usize).collect());
        }
        out
    }

    #[test]
    fn files_with_and_without_final_delimiters_empty_files_crlf_and_wide_characters() {
        let files = ["a\nbb\n", "", "no newline", "\n\n", "crlf\r\nx\r\n", "é😀z\nü", "\n", "last"];
        let text: String = files.concat();
        let mut ends = Vec::new();
        let mut at = 0;
        for f in files {
            at += f.len();
            ends.push(at);
        }
        for piece in [1, 2, 5, 1 << 20] {
            for delim in ["\n", "\r\n", "bb", "😀"] {
                let ix = index_lines(text.as_bytes(), &ends, delim.as_bytes(), piece);
                assert_eq!(sliced(&text, &ix), js_lines(&text, &ends, delim), "piece {piece} delim {delim:?}");
            }
        }
    }

    #[test]
    fn utf16_lengths_and_invalid_bytes() {
        assert_eq!(utf16_len("aé😀€".as_bytes()), 1 + 1 + 2 + 1);
        assert_eq!(first_invalid_utf8(b"ok\xc3\x28"), Some(2));
        assert_eq!(first_invalid_utf8(b"\xed\xa0\x80"), Some(0));
        assert_eq!(first_invalid_utf8("fine é".as_bytes()), None);
    }
}
