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
    /// The last failed write wanted space the disk (or quota) did not have.
    pub last_write_no_space: bool,
    /// Failed writes since the last one that landed.
    pub consecutive_write_failures: u64,
    /// Seconds until the next write is tried (after failures, writes back off).
    pub spill_backoff_seconds: f64,
    pub target_bytes: u64,
    pub memory_limit: u64,
    /// Spill writes the `max_spill` cap refused (those chunks stayed in memory).
    pub spill_cap_refusals: u64,
    /// The disk is at its `max_spill` cap: eviction waits until disk bytes fall.
    pub spill_cap_reached: bool,
}

impl SpillMetrics {
    pub(crate) fn record_spill(&mut self, len: u64, disk_len: u64, secs: f64) {
        self.spilled_memory += len;
        self.spilled_disk += disk_len;
        self.spill_count += 1;
        self.spill_bytes_written += disk_len;
        self.spill_seconds += secs;
    }

    pub(crate) fn record_unspill(&mut self, bytes_read: u64, secs: f64) {
        self.unspill_count += 1;
        self.unspill_bytes_read += bytes_read;
        self.unspill_seconds += secs;
    }

    pub(crate) fn record_failure(&mut self, err: &crate::Error) {
        self.write_failures += 1;
        self.last_write_error = Some(err.to_string());
        self.last_write_no_space = err.is_no_space();
    }
}
