//! Helpers of the admin cases: requests with defaults and a queue's totals.

use flexiq_core::store::{CleanRequest, ObliterateRequest, RetryJobsRequest};
use flexiq_core::{JobStatus, Stats, Store};

/// The queue the admin cases work on.
pub const Q: &str = "adm";

/// The queue they must leave alone.
pub const OTHER: &str = "adm-other";

/// A clean of `status` in `Q` with `grace_ms` and `limit` at `now`.
pub fn clean(status: JobStatus, grace_ms: u64, limit: u32, now: i64) -> CleanRequest {
    CleanRequest { queue: Q.into(), status, grace_ms, limit, now }
}

/// An obliterate of `Q` in pages of `count`.
pub fn obliterate(force: bool, count: u32, now: i64) -> ObliterateRequest {
    ObliterateRequest { queue: Q.into(), force, count, now }
}

/// A retry of up to `count` jobs of `status` in `Q`.
pub fn retry(status: JobStatus, count: u32, now: i64) -> RetryJobsRequest {
    RetryJobsRequest { queue: Q.into(), status, count, now }
}

/// The totals of one queue.
pub async fn queue_stats(s: &dyn Store, queue: &str) -> Stats {
    s.stats(Some(queue)).await.unwrap_or_else(|e| panic!("stats of {queue}: {e}"))
}
