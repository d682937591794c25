//! Time as an injected dependency.
//!
//! Every store call takes `now` (Unix ms). The runtime reads it from a [`Clock`] so tests can
//! drive leases, retention windows and elections with a [`ManualClock`] instead of sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// A source of the current time in Unix milliseconds.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now, in Unix ms.
    fn now_ms(&self) -> i64;
}

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to; clones share the same time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `start_ms` (Unix ms).
    pub fn new(start_ms: i64) -> Self {
        ManualClock(Arc::new(AtomicI64::new(start_ms)))
    }

    /// Sets the time (Unix ms).
    pub fn set(&self, now_ms: i64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms` milliseconds.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1_000);
        let shared = c.clone();
        assert_eq!(c.now_ms(), 1_000);
        shared.advance(500);
        assert_eq!(c.now_ms(), 1_500);
        c.set(10);
        assert_eq!(shared.now_ms(), 10);
        assert!(SystemClock.now_ms() > 1_600_000_000_000);
    }
}
