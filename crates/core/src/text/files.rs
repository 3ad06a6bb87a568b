//! Many small files read in one call: each opened without blocking (a FIFO
//! put where a file was must not hold the thread until a writer comes),
//! fstat'ed, checked against what the plan saw, and read into one buffer.
//! The caller (a worker reading a packed bag partition) then makes one
//! round trip for thousands of files instead of four per file.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::PathBuf;

/// A file as the plan saw it. Times are whole milliseconds (the floor of
/// Node's `mtimeMs`), `ino` as Node gives it (a number), `None` where the
/// plan has no figure.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    pub path: PathBuf,
    pub size: u64,
    pub mtime_ms: f64,
    pub ctime_ms: Option<f64>,
    pub ino: Option<f64>,
}

/// What fstat found, in Node's units, for the caller to name what changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FoundStat {
    pub size: u64,
    pub mtime_ms: f64,
    pub ctime_ms: f64,
    pub ino: f64,
}

/// Why a planned file could not be read.
#[derive(Debug)]
pub enum FileFault {
    /// open(2) failed (gone, no permission, ...).
    Open(io::Error),
    /// fstat or read failed on the open file.
    Read(io::Error),
    /// No longer a regular file: "a FIFO", "a directory", ...
    NotRegular(&'static str),
    /// A regular file, but not the one planned (its figures are given).
    Changed(FoundStat),
}

/// The files' bytes back to back; `ends[i]` is where file i's bytes end.
#[derive(Debug, Default)]
pub struct FileBatch {
    pub bytes: Vec<u8>,
    pub ends: Vec<usize>,
}

/// Node's `msFromTimeSpec`, so a floor taken here equals one taken in JS.
fn ms(sec: i64, nsec: i64) -> f64 {
    sec as f64 * 1e3 + nsec as f64 / 1e6
}

#[cfg(unix)]
fn open_nonblocking(path: &PathBuf) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new().read(true).custom_flags(libc_o_nonblock()).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &PathBuf) -> io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

/// O_NONBLOCK without a libc dependency: its value on the platforms Node ships for.
#[cfg(unix)]
fn libc_o_nonblock() -> i32 {
    if cfg!(any(target_os = "macos", target_os = "ios", target_os = "freebsd", target_os = "openbsd", target_os = "netbsd")) {
        0x0004
    } else if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
        0x0080
    } else {
        0o4000
    }
}

#[cfg(unix)]
pub(crate) fn found(md: &std::fs::Metadata) -> FoundStat {
    use std::os::unix::fs::MetadataExt;
    FoundStat { size: md.size(), mtime_ms: ms(md.mtime(), md.mtime_nsec()), ctime_ms: ms(md.ctime(), md.ctime_nsec()), ino: md.ino() as f64 }
}

#[cfg(not(unix))]
pub(crate) fn found(md: &std::fs::Metadata) -> FoundStat {
    let t = |r: io::Result<std::time::SystemTime>| r.ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0.0, |d| d.as_secs_f64() * 1e3);
    FoundStat { size: md.len(), mtime_ms: t(md.modified()), ctime_ms: t(md.modified()), ino: 0.0 }
}

#[cfg(unix)]
fn kind_of(md: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = md.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn kind_of(md: &std::fs::Metadata) -> &'static str {
    if md.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Whether the open file is still the planned one: the same checks as the
/// worker's `openPlanned` (size, whole-ms mtime, inode, else ctime, which
/// cannot be set back and so tells a rewrite whose size and mtime were restored).
pub fn same_as_planned(f: &PlannedFile, st: &FoundStat) -> bool {
    if st.size != f.size || st.mtime_ms.floor() != f.mtime_ms.floor() {
        return false;
    }
    match (f.ino, f.ctime_ms) {
        (Some(ino), _) if st.ino != ino => false,
        (_, Some(ctime)) => st.ctime_ms.floor() == ctime.floor(),
        _ => true,
    }
}

/// Opens a planned file and checks it is still the one planned.
pub fn open_planned(f: &PlannedFile) -> Result<File, FileFault> {
    let file = open_nonblocking(&f.path).map_err(FileFault::Open)?;
    let md = file.metadata().map_err(FileFault::Read)?;
    if !md.is_file() {
        return Err(FileFault::NotRegular(kind_of(&md)));
    }
    let st = found(&md);
    if !same_as_planned(f, &st) {
        return Err(FileFault::Changed(st));
    }
    Ok(file)
}

/// Opens, checks and reads one planned file, appending its bytes to `out`.
fn read_one(f: &PlannedFile, out: &mut Vec<u8>) -> Result<(), FileFault> {
    let file = open_planned(f)?;
    // At most the planned size: bytes appended since the check are not ours.
    // Take at its limit answers 0 without a system call, so a file costs
    // open, fstat, one read (while it fills) and close.
    file.take(f.size).read_to_end(out).map_err(FileFault::Read)?;
    Ok(())
}

/// Reads every planned file whole, in order, into one buffer; the first
/// that cannot be read stops it, with its index and why.
pub fn read_planned(files: &[PlannedFile]) -> Result<FileBatch, (usize, FileFault)> {
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut batch = FileBatch { bytes: Vec::with_capacity(usize::try_from(total).unwrap_or(0)), ends: Vec::with_capacity(files.len()) };
    for (i, f) in files.iter().enumerate() {
        read_one(f, &mut batch.bytes).map_err(|e| (i, e))?;
        batch.ends.push(batch.bytes.len());
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn plan(path: PathBuf) -> PlannedFile {
        let md = std::fs::metadata(&path).unwrap();
        let st = found(&md);
        PlannedFile { path, size: st.size, mtime_ms: st.mtime_ms.floor(), ctime_ms: Some(st.ctime_ms.floor()), ino: Some(st.ino) }
    }

    #[test]
    fn reads_files_back_to_back_and_names_the_first_that_is_gone_or_changed() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["a", "empty", "c"];
        let bodies: [&[u8]; 3] = [b"one\ntwo\n", b"", b"three"];
        for (n, b) in names.iter().zip(bodies) {
            std::fs::write(dir.path().join(n), b).unwrap();
        }
        let plans: Vec<_> = names.iter().map(|n| plan(dir.path().join(n))).collect();
        let batch = read_planned(&plans).unwrap();
        assert_eq!(batch.bytes, b"one\ntwo\nthree");
        assert_eq!(batch.ends, vec![8, 8, 13]);

        std::fs::OpenOptions::new().append(true).open(dir.path().join("c")).unwrap().write_all(b"!").unwrap();
        match read_planned(&plans) {
            Err((2, FileFault::Changed(st))) => assert_eq!(st.size, 6),
            other => panic!("expected file 2 changed, got {other:?}"),
        }
        std::fs::remove_file(dir.path().join("empty")).unwrap();
        assert!(matches!(read_planned(&plans), Err((1, FileFault::Open(e))) if e.kind() == io::ErrorKind::NotFound));
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        assert!(matches!(read_planned(&plans), Err((1, FileFault::NotRegular("a directory")))));
    }
}
