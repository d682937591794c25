//! Dead letters and queue control.

use crate::cursor::Page;
use crate::error::Result;
use crate::history::DeadJob;
use crate::id::JobId;
use crate::rate::RateLimit;

/// The dead-letter queue.
#[async_trait::async_trait]
pub trait DeadLetters: Send + Sync {
    /// Entries newest first, optionally of one task, offset-paginated.
    async fn dead_letters(&self, task: Option<&str>, limit: u32, offset: u64) -> Result<Vec<DeadJob>>;

    /// Keyset twin, newest first by failure time.
    async fn dead_letters_after(&self, limit: u32, after: Option<&str>) -> Result<Page<DeadJob>>;

    /// Re-enqueues the entry's job as a new job (fresh id and budget) and removes the entry;
    /// `NotFound` for an unknown entry id.
    async fn retry_dead(&self, dead_id: &str, now: i64) -> Result<JobId>;

    /// Removes one entry; false when unknown.
    async fn delete_dead(&self, dead_id: &str) -> Result<bool>;

    /// Removes entries that failed before `cutoff` (Unix ms); returns how many.
    async fn purge_dead(&self, cutoff: i64) -> Result<u64>;

    /// Removes every entry of one task; returns how many.
    async fn purge_dead_by_task(&self, task: &str) -> Result<u64>;
}

/// A queue's persisted controls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueConfig {
    /// Paused: claims skip it.
    pub paused: bool,
    /// Claims per window.
    pub rate_limit: Option<RateLimit>,
    /// Most running jobs across all workers.
    pub concurrency: Option<u32>,
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
    async fn set_rate_limit(&self, queue: &str, limit: Option<RateLimit>) -> Result<()>;
    /// Sets or clears a queue's concurrency cap (at least 1).
    async fn set_concurrency(&self, queue: &str, max: Option<u32>) -> Result<()>;
    /// A queue's controls (defaults for an unknown queue).
    async fn queue_config(&self, queue: &str) -> Result<QueueConfig>;
    /// Cancels every pending (and delayed, waiting or suspended) job of a queue; rows stay.
    async fn purge_queue(&self, queue: &str, now: i64) -> Result<u64>;
    /// Refuses future enqueues of a task and stops claims of it.
    async fn revoke_task(&self, task: &str) -> Result<()>;
    /// Lifts a revocation; false when the task was not revoked.
    async fn unrevoke_task(&self, task: &str) -> Result<bool>;
    /// Revoked tasks, sorted.
    async fn revoked_tasks(&self) -> Result<Vec<String>>;
    /// Deletes completed jobs finished before `cutoff` (Unix ms); returns how many.
    async fn purge_completed(&self, cutoff: i64) -> Result<u64>;
}
