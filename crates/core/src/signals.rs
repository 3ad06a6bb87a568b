//! A spillway program stops on SIGINT, SIGTERM or SIGHUP within a second or
//! two, whatever its JavaScript thread is doing. Node runs a signal's
//! listeners on that thread, and spillway listens (to remove its spill
//! directories before the signal's default action): a program busy in a
//! long synchronous step heard Ctrl-C only when the step ended, 40 s and
//! more, with its workers and spill directory alive meanwhile. So the core
//! chains a handler in front of Node's: it counts the signal and wakes a
//! thread of the core, which waits `GRACE` for the JavaScript listener to
//! say it ran. If it has not, and the program has no listener of its own
//! for that signal (which would decide how to stop, as Node lets it), the
//! thread removes the directories it was given and ends the process by the
//! signal's default action, as the listener would have. The cluster's
//! workers see their parent gone (orphan.rs) and end too.

use std::path::PathBuf;
use std::time::Duration;

/// How long the JavaScript listener has to run before the core acts for it.
pub const GRACE: Duration = Duration::from_millis(1000);

/// The signals that stop a program: Ctrl-C, `kill`, a closed terminal or a batch job's end.
#[cfg(unix)]
const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Which of SIGNALS `name` is ("SIGINT", "SIGTERM", "SIGHUP").
pub fn index_of(name: &str) -> Option<usize> {
    ["SIGINT", "SIGTERM", "SIGHUP"].iter().position(|n| *n == name)
}

#[cfg(unix)]
mod imp {
    use super::{GRACE, SIGNALS};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
    use std::sync::{Mutex, OnceLock};
    use std::time::Instant;

    use crate::{Error, Result};

