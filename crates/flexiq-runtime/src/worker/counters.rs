//! Counters a worker keeps about what it did, readable while it runs.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of a worker's counters (since it started).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerCounters {
    /// Jobs claimed.
    pub claimed: u64,
    /// Handler runs started.
    pub started: u64,
    /// Attempts that ended in success.
    pub succeeded: u64,
    /// Attempts that ended in failure (handler error, panic, timeout, unknown task).
    pub failed: u64,
    /// Attempts the handler stopped on a cancel request (the job ended cancelled).
    pub cancelled: u64,
    /// Acks the store applied.
    pub acknowledged: u64,
    /// Acks the store refused because a newer attempt owns the job (nothing written).
    pub superseded: u64,
    /// Jobs handed back unfinished (shutdown).
    pub given_back: u64,
    /// Ack batches the store failed to write (their jobs are re-run after the lease lapses).
    pub ack_errors: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) claimed: AtomicU64,
    pub(crate) started: AtomicU64,
    pub(crate) succeeded: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) cancelled: AtomicU64,
    pub(crate) acknowledged: AtomicU64,
    pub(crate) superseded: AtomicU64,
    pub(crate) given_back: AtomicU64,
    pub(crate) ack_errors: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> WorkerCounters {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        WorkerCounters {
            claimed: r(&self.claimed),
            started: r(&self.started),
            succeeded: r(&self.succeeded),
            failed: r(&self.failed),
            cancelled: r(&self.cancelled),
            acknowledged: r(&self.acknowledged),
            superseded: r(&self.superseded),
            given_back: r(&self.given_back),
            ack_errors: r(&self.ack_errors),
        }
    }
}
