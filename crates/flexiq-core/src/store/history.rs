//! Metrics, partial results, logs, progress and replays.

use crate::error::Result;
use crate::fence::{AckOutcome, Fence};
use crate::history::{LogEntry, Partial, ReplayEntry};
use crate::id::JobId;
use crate::stats::MetricRow;

/// Per-job history beside the job row.
#[async_trait::async_trait]
pub trait History: Send + Sync {
    /// Metric rows recorded at or after `since` (Unix ms), optionally of one task, oldest first.
    async fn get_metrics(&self, since: i64, task: Option<&str>) -> Result<Vec<MetricRow>>;

    /// Appends a partial result; returns its sequence number (1, 2, ...). `NotFound` when the
    /// job is unknown.
    async fn publish_partial(&self, id: &JobId, data: Vec<u8>, now: i64) -> Result<u64>;

    /// Partials with `seq > after_seq`, in order (up to `limit`).
    async fn partials(&self, id: &JobId, after_seq: u64, limit: u32) -> Result<Vec<Partial>>;

    /// Appends a log line to a job; `NotFound` when unknown.
    async fn append_log(&self, id: &JobId, level: &str, message: &str, now: i64) -> Result<()>;

    /// A job's log lines, oldest first.
    async fn job_logs(&self, id: &JobId) -> Result<Vec<LogEntry>>;

    /// Records progress (0-100) of a running attempt, fenced.
    async fn set_progress(&self, id: &JobId, fence: Fence, progress: f64) -> Result<AckOutcome>;

    /// Enqueues a copy of a job (fresh id, fresh budget, same payload and options) and records
    /// the replay; `NotFound` when unknown.
    async fn replay(&self, id: &JobId, now: i64) -> Result<JobId>;

    /// Replays of a job, newest first.
    async fn replay_history(&self, id: &JobId) -> Result<Vec<ReplayEntry>>;
}
