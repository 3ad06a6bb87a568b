//! One file per chunk in a directory only its owner can read. File names
//! are a hash of the key, so no key can name a path outside the directory.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_128;

use crate::codec::{Encoded, FrameHeader, HEADER_LEN};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct DiskStore {
    dir: PathBuf,
}

#[cfg(unix)]
fn restrict(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn restrict(_: &Path, _: u32) -> std::io::Result<()> {
    Ok(())
}

impl DiskStore {
    /// Opens (creating if needed) `dir` and makes it 0700.
    pub fn open(dir: impl Into<PathBuf>) -> Result<DiskStore> {
        let dir = dir.into();
        fs::create_dir_all(&dir).map_err(|e| Error::io("create spill directory", &dir, e))?;
        restrict(&dir, 0o700).map_err(|e| Error::io("chmod spill directory", &dir, e))?;
        Ok(DiskStore { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Each version of a key gets its own file, so a slow writer of an old
    /// version can never overwrite the file of a newer one.
    pub fn path_of(&self, key: &str, version: u64) -> PathBuf {
        self.dir.join(format!("{:032x}-{version:x}.spill", xxh3_128(key.as_bytes())))
    }

    /// Writes a frame completely, then renames it into place: a reader never
    /// sees half a file, and a failed write leaves nothing behind.
    pub fn write(&self, key: &str, version: u64, frame: &Encoded<'_>) -> Result<u64> {
        let path = self.path_of(key, version);
        let tmp = path.with_extension("tmp");
        let result = (|| {
            let mut opts = OpenOptions::new();
            opts.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let mut f = opts.open(&tmp)?;
            frame.write_to(&mut f)?;
            f.flush()?;
            drop(f);
            fs::rename(&tmp, &path)
        })();
        match result {
            Ok(()) => Ok(frame.len() as u64),
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                Err(Error::io("write spill file", &path, e))
            }
        }
    }

    /// Reads, verifies and decodes the chunk stored under `key`.
    pub fn read(&self, key: &str, version: u64) -> Result<Vec<u8>> {
        let path = self.path_of(key, version);
        let mut f = File::open(&path).map_err(|e| Error::io("open spill file", &path, e))?;
        let mut head = [0u8; HEADER_LEN];
        f.read_exact(&mut head).map_err(|e| Error::io("read spill file", &path, e))?;
        let header = FrameHeader::parse(&head)?;
        let file_len = f.metadata().map_err(|e| Error::io("stat spill file", &path, e))?.len();
        if file_len != HEADER_LEN as u64 + header.payload_len {
            return Err(Error::corrupt(format!(
                "{} is {file_len} bytes, its header declares {}",
                path.display(),
                HEADER_LEN as u64 + header.payload_len
            )));
        }
        // read_exact fills every byte, so a pooled buffer's stale contents never show.
        let mut payload = crate::pool::take(header.payload_len as usize, crate::pool::fresh);
        f.read_exact(&mut payload).map_err(|e| Error::io("read spill file", &path, e))?;
        header.decode_payload(payload)
    }

    pub fn remove(&self, key: &str, version: u64) {
        let _ = fs::remove_file(self.path_of(key, version));
    }

    /// Removes every spill file, and the directory when nothing else is in it.
    pub fn clear(&self) {
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let p = e.path();
                if matches!(p.extension().and_then(|x| x.to_str()), Some("spill" | "tmp")) {
                    let _ = fs::remove_file(p);
                }
            }
        }
        let _ = fs::remove_dir(&self.dir);
    }
}
