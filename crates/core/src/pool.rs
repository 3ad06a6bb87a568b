//! A small per-process pool of chunk-sized buffers. A worker under memory
//! pressure frees one chunk (spilled) for every chunk it makes; handing the
//! freed buffer to the next chunk skips the kernel's page faults on fresh
//! memory, which cost more than generating or reading the chunk itself.
//! The pool holds at most a few buffers, and `clear` drops them at once when
//! process memory runs high.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Buffers below this size are left to the allocator.
pub const MIN_POOLED: usize = 1 << 20;
/// At most this many idle buffers, and this many bytes, are kept.
const MAX_BUFFERS: usize = 4;
const MAX_BYTES: usize = 128 << 20;

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn pool() -> std::sync::MutexGuard<'static, Vec<Vec<u8>>> {
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether a buffer of `capacity` holds `len` bytes without wasting more
/// than a quarter of `len`.
fn fits(capacity: usize, len: usize) -> bool {
    capacity >= len && capacity - len <= len / 4
}

/// A pooled buffer that fits `len`, if there is one.
fn take_fitting(len: usize) -> Option<Vec<u8>> {
    if len < MIN_POOLED {
        return None;
    }
    let mut p = pool();
    let i = p.iter().position(|v| fits(v.capacity(), len))?;
    Some(p.swap_remove(i))
}

/// An empty buffer with room for `len` bytes, for a writer that fills it (a
/// generator, `read_to_end`): a pooled one if one fits, else a new one.
/// Nothing is zeroed first, which would be a whole extra pass over it.
pub fn take_empty(len: usize) -> Vec<u8> {
    match take_fitting(len) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => advise_huge(Vec::with_capacity(len)),
    }
}

/// Makes sure a buffer for `len` bytes is waiting in the pool, allocating
/// one on the calling thread if none fits. The binding calls it on the JS
/// thread before handing work to the thread pool: glibc keeps what is freed
/// on the main thread's heap for reuse but gives back most of what is freed
/// in a pool thread's arena, so buffers made on the main thread come back
/// with their pages still mapped where a pool thread's would have to be
/// faulted in again. `for_compute` marks it for huge pages (when those are
/// on): arrays a caller will scan, not bytes on their way to disk, where
/// huge-page faults only add compaction stalls.
pub fn reserve(len: usize, for_compute: bool) {
    if len < MIN_POOLED || len > MAX_BYTES {
        return;
    }
    if !pool().iter().any(|v| fits(v.capacity(), len)) {
        let v = Vec::with_capacity(len);
        give(if for_compute { advise_huge(v) } else { v });
    }
}

/// An owned copy of `bytes`, in a pooled buffer when one fits: a chunk
/// handed over by a caller then costs a copy, not fresh pages as well.
pub fn copy_of(bytes: &[u8]) -> Vec<u8> {
    let mut v = take_empty(bytes.len());
    v.extend_from_slice(bytes);
    v
}

/// Returns a buffer for reuse. The binding gives back the buffers JS has
/// dropped, so a caller compressing chunk after chunk reuses the same
/// memory, as it would on the JS heap. A full pool drops its oldest buffers
/// for the new one: the sizes in demand now (compressed frames after a run
/// of generated chunks, say) replace those of a while ago rather than
/// being turned away by them.
pub fn give(v: Vec<u8>) {
    if v.capacity() < MIN_POOLED || v.capacity() > MAX_BYTES {
        return;
    }
    let mut p = pool();
    let mut held: usize = p.iter().map(|b| b.capacity()).sum();
    while !p.is_empty() && (p.len() >= MAX_BUFFERS || held + v.capacity() > MAX_BYTES) {
        held -= p.remove(0).capacity();
    }
    p.push(v);
}

/// Gives the buffer back if nobody else holds it.
pub fn recycle(data: Arc<Vec<u8>>) {
    if let Ok(v) = Arc::try_unwrap(data) {
        give(v);
    }
}

/// Drops every idle buffer, returning their memory to the OS.
pub fn clear() -> usize {
    let mut p = pool();
    let n = p.iter().map(|b| b.capacity()).sum();
    p.clear();
    n
}

/// Bytes held idle in the pool.
pub fn idle_bytes() -> usize {
    pool().iter().map(|b| b.capacity()).sum()
}

/// A buffer of `len` initialised bytes for a kernel to overwrite whole. A
/// pooled one is taken when it fits: fresh pages cost the kernel a fault
/// and a zeroing each, 14-18 ms for 32 MB on this project's machine, more
/// than lz4 spends compressing them. Only the part beyond what the pooled
/// buffer already held is zeroed.
///
/// No huge-page advice: its callers are the codecs, which write their
/// output once in a single pass, and a huge page's first touch zeroes 2 MiB
/// at once, which on the loaded VM here took 88% of an lz4 decode of 32 MB
/// (3-4x the 4 KiB faults a peer pays; BENCHMARKS.md 2026-12-06), more than
/// a later scan of the bytes gains from huge pages.
pub(crate) fn fresh(len: usize) -> Vec<u8> {
    match take_fitting(len) {
        Some(v) => sized(v, len),
        None => vec![0u8; len],
    }
}

