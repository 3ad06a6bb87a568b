//! One file per chunk in a directory only its owner can read. File names
//! are a hash of the key, so no key can name a path outside the directory.

use std::fs::{self, File, OpenOptions};
use std::hash::Hasher;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use twox_hash::XxHash3_128;

use crate::codec::{Encoded, FrameHeader, HEADER_LEN};
use crate::error::{Error, Result};

/// Small enough to stay in L2 between the read and its checksum.
const READ_BLOCK: u64 = 256 << 10;

#[derive(Debug)]
pub struct DiskStore {
    dir: PathBuf,
    /// Held open with an exclusive lock for the store's life: two stores in
    /// one directory would write the same file names (versions restart at 1
    /// in each) and clear each other's files. The OS drops the lock when the
    /// process dies, so a crashed worker never blocks its replacement.
    _lock: File,
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

/// A symlink planted at the spill path, or a directory of another user,
/// would send chunks (and the chmod) somewhere the caller never meant.
fn check_owned_dir(dir: &Path) -> Result<()> {
    let md = fs::symlink_metadata(dir).map_err(|e| Error::io("stat spill directory", dir, e))?;
    if !md.file_type().is_dir() {
        return Err(Error::invalid("dir", format!("{} is not a directory (a symlink is not followed)", dir.display())));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        extern "C" {
            fn geteuid() -> u32;
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { geteuid() };
        if md.uid() != me {
            return Err(Error::invalid("dir", format!("{} belongs to uid {}, not to this user (uid {me})", dir.display(), md.uid())));
        }
    }
    Ok(())
}

/// Only names this store writes: `clear` must never remove a user's file.
fn is_spill_file_name(name: &str) -> bool {
    let Some((hash, rest)) = name.split_once('-') else { return false };
    let Some((version, ext)) = rest.split_once('.') else { return false };
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    hash.len() == 32 && hex(hash) && hex(version) && matches!(ext, "spill" | "tmp")
}

impl DiskStore {
    /// Opens (creating if needed) `dir`, which must be a real directory of
    /// this user, makes it 0700 and locks it for this store alone.
    pub fn open(dir: impl Into<PathBuf>) -> Result<DiskStore> {
        let dir = dir.into();
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            // Born 0700: no moment in which another user could list it.
            builder.mode(0o700);
        }
        match builder.create(&dir) {
            // Something else already has the name: check_owned_dir says what.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            r => r.map_err(|e| Error::io("create spill directory", &dir, e))?,
        }
        check_owned_dir(&dir)?;
        restrict(&dir, 0o700).map_err(|e| Error::io("chmod spill directory", &dir, e))?;
        let lock = File::open(&dir).map_err(|e| Error::io("open spill directory", &dir, e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::invalid("dir", format!("{} is in use by another SpillBuffer; give each its own directory", dir.display())))
            }
            // A filesystem without flock (some NFS mounts) cannot enforce
            // this; the cluster's directories are unique per worker anyway,
            // so spilling goes on unlocked rather than failing to start.
            Err(std::fs::TryLockError::Error(_)) => {}
        }
        Ok(DiskStore { dir, _lock: lock })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Each version of a key gets its own file, so a slow writer of an old
    /// version can never overwrite the file of a newer one.
    pub fn path_of(&self, key: &str, version: u64) -> PathBuf {
        self.dir.join(format!("{:032x}-{version:x}.spill", XxHash3_128::oneshot(key.as_bytes())))
    }

    /// Writes a frame completely, then renames it into place: a reader never
    /// sees half a file, and a failed write leaves nothing behind.
    pub fn write(&self, key: &str, version: u64, frame: &Encoded<'_>) -> Result<u64> {
        let path = self.path_of(key, version);
        let tmp = path.with_extension("tmp");
        let result = (|| {
            // A leftover temp file of a write that died is ours to replace;
            // create_new then guarantees a fresh 0600 file, never a planted
            // symlink or a file with looser permissions.
            let _ = fs::remove_file(&tmp);
            let mut opts = OpenOptions::new();
            opts.write(true).create_new(true);
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
        let (header, payload, checksum) = self.read_checksummed(key, version, false)?;
        header.decode_checked(payload, checksum)
    }

    /// The file of `key` as it lies: a whole frame, header included, that
    /// `codec::decode` accepts. It is verified (header, length, checksum) but
    /// never decoded, so a spilled chunk can be sent on still compressed.
    pub fn read_frame(&self, key: &str, version: u64) -> Result<Vec<u8>> {
        let (header, frame, checksum) = self.read_checksummed(key, version, true)?;
        header.check(frame.len() - HEADER_LEN, checksum)?;
        Ok(frame)
    }

    /// Reads the payload (after the header when `with_header`), checksumming
    /// it block by block as it arrives, while each block is still in cache:
    /// one pass over memory instead of two. The caller checks the sum.
    fn read_checksummed(&self, key: &str, version: u64, with_header: bool) -> Result<(FrameHeader, Vec<u8>, u64)> {
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
        let n = header.payload_len;
        let base = if with_header { HEADER_LEN } else { 0 };
        let mut out = crate::pool::take_empty(base + n as usize);
        out.extend_from_slice(&head[..base]);
        let mut hasher = header.payload_hasher();
        loop {
            let start = out.len();
            let got = (&mut f)
                .take(READ_BLOCK.min(n - (start - base) as u64))
                .read_to_end(&mut out)
                .map_err(|e| Error::io("read spill file", &path, e))?;
            if got == 0 {
                break;
            }
            hasher.write(&out[start..]);
        }
        Ok((header, out, hasher.finish()))
    }

    pub fn remove(&self, key: &str, version: u64) {
        let _ = fs::remove_file(self.path_of(key, version));
    }

    /// Removes every spill file, and the directory when nothing else is in it
    /// (a user's own files in it are left alone).
    pub fn clear(&self) {
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                if e.file_name().to_str().is_some_and(is_spill_file_name) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        let _ = fs::remove_dir(&self.dir);
    }
}
