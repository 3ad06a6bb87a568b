//! Text files for bags: many small files read in one call, and the lines of
//! their bytes found here rather than in JS.

pub mod compressed;
pub mod files;
pub mod lines;
pub mod stat;

pub use compressed::{CompressedLines, FileFormat, LineBlock};
pub use files::{open_planned, read_planned, FileBatch, FileFault, FoundStat, PlannedFile};
pub use lines::{first_invalid_utf8, index_lines, LineIndex};
pub use stat::{stat_paths, PathStat};
