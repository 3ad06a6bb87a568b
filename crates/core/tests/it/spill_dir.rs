//! The spill directory belongs to one SpillBuffer of this user: no symlink
//! is followed, a second store is refused, and closing removes only the
//! store's own files.


use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::it::common::random_bytes;
use crate::it::common::spill::{buffer, config, files};
use spillway_core::codec::Codec;
use spillway_core::spill::SpillBuffer;
use spillway_core::Error;

fn invalid_dir(r: Result<SpillBuffer, Error>) -> String {
    match r {
        Err(Error::InvalidArgument { field: "dir", message }) => message,
        Err(e) => panic!("expected an invalid dir, got {e}"),
        Ok(_) => panic!("expected an invalid dir, got a buffer"),
    }
}

#[test]
fn a_second_store_in_the_same_directory_is_refused_until_the_first_is_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spill");
    let first = buffer(&dir, 1_000, 0.5);
    first.set("k", random_bytes(1, 5_000)).unwrap(); // on disk, named as the second store would name it
    let msg = invalid_dir(SpillBuffer::new(config(&dir, 1_000, 0.5, Codec::Lz4)));
    assert!(msg.contains("in use by another SpillBuffer"), "{msg}");
    assert_eq!(first.get("k").unwrap().unwrap().as_slice(), random_bytes(1, 5_000).as_slice(), "the first store's chunk is untouched");
    drop(first);
    let second = buffer(&dir, 1_000, 0.5);
    second.close();
}

#[test]
fn close_leaves_files_that_are_not_the_stores_own() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("spill");
    fs::create_dir(&dir).unwrap();
    let mine = ["notes.spill", "results.tmp", "0123-1.spill", "zz0123456789abcdef0123456789abcd-1.spill"];
    for name in mine {
        fs::write(dir.join(name), b"user data").unwrap();
    }
    let buf = buffer(&dir, 1_000, 0.5);
    for i in 0..4 {
        buf.set(&format!("k{i}"), random_bytes(i, 3_000)).unwrap();
    }
    assert_eq!(files(&dir).len(), mine.len() + 4);
    buf.close();
    let left: Vec<String> = files(&dir).into_iter().map(|f| f.0).collect();
    let mut want: Vec<String> = mine.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(left, want, "only the store's own spill files are removed");
}

#[test]
fn a_symlink_in_place_of_the_directory_is_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o755)).unwrap();
    let link = tmp.path().join("spill");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let msg = invalid_dir(SpillBuffer::new(config(&link, 1_000, 0.5, Codec::Lz4)));
    assert!(msg.contains("not a directory"), "{msg}");
    assert_eq!(fs::metadata(&elsewhere).unwrap().permissions().mode() & 0o777, 0o755, "the target was not chmod-ed");
    let file = tmp.path().join("file");
    fs::write(&file, b"x").unwrap();
    invalid_dir(SpillBuffer::new(config(&file, 1_000, 0.5, Codec::Lz4)));
}

#[test]
fn every_directory_it_creates_is_private() {
    let tmp = tempfile::tempdir().unwrap();
    let nested = tmp.path().join("a/b/c");
    let _b = buffer(&nested, 1_000, 0.5);
    for d in ["a", "a/b", "a/b/c"] {
        assert_eq!(fs::metadata(tmp.path().join(d)).unwrap().permissions().mode() & 0o777, 0o700, "{d}");
    }
}
