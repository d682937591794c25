//! Queue control: pause, limits, purges and task revocation, persisted and namespace-scoped.

use crate::error::{Error, Result};
use crate::options::validate_name;
use crate::rate::RateLimit;

/// A queue's persisted controls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueConfig {
    /// Paused: claims skip it.
    pub paused: bool,
    /// Claims per window.
    pub rate_limit: Option<RateLimit>,
    /// Most running jobs across all workers.
    pub concurrency: Option<u32>,
    /// Stalls (lapsed leases) a job may recover from before it fails with `STALLED`;
    /// `None` means [`DEFAULT_MAX_STALLED_COUNT`].
    pub max_stalled_count: Option<u32>,
}

/// Stalls a job may recover from when its queue sets no budget.
pub const DEFAULT_MAX_STALLED_COUNT: u32 = 1;

impl QueueConfig {
    /// The stall budget in force.
    pub fn stall_budget(&self) -> u32 {
        self.max_stalled_count.unwrap_or(DEFAULT_MAX_STALLED_COUNT)
    }
}

/// Set or clear a queue's stall budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetMaxStalledRequest {
    /// The queue.
    pub queue: String,
    /// Stalls a job may recover from (0: the first stall fails it); `None` restores the
    /// default of [`DEFAULT_MAX_STALLED_COUNT`].
    pub max: Option<u32>,
}

impl SetMaxStalledRequest {
    /// Checks the queue name and that the budget is at most [`MAX_STALLED_LIMIT`].
    pub fn validate(&self) -> Result<()> {
        validate_name("queue name", &self.queue)?;
        if let Some(m) = self.max.filter(|m| *m > MAX_STALLED_LIMIT) {
            return Err(Error::invalid(format!(
                "max_stalled_count {m} of queue {} is over the limit of {MAX_STALLED_LIMIT}",
                self.queue
            )));
        }
        Ok(())
    }
}

/// Largest stall budget accepted.
pub const MAX_STALLED_LIMIT: u32 = 10_000;

/// Set or clear a queue's rate limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRateLimitRequest {
    /// The queue.
    pub queue: String,
    /// The limit; `None` clears it.
    pub limit: Option<RateLimit>,
}

/// Set or clear a queue's concurrency cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetConcurrencyRequest {
    /// The queue.
    pub queue: String,
    /// Most running jobs across all workers (at least 1); `None` clears it.
    pub max: Option<u32>,
}

/// Cancel every job of a queue that has not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurgeQueueRequest {
    /// The queue.
    pub queue: String,
    /// Unix ms.
    pub now: i64,
}

/// Delete completed jobs finished before a cutoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeCompletedRequest {
    /// Jobs finished before this time (Unix ms) go.
    pub cutoff_ms: i64,
}

impl SetRateLimitRequest {
    /// Checks the queue name and that the limit lets at least one job through per window.
    pub fn validate(&self) -> Result<()> {
        validate_name("queue name", &self.queue)?;
        if let Some(l) = self.limit {
            if l.count == 0 || l.per_ms == 0 {
                return Err(Error::invalid(format!(
                    "rate limit {l} of queue {} must allow at least one job per window",
                    self.queue
                )));
            }
        }
        Ok(())
    }
}

impl SetConcurrencyRequest {
    /// Checks the queue name and that a cap is at least 1.
    pub fn validate(&self) -> Result<()> {
        validate_name("queue name", &self.queue)?;
        if self.max == Some(0) {
            return Err(Error::invalid(format!(
                "concurrency cap of queue {} must be at least 1",
                self.queue
            )));
        }
        Ok(())
    }
}

impl PurgeQueueRequest {
    /// Checks the queue name.
    pub fn validate(&self) -> Result<()> {
        validate_name("queue name", &self.queue)
    }
}

/// Pause, limits, purges and revocation, all persisted and namespace-scoped.
#[async_trait::async_trait]
pub trait QueueControl: Send + Sync {
    /// Pauses a queue for every worker.
    async fn pause(&self, queue: &str) -> Result<()>;
    /// Resumes a queue.
    async fn resume(&self, queue: &str) -> Result<()>;
    /// Paused queues, sorted.
    async fn paused_queues(&self) -> Result<Vec<String>>;
    /// Sets or clears a queue's rate limit.
    async fn set_rate_limit(&self, req: SetRateLimitRequest) -> Result<()>;
    /// Sets or clears a queue's concurrency cap (at least 1).
    async fn set_concurrency(&self, req: SetConcurrencyRequest) -> Result<()>;
    /// Sets or clears a queue's stall budget (see [`QueueConfig::max_stalled_count`]).
    async fn set_max_stalled(&self, req: SetMaxStalledRequest) -> Result<()>;
    /// A queue's controls (defaults for an unknown queue).
    async fn queue_config(&self, queue: &str) -> Result<QueueConfig>;
    /// Cancels every pending (and delayed, waiting or suspended) job of a queue; rows stay.
    async fn purge_queue(&self, req: PurgeQueueRequest) -> Result<u64>;
    /// Refuses future enqueues of a task (`TaskRevoked`); its pending jobs still run.
    async fn revoke_task(&self, task: &str) -> Result<()>;
    /// Lifts a revocation; false when the task was not revoked.
    async fn unrevoke_task(&self, task: &str) -> Result<bool>;
    /// Revoked tasks, sorted.
    async fn revoked_tasks(&self) -> Result<Vec<String>>;
    /// Deletes completed jobs finished before `cutoff_ms`; returns how many.
    async fn purge_completed(&self, req: PurgeCompletedRequest) -> Result<u64>;
}