/// A pooled buffer holding exactly `len` bytes; only what it did not hold
/// before is zeroed.
fn sized(mut v: Vec<u8>, len: usize) -> Vec<u8> {
    if v.len() >= len {
        v.truncate(len);
    } else {
        v.resize(len, 0);
    }
    v
}

/// Whether new large buffers are marked for transparent huge pages. On by
/// default, as numpy does for arrays of 4 MiB and more: a 32 MB sum streams
/// 20-30% faster from huge pages (numpy's own float64 sum here: 0.99-1.10 ms
/// with them, 1.29-1.39 ms without). Workers turn it off: with the kernel's
/// defrag=madvise a fault in a marked range waits for compaction, which
/// under spill churn stalled the recipe's pressure test (spill writes
/// 4.2-6.1 s summed with the advice, 1.2-1.3 s without).
static HUGE_PAGES: AtomicBool = AtomicBool::new(true);

/// Turns the huge-page advice on or off for buffers allocated from now on.
pub fn set_huge_pages(on: bool) {
    HUGE_PAGES.store(on, Ordering::Relaxed);
}

#[cfg(target_os = "linux")]
const HUGE_MIN: usize = 4 << 20;

/// Marks a large allocation for transparent huge pages (Linux only).
fn advise_huge(v: Vec<u8>) -> Vec<u8> {
    #[cfg(target_os = "linux")]
    if v.capacity() >= HUGE_MIN && HUGE_PAGES.load(Ordering::Relaxed) {
        madvise_huge(v.as_ptr(), v.capacity());
    }
    v
}

#[cfg(target_os = "linux")]
fn madvise_huge(ptr: *const u8, len: usize) {
    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    const MADV_HUGEPAGE: i32 = 14;
    const PAGE: usize = 4096;
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + len) & !(PAGE - 1);
    if end > start {
        // SAFETY: the range lies inside the allocation just made; the advice
        // only changes how the kernel backs it, never its contents. Failure
        // (e.g. THP disabled) is harmless and ignored.
        unsafe {
            madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool is one per process: its tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn reuses_buffers_of_the_same_size_and_bounds_what_it_keeps() {
        let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        clear();
        let a = vec![7u8; 2 << 20];
        let ptr = a.as_ptr();
        give(a);
        let b = take_empty(2 << 20);
        assert_eq!(b.as_ptr(), ptr, "the pooled buffer is handed out again");
        assert_eq!((b.len(), b.capacity()), (0, 2 << 20));
        let c = take_empty(3 << 20);
        assert!(c.is_empty() && c.capacity() >= 3 << 20);
        give(vec![0; 100]);
        assert_eq!(idle_bytes(), 0, "small buffers are not pooled");
        for _ in 0..5 {
            give(vec![0; 2 << 20]);
        }
        assert_eq!(idle_bytes(), MAX_BUFFERS * (2 << 20));
        let newest = vec![0u8; 3 << 20];
        let newest_ptr = newest.as_ptr();
        give(newest);
        assert_eq!(idle_bytes(), (MAX_BUFFERS - 1) * (2 << 20) + (3 << 20), "the oldest made room for the newest");
        let taken = take_empty(3 << 20);
        assert_eq!(taken.as_ptr(), newest_ptr);
        give(vec![0; 2 << 20]);
        assert_eq!(clear(), MAX_BUFFERS * (2 << 20));
        assert_eq!(idle_bytes(), 0);
    }

    #[test]
    fn fresh_reuses_a_buffer_that_fits_and_never_a_much_larger_one() {
        let _turn = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        clear();
        let a = vec![7u8; 4 << 20];
        let ptr = a.as_ptr();
        give(a);
        let small = fresh(1 << 20);
        assert_ne!(small.as_ptr(), ptr, "a 1 MiB output does not take a 4 MiB buffer");
        let b = fresh((4 << 20) - 100);
        assert_eq!((b.as_ptr(), b.len()), (ptr, (4 << 20) - 100));
        let mut shorter = b;
        shorter.truncate(3 << 20);
        give(shorter);
        let c = fresh(4 << 20);
        assert_eq!((c.as_ptr(), c.len()), (ptr, 4 << 20), "grown back to the length asked for");
        assert!(c[(3 << 20)..].iter().all(|&x| x == 0), "only the new tail is zeroed");
        clear();
    }
}
