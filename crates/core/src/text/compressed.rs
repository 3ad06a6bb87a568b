//! A user's compressed text file (.gz, .zst, .lz4) read as a stream of
//! blocks of whole lines: a compressed file cannot be cut at an offset, so
//! it is one partition, and its content never has to fit in memory at once
//! (a 2 GB .zst on a 1 GiB worker is counted a few MiB at a time).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::files::{open_planned, FileFault, PlannedFile};
use crate::{Error, Result};

/// A standard compressed file format, as gzip, zstd and lz4 write them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    Gzip,
    Zstd,
    Lz4,
}

impl FileFormat {
    pub fn parse(name: &str) -> Result<FileFormat> {
        match name {
            "gzip" => Ok(FileFormat::Gzip),
            "zstd" => Ok(FileFormat::Zstd),
            "lz4" => Ok(FileFormat::Lz4),
            other => Err(Error::invalid("format", format!("'gzip', 'zstd' or 'lz4', got {other:?}"))),
        }
    }

    /// The format a file's name says (.gz, .zst, .lz4, any case), as the readers decide.
    pub fn of_path(path: &Path) -> Option<FileFormat> {
        let name = path.to_string_lossy().to_ascii_lowercase();
        [(".gz", FileFormat::Gzip), (".zst", FileFormat::Zstd), (".lz4", FileFormat::Lz4)].into_iter().find_map(|(ext, f)| name.ends_with(ext).then_some(f))
    }

    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Gzip => "gzip",
            FileFormat::Zstd => "zstd",
            FileFormat::Lz4 => "lz4",
        }
    }

    /// A decoder of `input` that reads every member (gzip) or frame (zstd,
    /// lz4) written one after another, as the command-line tools do.
    pub fn decoder<R: BufRead + Send + 'static>(self, input: R) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            FileFormat::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(input)),
            FileFormat::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(input)?),
            FileFormat::Lz4 => Box::new(Lz4Frames { decoder: lz4_flex::frame::FrameDecoder::new(input), stuck_at: None }),
        })
    }
}

/// lz4_flex ends its stream at the end of each frame; the frames after it
/// are read as the rest of the same file.
struct Lz4Frames<R: BufRead> {
    decoder: lz4_flex::frame::FrameDecoder<R>,
    /// Input left when a read last gave nothing: no progress since means the end.
    stuck_at: Option<usize>,
}

impl<R: BufRead> Read for Lz4Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let n = self.decoder.read(buf)?;
            if n > 0 {
                self.stuck_at = None;
                return Ok(n);
            }
            let left = self.decoder.get_mut().fill_buf()?.len();
            if left == 0 || self.stuck_at == Some(left) {
                return Ok(0);
            }
            self.stuck_at = Some(left);
        }
    }
}

/// Whole lines of decompressed content and where they start in it.
#[derive(Debug)]
pub struct LineBlock {
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// Decompressed bytes asked of the decoder at most at once.
const READ: usize = 1 << 20;

/// A compressed file's content in blocks that end just past a delimiter
/// (the last one where the content ends), so splitting each block alone
/// gives the lines that splitting the whole would.
pub struct CompressedLines {
    path: PathBuf,
    format: FileFormat,
    reader: Box<dyn Read + Send>,
    delimiter: Vec<u8>,
    /// The encoding's code unit: a delimiter counts only where it starts on one (UTF-16's is 2).
    unit: u64,
    /// Decoded bytes not yet handed out; `at` is where they start in the content.
    pending: Vec<u8>,
    at: u64,
    eof: bool,
}

impl CompressedLines {
    /// The planned file opened (and checked to be the one planned), its decoder started.
    pub fn open(file: &PlannedFile, format: FileFormat, delimiter: &[u8], unit: usize) -> std::result::Result<CompressedLines, FileFault> {
        let f: File = open_planned(file)?;
        CompressedLines::new(&file.path, format, BufReader::with_capacity(1 << 16, f), delimiter, unit).map_err(FileFault::Read)
    }

    /// Lines of `input`, compressed in `format`; `path` names it in errors.
    pub fn new<R: BufRead + Send + 'static>(path: &Path, format: FileFormat, input: R, delimiter: &[u8], unit: usize) -> io::Result<CompressedLines> {
        assert!(!delimiter.is_empty(), "a delimiter of at least one byte");
        Ok(CompressedLines { path: path.to_path_buf(), format, reader: format.decoder(input)?, delimiter: delimiter.to_vec(), unit: unit.max(1) as u64, pending: Vec::new(), at: 0, eof: false })
    }

    /// The next block of about `target` bytes or more (a longer line is
    /// never cut), or None once the content is all handed out.
    pub fn next_block(&mut self, target: usize) -> Result<Option<LineBlock>> {
        let target = target.max(1);
        let mut want = target;
        loop {
            while !self.eof && self.pending.len() < want {
                self.fill(want - self.pending.len())?;
            }
            if self.pending.is_empty() {
                return Ok(None);
            }
            let cut = if self.eof { Some(self.pending.len()) } else { self.last_delimiter_end() };
            match cut {
                Some(cut) => {
                    let rest = self.pending.split_off(cut);
                    let bytes = std::mem::replace(&mut self.pending, rest);
                    let offset = self.at;
                    self.at += cut as u64;
                    return Ok(Some(LineBlock { offset, bytes }));
                }
                // One line longer than the target: read on until it ends.
                None => want = self.pending.len() + target,
            }
        }
    }

    /// Just past the last delimiter in `pending` that starts on a code unit.
    fn last_delimiter_end(&self) -> Option<usize> {
        let (buf, d) = (&self.pending, &self.delimiter);
        if d.len() == 1 && self.unit == 1 {
            return memchr::memrchr(d[0], buf).map(|i| i + 1);
        }
        memchr::memmem::rfind_iter(buf, d).find(|&i| (self.at + i as u64) % self.unit == 0).map(|i| i + d.len())
    }

    /// Decodes up to `n` more bytes (at least one read's worth) onto `pending`.
    fn fill(&mut self, n: usize) -> Result<()> {
        let start = self.pending.len();
        self.pending.resize(start + n.clamp(1 << 16, READ), 0);
        loop {
            match self.reader.read(&mut self.pending[start..]) {
                Ok(k) => {
                    self.pending.truncate(start + k);
                    self.eof = k == 0;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.pending.truncate(start);
                    let after = self.at + start as u64;
                    return Err(Error::FrameRead { path: self.path.clone(), message: format!("not valid {} after byte {after} of its decompressed content: {e}", self.format.name()) });
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "compressed_tests.rs"]
mod tests;
