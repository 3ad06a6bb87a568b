//! Spill writes after a failure. A full disk fails every write the same way:
//! retrying each chunk at every memory check only burns CPU compressing
//! frames that cannot land, and floods the log. After a failure, writes wait,
//! doubling from `FIRST` to `MAX`; one success (or `retry_now`, when the
//! caller sees space freed) ends the wait.

use std::time::{Duration, Instant};

const FIRST: Duration = Duration::from_millis(100);
const MAX: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
pub(crate) struct Backoff {
    failures: u32,
    retry_at: Option<Instant>,
}

impl Backoff {
    /// Whether a write may be tried at `now`.
    pub fn ready(&self, now: Instant) -> bool {
        self.retry_at.is_none_or(|at| now >= at)
    }

    pub fn failed(&mut self, now: Instant) {
        let wait = FIRST.saturating_mul(1 << self.failures.min(16)).min(MAX);
        self.failures = self.failures.saturating_add(1);
        self.retry_at = Some(now + wait);
    }

    pub fn succeeded(&mut self) {
        *self = Backoff::default();
    }

    /// Lets the next write go at once; the wait after its failure keeps growing.
    pub fn retry_now(&mut self) {
        self.retry_at = None;
    }

    /// Failed writes since the last one that landed.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    pub fn remaining(&self, now: Instant) -> Duration {
        self.retry_at.map_or(Duration::ZERO, |at| at.saturating_duration_since(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_cap_and_reset_on_success() {
        let t0 = Instant::now();
        let mut b = Backoff::default();
        assert!(b.ready(t0));
        let mut waits = vec![];
        for _ in 0..10 {
            b.failed(t0);
            waits.push(b.remaining(t0).as_millis());
            assert!(!b.ready(t0));
        }
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000]);
        assert!(b.ready(t0 + MAX));
        assert_eq!(b.failures(), 10);
        b.retry_now();
        assert!(b.ready(t0));
        assert_eq!(b.failures(), 10, "a retry is not a success");
        b.succeeded();
        assert_eq!(b.failures(), 0);
        b.failed(t0);
        assert_eq!(b.remaining(t0), FIRST);
    }
}
