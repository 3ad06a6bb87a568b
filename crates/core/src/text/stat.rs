//! The files a bag plans over, stat'ed in one call: tens of thousands of
//! small files cost a stat(2) each and no JS object, and a file named twice
//! (a hard link, a symlink, a loop under '**') is found by (device, inode).

use std::collections::HashMap;
use std::path::PathBuf;

use super::files::FoundStat;

/// One path as stat(2) (following symlinks) found it.
#[derive(Debug, Clone, PartialEq)]
pub enum PathStat {
    /// Could not be stat'ed: the caller asks again to say why.
    Failed,
    /// Not a regular file (a directory, a FIFO, ...).
    NotAFile,
    /// A regular file; `first` is the earlier path naming the same file, if any.
    File { stat: FoundStat, first: Option<usize> },
}

#[cfg(unix)]
fn identity(md: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((md.dev(), md.ino()))
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

enum Found {
    Failed,
    NotAFile,
    File(FoundStat, Option<(u64, u64)>),
}

fn stat_one(p: &PathBuf) -> Found {
    match std::fs::metadata(p) {
        Err(_) => Found::Failed,
        Ok(md) if !md.is_file() => Found::NotAFile,
        Ok(md) => Found::File(super::files::found(&md), identity(&md)),
    }
}

/// Paths per thread below which one thread stats them all.
const PER_THREAD: usize = 4096;

/// Each path stat'ed, in order. Stat's cost is the kernel's path walk, so
/// a long list is split over a few threads.
pub fn stat_paths(paths: &[PathBuf]) -> Vec<PathStat> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4).min(paths.len().div_ceil(PER_THREAD)).max(1);
    let found: Vec<Found> = if threads == 1 {
        paths.iter().map(stat_one).collect()
    } else {
        let per = paths.len().div_ceil(threads);
        std::thread::scope(|s| {
            let parts: Vec<_> = paths.chunks(per).map(|c| s.spawn(move || c.iter().map(stat_one).collect::<Vec<_>>())).collect();
            parts.into_iter().flat_map(|h| h.join().expect("stat(2) does not panic")).collect()
        })
    };
    let mut seen: HashMap<(u64, u64), usize> = HashMap::with_capacity(paths.len());
    found
        .into_iter()
        .enumerate()
        .map(|(i, f)| match f {
            Found::Failed => PathStat::Failed,
            Found::NotAFile => PathStat::NotAFile,
            Found::File(stat, id) => {
                let first = id.and_then(|id| match seen.get(&id) {
                    Some(&j) => Some(j),
                    None => {
                        seen.insert(id, i);
                        None
                    }
                });
                PathStat::File { stat, first }
            }
        })
        .collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn files_links_directories_and_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, b"12345").unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("link")).unwrap();
        let paths = [a.clone(), dir.path().join("link"), dir.path().to_path_buf(), dir.path().join("missing")];
        let got = stat_paths(&paths);
        assert!(matches!(&got[0], PathStat::File { stat, first: None } if stat.size == 5));
        assert!(matches!(&got[1], PathStat::File { first: Some(0), .. }));
        assert_eq!(got[2], PathStat::NotAFile);
        assert_eq!(got[3], PathStat::Failed);
        // Long enough to be split over threads: the same answers, in order.
        let many: Vec<PathBuf> = (0..3 * PER_THREAD).map(|i| paths[i % 4].clone()).collect();
        let split = stat_paths(&many);
        for (i, s) in split.iter().enumerate() {
            match (i % 4, s) {
                (0, PathStat::File { first, .. }) => assert_eq!(*first, if i == 0 { None } else { Some(0) }),
                (1, PathStat::File { first, .. }) => assert_eq!(*first, Some(0)),
                (k, s) => assert_eq!(s, &got[k]),
            }
        }
    }
}
