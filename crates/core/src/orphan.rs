//! A worker dies with the process that started it, whatever its JavaScript
//! thread is doing, as Dask's workers die with their nanny. A worker's own
//! check of its parent (src/worker/orphan.ts) runs on that thread, which a
//! long synchronous task holds for as long as it runs: minutes of CPU and
//! memory on a shared node after the cluster's process is gone. So a thread
//! of the core watches instead: once the parent is gone (this process was
//! handed to another), it removes the cluster's spill directory, as the
//! JavaScript check does, and ends the process at once.

use std::path::PathBuf;
use std::time::Duration;

use crate::{Error, Result};

/// How often the watch looks: a lost parent is noticed within this.
pub const WATCH_EVERY: Duration = Duration::from_millis(200);

/// Starts the watch of `parent` (this process's parent when it started; if it
/// is already gone, the first look ends the process). `remove`: the
/// directory to remove on the way out, when this process's cluster made it.
#[cfg(unix)]
pub fn watch_parent(parent: u32, remove: Option<PathBuf>) -> Result<()> {
    extern "C" {
        fn _exit(status: i32) -> !;
    }
    let at = remove.clone().unwrap_or_default();
    std::thread::Builder::new().name("spillway-parent-watch".into()).spawn(move || loop {
        if std::os::unix::process::parent_id() != parent {
            if let Some(dir) = &remove {
                // Every worker of the cluster does this at once: one wins, the others find nothing.
                let _ = std::fs::remove_dir_all(dir);
            }
            // SAFETY: _exit ends the process without running atexit handlers or
            // destructors, which the JavaScript thread (mid-task) would race.
            unsafe { _exit(1) }
        }
        std::thread::sleep(WATCH_EVERY);
    })
    .map_err(|e| Error::io("start the thread that watches the parent process for", at, e))?;
    Ok(())
}

/// Elsewhere the JavaScript check alone stands.
#[cfg(not(unix))]
pub fn watch_parent(_parent: u32, _remove: Option<PathBuf>) -> Result<()> {
    Ok(())
}
