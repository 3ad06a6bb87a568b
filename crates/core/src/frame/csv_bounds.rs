//! Where CSV records end, as csv-core (arrow-csv's parser) sees them: a
//! quoted value may hold line breaks, so a '\n' ends a record only outside
//! quotes. Used three ways: the schema sample is cut at its last record end
//! (not its last '\n', which may lie inside a value); a file whose sample
//! shows a value spanning lines gets block boundaries at true record starts
//! from one scan of the whole file (a block owning "the lines that begin in
//! it" would otherwise cut such a record in two, and the halves may even
//! parse into wrong rows without an error); and a block planned the cheap
//! way that ends inside a quote fails instead of reading wrong rows.
//!
//! csv-core's rules, not a count of quote bytes: a quote opens a value only
//! at a field's start (`5'10"` is plain text), `""` inside one is a quote,
//! and text after a closing quote is plain again until the delimiter.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::read::{read_err, CsvOptions};
use crate::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    FieldStart,
    Unquoted,
    Quoted,
    /// A quote seen inside a quoted value: it closes the value, or a second one makes `""`.
    QuoteInQuoted,
}

/// A scan of CSV bytes in pieces, state carried from one piece to the next.
pub(crate) struct Cutter {
    quote: u8,
    delimiter: u8,
    state: State,
    /// Bytes scanned before the current piece.
    offset: u64,
    /// Whether a '\n' was seen inside a quoted value.
    pub quoted_newline: bool,
}

impl Cutter {
    pub fn new(quote: u8, delimiter: u8) -> Self {
        Cutter { quote, delimiter, state: State::FieldStart, offset: 0, quoted_newline: false }
    }

    pub fn of(opts: &CsvOptions) -> Self {
        let byte = |s: &str, d: u8| s.as_bytes().first().copied().unwrap_or(d);
        Cutter::new(byte(&opts.quote, b'"'), byte(&opts.delimiter, b','))
    }

    /// Whether the bytes so far end inside a quoted value.
    pub fn in_quote(&self) -> bool {
        self.state == State::Quoted
    }

    /// Scans `bytes`, calling `each(file offset just past the '\n')` for every record end;
    /// stops early when `each` returns false.
    pub fn scan(&mut self, bytes: &[u8], mut each: impl FnMut(u64) -> bool) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Quoted {
                // Long quoted text is skipped at memchr's speed.
                let rest = &bytes[i..];
                let j = memchr::memchr(self.quote, rest).unwrap_or(rest.len());
                self.quoted_newline |= memchr::memchr(b'\n', &rest[..j]).is_some();
                if j == rest.len() {
                    break;
                }
                i += j + 1;
                self.state = State::QuoteInQuoted;
                continue;
            }
            let c = bytes[i];
            i += 1;
            self.state = if c == b'\n' {
                if !each(self.offset + i as u64) {
                    self.offset += i as u64;
                    self.state = State::FieldStart;
                    return;
                }
                State::FieldStart
            } else if c == b'\r' || c == self.delimiter {
                State::FieldStart
            } else if c == self.quote && self.state != State::Unquoted {
                State::Quoted
            } else {
                State::Unquoted
            };
        }
        self.offset += bytes.len() as u64;
    }
}

/// The end of the last whole record in `buf` (0 when none ends there), and whether a value there spans lines.
pub(crate) fn last_record_end(buf: &[u8], opts: &CsvOptions) -> (usize, bool) {
    let mut c = Cutter::of(opts);
    let mut last = 0;
    c.scan(buf, |at| {
        last = at as usize;
        true
    });
    (last, c.quoted_newline)
}