    /// The write end of the pipe the handler wakes the thread through.
    static WAKE: AtomicI32 = AtomicI32::new(-1);
    /// Signals received, and listener runs the JavaScript side reported.
    static RAISED: AtomicU64 = AtomicU64::new(0);
    static HEARD: AtomicU64 = AtomicU64::new(0);
    /// Per signal: the program listens to it itself.
    static OWNED: [AtomicBool; 3] = [AtomicBool::new(false), AtomicBool::new(false), AtomicBool::new(false)];
    /// The handlers found in place (Node's), called after ours.
    static PREVIOUS: OnceLock<[libc::sigaction; 3]> = OnceLock::new();
    static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    extern "C" fn on_signal(sig: i32, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // Only async-signal-safe work here: an atomic add, a write(2), the next handler.
        RAISED.fetch_add(1, Ordering::SeqCst);
        let fd = WAKE.load(Ordering::SeqCst);
        if fd >= 0 {
            let b = sig as u8;
            // SAFETY: one byte from a live local to a pipe this module owns.
            unsafe { libc::write(fd, (&b as *const u8).cast(), 1) };
        }
        let Some(prev) = PREVIOUS.get() else { return };
        let Some(i) = SIGNALS.iter().position(|s| *s == sig) else { return };
        let p = &prev[i];
        if p.sa_sigaction == libc::SIG_DFL || p.sa_sigaction == libc::SIG_IGN {
            return;
        }
        // SAFETY: the handler Node installed, called as it asked to be (with or without siginfo).
        unsafe {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(p.sa_sigaction);
                f(sig, info, ctx);
            } else {
                let f: extern "C" fn(i32) = std::mem::transmute(p.sa_sigaction);
                f(sig);
            }
        }
    }

    /// Chains the handler in front of the ones in place, once; call it after
    /// Node has its own (after the first `process.on(signal)`).
    pub fn chain() -> Result<()> {
        if PREVIOUS.get().is_some() {
            return Ok(());
        }
        let mut fds = [0i32; 2];
        // SAFETY: a fresh pipe into a local array, then close-on-exec on each end so no worker inherits it.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(Error::io("open the pipe of the signal watch for", PathBuf::new(), std::io::Error::last_os_error()));
        }
        for fd in fds {
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        let [read_end, write_end] = fds;
        std::thread::Builder::new()
            .name("spillway-signal-watch".into())
            .spawn(move || watch(read_end))
            .map_err(|e| Error::io("start the thread that watches signals for", PathBuf::new(), e))?;
        WAKE.store(write_end, Ordering::SeqCst);
        // SAFETY: zeroed sigaction structs are valid; each is read back from the kernel before use.
        let mut prev: [libc::sigaction; 3] = unsafe { std::mem::zeroed() };
        for (i, sig) in SIGNALS.iter().enumerate() {
            unsafe { libc::sigaction(*sig, std::ptr::null(), &mut prev[i]) };
        }
        let _ = PREVIOUS.set(prev);
        for (i, sig) in SIGNALS.iter().enumerate() {
            let mut ours: libc::sigaction = unsafe { std::mem::zeroed() };
            ours.sa_sigaction = on_signal as *const () as usize;
            // Node's own flags (SA_RESTART, SA_ONSTACK...), with siginfo for the handler it chains to.
            ours.sa_flags = prev[i].sa_flags | libc::SA_SIGINFO;
            ours.sa_mask = prev[i].sa_mask;
            // SAFETY: installs a handler that only does async-signal-safe work.
            unsafe { libc::sigaction(*sig, &ours, std::ptr::null_mut()) };
        }
        Ok(())
    }

    fn watch(read_end: i32) {
        loop {
            let mut b = 0u8;
            // SAFETY: one byte into a live local, from the pipe's read end this thread owns.
            let n = unsafe { libc::read(read_end, (&mut b as *mut u8).cast(), 1) };
            if n != 1 {
                if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            let sig = i32::from(b);
            let Some(i) = SIGNALS.iter().position(|s| *s == sig) else { continue };
            let raised = RAISED.load(Ordering::SeqCst);
            let deadline = Instant::now() + GRACE;
            while HEARD.load(Ordering::SeqCst) < raised && Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if HEARD.load(Ordering::SeqCst) >= raised || OWNED[i].load(Ordering::SeqCst) {
                continue;
            }
            for dir in DIRS.lock().map(|d| d.clone()).unwrap_or_default() {
                let _ = std::fs::remove_dir_all(dir);
            }
            // SAFETY: the default action back in place, then the signal again: the process ends as
            // Node would have ended it; _exit is the fallback should it somehow live on.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::kill(libc::getpid(), sig);
                std::thread::sleep(std::time::Duration::from_millis(200));
                libc::_exit(128 + sig);
            }
        }
    }

    pub fn heard() {
        HEARD.fetch_add(1, Ordering::SeqCst);
    }

    pub fn set_owned(i: usize, owned: bool) {
        OWNED[i].store(owned, Ordering::SeqCst);
    }

    pub fn set_dirs(dirs: Vec<PathBuf>) {
        if let Ok(mut d) = DIRS.lock() {
            *d = dirs;
        }
    }
}

#[cfg(unix)]
pub use imp::chain;

/// The JavaScript listener ran for a signal: the core leaves it be.
pub fn heard() {
    #[cfg(unix)]
    imp::heard();
}

/// Whether the program listens to signal `i` (of index_of) itself: then it decides how to stop.
pub fn set_owned(i: usize, owned: bool) {
    #[cfg(unix)]
    imp::set_owned(i, owned);
    #[cfg(not(unix))]
    let _ = (i, owned);
}

/// The directories to remove when the core ends the process for a signal.
pub fn set_dirs(dirs: Vec<PathBuf>) {
    #[cfg(unix)]
    imp::set_dirs(dirs);
    #[cfg(not(unix))]
    let _ = dirs;
}

/// Elsewhere the JavaScript listener alone stands.
#[cfg(not(unix))]
pub fn chain() -> crate::Result<()> {
    Ok(())
}
