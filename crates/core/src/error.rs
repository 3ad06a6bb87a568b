//! One error type for the whole core. Each variant has a stable code that the
//! binding forwards to JS, so callers can branch on the kind without parsing
//! messages.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum Error {
    /// A codec name that is not compiled in.
    UnknownCodec { name: String, valid: Vec<&'static str> },
    /// A compression level outside the codec's range.
    InvalidLevel { codec: &'static str, level: i32, min: i32, max: i32 },
    /// A frame that is truncated, corrupted or not ours.
    CorruptFrame { reason: String },
    /// A shuffle shard that is truncated, corrupted or not ours.
    CorruptShard { reason: String },
    /// A codec library failed on data that passed the frame checks.
    Codec { codec: &'static str, message: String },
    /// A bad argument from the caller, named by field.
    InvalidArgument { field: &'static str, message: String },
    /// Reading or writing a spill file failed.
    Io { op: &'static str, path: PathBuf, source: std::io::Error },
    /// A compressed input whose content passed the caller's bound while it
    /// was being decoded (a decompression bomb): decoding stopped there.
    OutputTooLarge { codec: &'static str, limit: usize },
    /// The buffer was closed.
    Closed,
    /// A frame's file that could not be read as asked: a value that does not
    /// fit its column's type, a bad row; names the file and where in it.
    FrameRead { path: PathBuf, message: String },
    /// A frame's partition that could not be written to its file.
    FrameWrite { path: PathBuf, message: String },
    /// A frame kernel that failed on its input (a plan that does not fit the
    /// batches, corrupt IPC bytes).
    Frame { message: String },
}

impl Error {
    pub fn code(&self) -> &'static str {
        match self {
            Error::UnknownCodec { .. } => "ERR_SPILLWAY_UNKNOWN_CODEC",
            Error::InvalidLevel { .. } => "ERR_SPILLWAY_INVALID_LEVEL",
            Error::CorruptFrame { .. } => "ERR_SPILLWAY_CORRUPT_FRAME",
            Error::CorruptShard { .. } => "ERR_SPILLWAY_CORRUPT_VALUE",
            Error::Codec { .. } => "ERR_SPILLWAY_CODEC",
            Error::InvalidArgument { .. } => "ERR_SPILLWAY_INVALID_ARGUMENT",
            Error::Io { .. } => "ERR_SPILLWAY_IO",
            Error::OutputTooLarge { .. } => "ERR_SPILLWAY_TOO_LARGE",
            Error::Closed => "ERR_SPILLWAY_CLOSED",
            Error::FrameRead { .. } => "ERR_SPILLWAY_READ",
            Error::FrameWrite { .. } => "ERR_SPILLWAY_WRITE",
            Error::Frame { .. } => "ERR_SPILLWAY_FRAME",
        }
    }

    pub(crate) fn corrupt(reason: impl Into<String>) -> Self {
        Error::CorruptFrame { reason: reason.into() }
    }

    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidArgument { field, message: message.into() }
    }

    /// A write that failed for want of space (a full disk or quota): only
    /// freeing space lets it through.
    pub fn is_no_space(&self) -> bool {
        use std::io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
        matches!(self, Error::Io { source, .. } if matches!(source.kind(), StorageFull | QuotaExceeded | FileTooLarge))
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { op, path: path.into(), source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownCodec { name, valid } => write!(
                f,
                "unknown codec {name:?}: valid codecs are {}",
                valid.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ")
            ),
            Error::InvalidLevel { codec, level, min, max } => {
                write!(f, "invalid level {level} for codec '{codec}': allowed {min}..={max}")
            }
            Error::CorruptFrame { reason } => write!(f, "corrupt spill frame: {reason}"),
            Error::CorruptShard { reason } => write!(f, "corrupt shuffle shard: {reason}"),
            Error::Codec { codec, message } => write!(f, "codec '{codec}' failed: {message}"),
            Error::InvalidArgument { field, message } => write!(f, "invalid {field}: {message}"),
            Error::Io { op, path, source } => write!(f, "{op} {} failed: {source}", path.display()),
            Error::OutputTooLarge { codec, limit } => {
                write!(f, "{codec} content passes {limit} bytes: decoding stopped there, before inflating the rest")
            }
            Error::Closed => write!(f, "the SpillBuffer is closed"),
            Error::FrameRead { path, message } => write!(f, "reading {}: {message}", path.display()),
            Error::FrameWrite { path, message } => write!(f, "could not write {}: {message}", path.display()),
            Error::Frame { message } => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn no_space_means_a_full_disk_or_quota_only() {
        let io = |errno| Error::io("write spill file", "/x", std::io::Error::from_raw_os_error(errno));
        // ENOSPC, EDQUOT, EFBIG on Linux.
        for errno in [28, 122, 27] {
            assert!(io(errno).is_no_space(), "errno {errno}");
        }
        for errno in [2, 5, 13, 20] {
            assert!(!io(errno).is_no_space(), "errno {errno}");
        }
        assert!(!Error::Closed.is_no_space());
    }
}