/// The first record start at or after each of `nominal` (ascending, each
/// in (0, size)), deduplicated, from one scan of the file: the starts of
/// its blocks after the first. A start past a record that holds the file's
/// end is dropped.
pub(crate) fn record_starts(path: &Path, opts: &CsvOptions, nominal: &[u64]) -> Result<Vec<u64>> {
    let mut f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut c = Cutter::of(opts);
    let mut buf = vec![0u8; 1 << 20];
    let mut out: Vec<u64> = Vec::new();
    let mut next = 0;
    while next < nominal.len() {
        let n = f.read(&mut buf).map_err(|e| Error::io("read", path, e))?;
        if n == 0 {
            break;
        }
        c.scan(&buf[..n], |at| {
            if at >= nominal[next] {
                out.push(at);
                while next < nominal.len() && nominal[next] <= at {
                    next += 1;
                }
            }
            next < nominal.len()
        });
    }
    let size = f.metadata().map_err(|e| Error::io("stat", path, e))?.len();
    out.retain(|&s| s < size);
    Ok(out)
}

/// The starts of a CSV file's blocks of about `blocksize` bytes at true
/// record starts (0 first), or none when the block reader's cheap cut at
/// line ends will do: when the first `sample_bytes` show no quoted value
/// spanning lines and `force` is off. Compressed files are one block each
/// already. Reads the whole file, on the calling thread.
pub fn csv_block_starts(path: &Path, opts: &CsvOptions, blocksize: u64, sample_bytes: usize, force: bool) -> Result<Option<Vec<u64>>> {
    let size = std::fs::metadata(path).map_err(|e| Error::io("stat", path, e))?.len();
    if size <= blocksize || crate::text::FileFormat::of_path(path).is_some() {
        return Ok(None);
    }
    if !force && !last_record_end(&super::read::sample(path, sample_bytes)?, opts).1 {
        return Ok(None);
    }
    let nominal: Vec<u64> = (1..).map(|k| k * blocksize).take_while(|&s| s < size).collect();
    let mut starts = vec![0];
    starts.extend(record_starts(path, opts, &nominal)?);
    Ok(Some(starts))
}

/// A cheaply planned block (cut at the '\n' after its end) that ends inside
/// a quoted value: the file holds a value with a line break that the schema
/// sample did not show. `at` is the block's first byte in the file.
pub(crate) fn check_block_end(path: &Path, at: u64, bytes: &[u8], opts: &CsvOptions) -> Result<()> {
    let mut c = Cutter::of(opts);
    if memchr::memchr(c.quote, bytes).is_none() {
        return Ok(());
    }
    let mut record = 0;
    c.scan(bytes, |end| {
        record = end;
        true
    });
    if !c.in_quote() {
        return Ok(());
    }
    // The block at 0 lost the file's BOM: the bytes' offsets in the file are past it.
    let at = if at == 0 && starts_with_bom(path) { super::read::BOM.len() as u64 } else { at };
    let size = std::fs::metadata(path).map_err(|e| Error::io("stat", path, e))?.len();
    // At the file's end an open quote is a malformed last record, which the parser reports.
    if at + bytes.len() as u64 >= size {
        return Ok(());
    }
    let line = line_of(path, at + record).map_or_else(|| format!("the record at byte {}", at + record), |l| format!("line {l}"));
    Err(read_err(
        path,
        format!(
            "{line} opens a quoted value that holds a line break and runs past byte {}, where a block ends: the schema sample (sampleBytes) showed no such value, so the file was cut into blocks at line ends; pass quotedNewlines: true to frame.readCsv (blocks then start at true record starts, found by one scan of the file) or a sampleBytes that reaches such a value",
            at + bytes.len() as u64
        ),
    ))
}

fn starts_with_bom(path: &Path) -> bool {
    let mut head = [0u8; 3];
    File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head == super::read::BOM
}

/// The 1-based line of byte `at` (the error path only: the bytes before it are read again).
fn line_of(path: &Path, at: u64) -> Option<u64> {
    let mut f = File::open(path).ok()?.take(at);
    let mut buf = vec![0u8; 1 << 20];
    let mut lines = 1;
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            return Some(lines);
        }
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
    }
}

#[cfg(test)]
#[path = "csv_bounds_tests.rs"]
mod tests;
