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

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    Utf8,
    Latin1,
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
    // SAFETY: the values are whole lines of a block checked as UTF-8 (or Latin-1 recoded as UTF-8).
    let array = unsafe { StringArray::new_unchecked(OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)), Buffer::from_vec(values), None) };
    RecordBatch::try_new(Arc::clone(schema), vec![Arc::new(array) as ArrayRef]).map_err(super::frame_err("building lines"))
}

/// The lines that begin in [start, end) of `path`, as batches of one utf8 column.
pub fn read_text_block(path: &Path, start: u64, end: Option<u64>, column: &str, encoding: Encoding) -> Result<Vec<RecordBatch>> {
    let (at, bytes) = block_bytes(path, start, end)?;
    if encoding == Encoding::Utf8 {
        if let Err(e) = std::str::from_utf8(&bytes) {
            let offset = at + e.valid_up_to() as u64;
            return Err(read_err(path, format!("byte {offset} is not valid UTF-8: read the file with {{ encoding: 'latin1' }} if it is Latin-1")));
        }
    }
    let schema = Arc::new(Schema::new(vec![Field::new(column, DataType::Utf8, true)]));
    let mut out = Vec::new();
    let (mut offsets, mut values) = (vec![0i32], Vec::new());
    for line in lines(&bytes) {
        match encoding {
            Encoding::Utf8 => values.extend_from_slice(line),
            Encoding::Latin1 => line.iter().for_each(|&b| values.extend_from_slice(char::from(b).encode_utf8(&mut [0; 2]).as_bytes())),
        }
        // A batch stays under i32 offsets and BATCH_ROWS rows.
        offsets.push(i32::try_from(values.len()).map_err(|_| read_err(path, format!("a block of lines past 2 GiB from byte {at}: use a smaller blocksize")))?);
        if offsets.len() > BATCH_ROWS || values.len() > (1 << 30) {
            out.push(batch(&schema, std::mem::replace(&mut offsets, vec![0]), std::mem::take(&mut values))?);
        }
    }
    if offsets.len() > 1 {
        out.push(batch(&schema, offsets, values)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
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
}
