//! Text files as one utf8 column of lines (`frame.readText`): a block owns
//! the lines that begin in it, as CSV blocks and the bags' text blocks do;
//! lines lose their "\n" or "\r\n". UTF-8 is checked once over the block
//! (an invalid byte is an error naming the file and its offset); Latin-1
//! maps each byte to its code point.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use serde::Deserialize;

use super::read::{block_bytes, read_err, BATCH_ROWS};
use crate::Result;

#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    #[default]
    Utf8,
    Latin1,
}

/// Latin-1 (ISO-8859-1) bytes as UTF-8: each byte is its own code point, so
/// "\n" stays "\n" and any cut at a line end stays a cut at a line end.
pub(crate) fn latin1_to_utf8(bytes: &[u8]) -> Vec<u8> {
    let high = bytes.iter().filter(|&&b| b >= 0x80).count();
    let mut out = Vec::with_capacity(bytes.len() + high);
    for &b in bytes {
        if b < 0x80 {
            out.push(b);
        } else {
            out.extend_from_slice(&[0xC0 | (b >> 6), 0x80 | (b & 0x3F)]);
        }
    }
    out
}

/// Each line of `bytes` (without its delimiter), a last one without "\n" included.
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    let ends = memchr::memchr_iter(b'\n', bytes).chain((bytes.last().is_some_and(|&b| b != b'\n')).then_some(bytes.len()));
    ends.map(move |end| {
        let line = &bytes[at..end];
        at = end + 1;
        line.strip_suffix(b"\r").unwrap_or(line)
    })
}

fn batch(schema: &Arc<Schema>, offsets: Vec<i32>, values: Vec<u8>) -> Result<RecordBatch> {
    // SAFETY: the values are whole lines of bytes checked as UTF-8 (or Latin-1 recoded as UTF-8).
    let array = unsafe { StringArray::new_unchecked(OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)), Buffer::from_vec(values), None) };
    RecordBatch::try_new(Arc::clone(schema), vec![Arc::new(array) as ArrayRef]).map_err(super::frame_err("building lines"))
}

/// Lines into batches of at most BATCH_ROWS rows, fed piece by piece (each piece whole lines).
struct Batches<'a> {
    path: &'a Path,
    schema: Arc<Schema>,
    encoding: Encoding,
    offsets: Vec<i32>,
    values: Vec<u8>,
    out: Vec<RecordBatch>,
}

impl<'a> Batches<'a> {
    fn new(path: &'a Path, column: &str, encoding: Encoding) -> Self {
        let schema = Arc::new(Schema::new(vec![Field::new(column, DataType::Utf8, true)]));
        Batches { path, schema, encoding, offsets: vec![0], values: Vec::new(), out: Vec::new() }
    }

    /// `bytes` (whole lines) that begin at byte `at` of the file (of its decompressed content, `what`).
    fn push(&mut self, bytes: &[u8], at: u64, what: &str) -> Result<()> {
        if self.encoding == Encoding::Utf8 {
            if let Err(e) = std::str::from_utf8(bytes) {
                let offset = at + e.valid_up_to() as u64;
                return Err(read_err(self.path, format!("byte {offset}{what} is not valid UTF-8: read the file with {{ encoding: 'latin1' }} if it is Latin-1")));
            }
        }
        for line in lines(bytes) {
            match self.encoding {
                Encoding::Utf8 => self.values.extend_from_slice(line),
                Encoding::Latin1 => self.values.extend_from_slice(&latin1_to_utf8(line)),
            }
            // A batch stays under i32 offsets and BATCH_ROWS rows.
            self.offsets.push(i32::try_from(self.values.len()).map_err(|_| read_err(self.path, format!("a line past 2 GiB near byte {at}")))?);
            if self.offsets.len() > BATCH_ROWS || self.values.len() > (1 << 30) {
                let b = batch(&self.schema, std::mem::replace(&mut self.offsets, vec![0]), std::mem::take(&mut self.values))?;
                self.out.push(b);
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Vec<RecordBatch>> {
        if self.offsets.len() > 1 {
            let b = batch(&self.schema, self.offsets, self.values)?;
            self.out.push(b);
        }
        Ok(self.out)
    }
}

/// A compressed file streamed: a piece of whole lines at a time, never the whole content.
fn read_compressed(path: &Path, into: &mut Batches) -> Result<bool> {
    super::read_compressed::each_piece(path, |at, _, bytes| into.push(bytes, at, " of its decompressed content"))
}

/// The lines that begin in [start, end) of `path` (all of a compressed file), as batches of one utf8 column.
pub fn read_text_block(path: &Path, start: u64, end: Option<u64>, column: &str, encoding: Encoding) -> Result<Vec<RecordBatch>> {
    let mut out = Batches::new(path, column, encoding);
    if !read_compressed(path, &mut out)? {
        let (at, bytes) = block_bytes(path, start, end)?;
        out.push(&bytes, at, "")?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use std::fs::File;
    use std::io::Write;

    fn read(bytes: &[u8], start: u64, end: Option<u64>, enc: Encoding) -> Result<Vec<String>> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.txt");
        std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
        let b = read_text_block(&p, start, end, "line", enc)?;
        Ok(b.iter().flat_map(|b| b.column(0).as_string::<i32>().iter().map(|s| s.unwrap().to_string()).collect::<Vec<_>>()).collect())
    }

    #[test]
    fn lines_lose_their_ends_and_blocks_own_the_lines_that_begin_in_them() {
        let text = b"\xEF\xBB\xBFone\r\ntwo\n\nthr\xC3\xA9e";
        assert_eq!(read(text, 0, None, Encoding::Utf8).unwrap(), vec!["one", "two", "", "thr\u{e9}e"]);
        assert_eq!(read(text, 0, Some(4), Encoding::Utf8).unwrap(), vec!["one"]);
        assert_eq!(read(text, 4, Some(13), Encoding::Utf8).unwrap(), vec!["two", ""]);
        assert_eq!(read(b"caf\xE9\n", 0, None, Encoding::Latin1).unwrap(), vec!["caf\u{e9}"]);
        let e = read(b"ok\ncaf\xE9\n", 0, None, Encoding::Utf8).unwrap_err();
        assert_eq!(e.code(), "ERR_SPILLWAY_READ");
        assert!(e.to_string().contains("byte 6 is not valid UTF-8"), "{e}");
    }

    #[test]
    fn compressed_files_stream_their_lines() {
        let text: String = (0..300_000).map(|i| format!("line {i} caf\u{e9}\n")).collect();
        let d = tempfile::tempdir().unwrap();
        let gz = d.path().join("t.txt.gz");
        let mut w = flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        w.write_all(text.as_bytes()).unwrap();
        w.finish().unwrap();
        let zst = d.path().join("t.txt.zst");
        std::fs::write(&zst, zstd::encode_all(text.as_bytes(), 1).unwrap()).unwrap();
        for p in [gz, zst] {
            let b = read_text_block(&p, 0, None, "line", Encoding::Utf8).unwrap();
            let lines: Vec<&str> = b.iter().flat_map(|b| b.column(0).as_string::<i32>().iter().map(Option::unwrap)).collect();
            assert_eq!(lines.len(), 300_000);
            assert_eq!((lines[0], lines[299_999]), ("line 0 caf\u{e9}", "line 299999 caf\u{e9}"));
        }
    }
}
