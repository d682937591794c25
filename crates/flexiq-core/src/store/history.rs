//! Metrics, partial results, logs, progress and replays: per-job history beside the job row.

use crate::error::{Error, Result};
use crate::fence::{AckOutcome, Fence};
use crate::history::{LogEntry, Partial, ReplayEntry};
use crate::id::JobId;
use crate::options::{validate_name, MAX_PAYLOAD_BYTES};
use crate::stats::MetricRow;

/// Metric rows since a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetMetricsRequest {
    /// Rows recorded at or after this time (Unix ms).
    pub since_ms: i64,
    /// Only rows of this task.
    pub task: Option<String>,
}

/// Append a partial result to a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishPartialRequest {
    /// The job.
    pub id: JobId,
    /// The partial's bytes (at most `MAX_PAYLOAD_BYTES`).
    pub data: Vec<u8>,
    /// Unix ms.
    pub now: i64,
}

/// A job's partials after a sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialsRequest {
    /// The job.
    pub id: JobId,
    /// Partials with a greater sequence number are returned.
    pub after_seq: u64,
    /// Most partials to return (1 to `MAX_PAGE`).
    pub limit: u32,
}

/// Append a log line to a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendLogRequest {
    /// The job.
    pub id: JobId,
    /// Its level (`info`, `warn`, ...; not empty).
    pub level: String,
    /// The line (at most `MAX_PAYLOAD_BYTES`).
    pub message: String,
    /// Unix ms.
    pub now: i64,
}

/// Record a running attempt's progress.
#[derive(Debug, Clone, PartialEq)]
pub struct SetProgressRequest {
    /// The job.
    pub id: JobId,
    /// The fence of the attempt's claim.
    pub fence: Fence,
    /// Percent done, 0 to 100.
    pub progress: f64,
}

/// Enqueue a copy of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayRequest {
    /// The job to copy.
    pub id: JobId,
    /// Unix ms.
    pub now: i64,
}

impl PublishPartialRequest {
    /// Checks the size of the partial.
    pub fn validate(&self) -> Result<()> {
        if self.data.len() > MAX_PAYLOAD_BYTES {
            return Err(Error::invalid(format!(
                "partial result of job {} is {} bytes, over the {MAX_PAYLOAD_BYTES} byte limit",
                self.id,
                self.data.len()
            )));
        }
        Ok(())
    }
}

impl PartialsRequest {
    /// Checks the page size.
    pub fn validate(&self) -> Result<()> {
        crate::store::inspect::check_page(self.limit, None)
    }
}

impl AppendLogRequest {
    /// Checks the level and the line's size.
    pub fn validate(&self) -> Result<()> {
        validate_name("log level", &self.level)?;
        if self.message.len() > MAX_PAYLOAD_BYTES {
            return Err(Error::invalid(format!(
                "log line of job {} is {} bytes, over the {MAX_PAYLOAD_BYTES} byte limit",
                self.id,
                self.message.len()
            )));
        }
        Ok(())
    }
}

impl SetProgressRequest {
    /// Checks that progress is a number from 0 to 100.
    pub fn validate(&self) -> Result<()> {
        if !self.progress.is_finite() || !(0.0..=100.0).contains(&self.progress) {
            return Err(Error::invalid(format!(
                "progress {} of job {} must be between 0 and 100",
                self.progress, self.id
            )));
        }
        Ok(())
    }
}

/// Per-job history beside the job row.
#[async_trait::async_trait]
pub trait History: Send + Sync {
    /// Metric rows recorded at or after `since_ms`, optionally of one task, oldest first.
    async fn get_metrics(&self, req: GetMetricsRequest) -> Result<Vec<MetricRow>>;

    /// Appends a partial result; returns its sequence number (1, 2, ...). `NotFound` when the
    /// job is unknown.
    async fn publish_partial(&self, req: PublishPartialRequest) -> Result<u64>;

    /// Partials with `seq > after_seq`, in order (up to `limit`).
    async fn partials(&self, req: PartialsRequest) -> Result<Vec<Partial>>;

    /// Appends a log line to a job; `NotFound` when unknown.
    async fn append_log(&self, req: AppendLogRequest) -> Result<()>;

    /// A job's log lines, oldest first.
    async fn job_logs(&self, id: &JobId) -> Result<Vec<LogEntry>>;

    /// Records progress (0-100) of a running attempt, fenced.
    async fn set_progress(&self, req: SetProgressRequest) -> Result<AckOutcome>;

    /// Enqueues a copy of a job (fresh id, fresh budget, same payload and options) and records
    /// the replay; `NotFound` when unknown.
    async fn replay(&self, req: ReplayRequest) -> Result<JobId>;

    /// Replays of a job, newest first.
    async fn replay_history(&self, id: &JobId) -> Result<Vec<ReplayEntry>>;
}
