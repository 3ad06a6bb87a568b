//! Figures a worker reports in its heartbeat, named after Dask's.

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpillMetrics {
    /// Bytes of every chunk held, in memory or spilled (Dask's managed_bytes).
    pub managed_bytes: u64,
    /// Bytes of chunks held in memory.
    pub memory_bytes: u64,
    /// In-memory size of the spilled chunks.
    pub spilled_memory: u64,
    /// Bytes the spilled chunks take on disk, after compression.
    pub spilled_disk: u64,
    pub memory_count: u64,
    pub disk_count: u64,
    pub spill_count: u64,
    pub unspill_count: u64,
    pub spill_bytes_written: u64,
    pub spill_seconds: f64,
    pub unspill_bytes_read: u64,
    pub unspill_seconds: f64,
    pub write_failures: u64,
    pub last_write_error: Option<String>,
    pub target_bytes: u64,
    pub memory_limit: u64,
}
