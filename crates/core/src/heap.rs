//! Hands the allocator's free memory back to the OS on demand. Workers of
//! 1 GiB or more let glibc keep what a task frees for the next task (mmap
//! threshold 8 MiB, trim threshold a 32nd of the limit: src/deploy/
//! malloc-env.ts), which spares the page faults of mapping every column
//! buffer afresh. But those kept pages count in the process's resident
//! memory, which the worker's thresholds and the nanny's terminate watch
//! measure: a worker full of free heap looks as full as one full of data.
//! So when its memory passes its target, the worker trims first and
//! measures again, and only live memory makes it spill, pause or die.

/// Returns the free pages of every malloc arena to the OS (glibc's
/// `malloc_trim(0)`: the top of each heap is shrunk and free chunks inside
/// it are `madvise(MADV_DONTNEED)`d, so resident memory falls at once).
/// True when anything was given back. It walks each arena's free lists
/// under that arena's lock: a few milliseconds for a heap of a GiB, but the
/// pages it gives back must be faulted in again by the next allocations,
/// which is the cost the raised thresholds avoid — callers trim only under
/// memory pressure, at most once per memory check.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim() -> bool {
    extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: malloc_trim takes the arenas' own locks and touches only free chunks.
    unsafe { malloc_trim(0) != 0 }
}

/// Other allocators (musl, macOS, Windows) keep no such heap to trim: a no-op.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident bytes of this process, from /proc.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn rss() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * 4096
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn free_holes_inside_the_heap_go_back_to_the_os() {
        // Resident memory is the whole process's: tests on other threads
        // allocate and free beside this one, so it measures in a process of
        // its own (this binary again, running only this test).
        if std::env::var_os("SPILLWAY_HEAP_CHILD").is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "heap::tests::free_holes_inside_the_heap_go_back_to_the_os", "--test-threads=1"])
                .env("SPILLWAY_HEAP_CHILD", "1")
                .output()
                .unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success() && text.contains("1 passed"), "{text}");
            return;
        }
        // 100 KiB pieces stay below glibc's default mmap threshold (128 KiB),
        // and a small keeper after each stops them merging into the top of
        // the heap, where free() alone would give them back.
        let mut big = Vec::new();
        let mut keep = Vec::new();
        for i in 0..640u32 {
            big.push(vec![i as u8 | 1; 100 << 10]);
            keep.push(vec![1u8; 64]);
        }
        let before_free = rss();
        drop(big);
        let kept = rss();
        assert!(trim(), "malloc_trim gave nothing back");
        let after = rss();
        // Only a clear fall is asserted: the harness itself allocates too.
        assert!(kept + (16 << 20) > before_free, "the holes stayed resident until the trim");
        assert!(after + (32 << 20) < kept, "resident {kept} -> {after} after the trim");
        drop(keep);
    }

}
