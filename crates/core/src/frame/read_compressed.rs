//! A frame's compressed file (.gz, .zst, .lz4 by its name) read as pieces
//! of whole lines, each parsed on its own: its decompressed content is
//! never in memory whole, only the batches made of it.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::read::{read_err, BOM};
use crate::text::{CompressedLines, FileFormat};
use crate::{Error, Result};

/// Decompressed bytes parsed at a time.
pub(crate) const PIECE: usize = 8 << 20;

fn open(path: &Path, format: FileFormat) -> Result<Box<dyn Read + Send>> {
    let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    format.decoder(BufReader::with_capacity(1 << 16, f)).map_err(|e| read_err(path, format!("not valid {}: {e}", format.name())))
}

/// The first `bytes` of a compressed file's content (a few more past a
/// line's end are read and dropped by the caller); None if not compressed.
pub(crate) fn sample_compressed(path: &Path, bytes: usize) -> Result<Option<Vec<u8>>> {
    let Some(format) = FileFormat::of_path(path) else { return Ok(None) };
    let mut buf = Vec::with_capacity(bytes.min(1 << 24));
    open(path, format)?.take(bytes as u64 + 1).read_to_end(&mut buf).map_err(|e| read_err(path, format!("not valid {} within its first {bytes} bytes: {e}", format.name())))?;
    Ok(Some(buf))
}

/// Calls `each(offset, lines before it, bytes)` for each piece of whole
/// lines of a compressed file, its BOM dropped; false if `path` is not compressed.
pub(crate) fn each_piece(path: &Path, mut each: impl FnMut(u64, u64, &[u8]) -> Result<()>) -> Result<bool> {
    let Some(format) = FileFormat::of_path(path) else { return Ok(false) };
    let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut lines = CompressedLines::new(path, format, BufReader::with_capacity(1 << 16, f), b"\n", 1).map_err(|e| read_err(path, format!("not valid {}: {e}", format.name())))?;
    let mut before = 0u64;
    while let Some(block) = lines.next_block(PIECE)? {
        let bytes = if block.offset == 0 { block.bytes.strip_prefix(BOM).unwrap_or(&block.bytes) } else { &block.bytes };
        let at = block.offset + (block.bytes.len() - bytes.len()) as u64;
        each(at, before, bytes)?;
        before += memchr::memchr_iter(b'\n', bytes).count() as u64;
    }
    Ok(true)
}
