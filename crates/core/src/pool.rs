//! A small per-process pool of chunk-sized buffers. A worker under memory
//! pressure frees one chunk (spilled) for every chunk it makes; handing the
//! freed buffer to the next chunk skips the kernel's page faults on fresh
//! memory, which cost more than generating or reading the chunk itself.
//! The pool holds at most a few buffers, and `clear` drops them at once when
//! process memory runs high.

use std::sync::{Arc, Mutex};

/// Buffers below this size are left to the allocator.
const MIN_POOLED: usize = 1 << 20;
/// At most this many idle buffers, and this many bytes, are kept.
const MAX_BUFFERS: usize = 2;
const MAX_BYTES: usize = 128 << 20;

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn pool() -> std::sync::MutexGuard<'static, Vec<Vec<u8>>> {
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

/// An empty buffer with room for `len` bytes, for a writer that fills it (a
/// generator, `read_to_end`): a pooled one if its size matches, else a new
/// one. Nothing is zeroed first, which would be a whole extra pass over it.
pub fn take_empty(len: usize) -> Vec<u8> {
    if len >= MIN_POOLED {
        let mut p = pool();
        if let Some(i) = p.iter().position(|v| v.len() == len) {
            let mut v = p.swap_remove(i);
            v.clear();
            return v;
        }
    }
    advise_huge(Vec::with_capacity(len))
}

/// An owned copy of `bytes`, in a pooled buffer when one fits: a chunk
/// handed over by a caller then costs a copy, not fresh pages as well.
pub fn copy_of(bytes: &[u8]) -> Vec<u8> {
    let mut v = take_empty(bytes.len());
    v.extend_from_slice(bytes);
    v
}

/// Returns a buffer for reuse (or drops it when the pool is full).
pub fn give(v: Vec<u8>) {
    if v.len() < MIN_POOLED || v.len() > MAX_BYTES {
        return;
    }
    let mut p = pool();
    let held: usize = p.iter().map(|b| b.len()).sum();
    if p.len() < MAX_BUFFERS && held + v.len() <= MAX_BYTES {
        p.push(v);
    }
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
    let n = p.iter().map(|b| b.len()).sum();
    p.clear();
    n
}

/// Bytes held idle in the pool.
pub fn idle_bytes() -> usize {
    pool().iter().map(|b| b.len()).sum()
}

/// A zeroed buffer of `len` bytes for a kernel's output. Large ones are
/// fresh mappings that the kernel then faults in page by page, which costs
/// more than generating or decoding into them; on Linux they are marked for
/// transparent huge pages first, so a 32 MB chunk takes 16 faults, not 8192.
pub(crate) fn fresh(len: usize) -> Vec<u8> {
    advise_huge(vec![0u8; len])
}

#[cfg(target_os = "linux")]
const HUGE_MIN: usize = 4 << 20;

/// Marks a large allocation for transparent huge pages (Linux only).
fn advise_huge(v: Vec<u8>) -> Vec<u8> {
    #[cfg(target_os = "linux")]
    if v.capacity() >= HUGE_MIN {
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

    #[test]
    fn reuses_buffers_of_the_same_size_and_bounds_what_it_keeps() {
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
        assert_eq!(clear(), MAX_BUFFERS * (2 << 20));
        assert_eq!(idle_bytes(), 0);
    }
}
