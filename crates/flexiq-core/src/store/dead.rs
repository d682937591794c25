//! The dead-letter queue: listing, retrying and purging jobs that ran out of retries.

use crate::cursor::Page;
use crate::error::Result;
use crate::history::DeadJob;
use crate::id::JobId;
use crate::store::inspect::check_page;

/// An offset page of dead letters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLettersRequest {
    /// Only entries of this task.
    pub task: Option<String>,
    /// Page size (1 to `MAX_PAGE`).
    pub limit: u32,
    /// Rows to skip.
    pub offset: u64,
}

/// A keyset page of dead letters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLettersAfterRequest {
    /// Page size (1 to `MAX_PAGE`).
    pub limit: u32,
    /// The previous page's cursor; `None` for the first page.
    pub after: Option<String>,
}

/// Re-enqueue a dead letter's job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryDeadRequest {
    /// The entry.
    pub dead_id: String,
    /// Unix ms.
    pub now: i64,
}

/// Remove dead letters that failed before a cutoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PurgeDeadRequest {
    /// Entries that failed before this time (Unix ms) go.
    pub cutoff_ms: i64,
}

impl DeadLettersRequest {
    /// Checks the page size and offset.
    pub fn validate(&self) -> Result<()> {
        check_page(self.limit, Some(self.offset))
    }
}

impl DeadLettersAfterRequest {
    /// Checks the page size.
    pub fn validate(&self) -> Result<()> {
        check_page(self.limit, None)
    }
}

/// The dead-letter queue.
#[async_trait::async_trait]
pub trait DeadLetters: Send + Sync {
    /// Entries newest first, optionally of one task, offset-paginated.
    async fn dead_letters(&self, req: DeadLettersRequest) -> Result<Vec<DeadJob>>;

    /// Keyset twin, newest first by failure time.
    async fn dead_letters_after(&self, req: DeadLettersAfterRequest) -> Result<Page<DeadJob>>;

    /// Re-enqueues the entry's job as a new job (fresh id and budget) and removes the entry;
    /// `NotFound` for an unknown entry id. A workflow stage is the exception, since a (run,
    /// stage) pair holds one row: its own row is made pending again in place, as
    /// `upsert_stages` replaces a row (same id and claim sequence, attempt 0, no worker, lease or
    /// last error, run, stage, version and group kept, `run_at` now), and that id is returned.
    async fn retry_dead(&self, req: RetryDeadRequest) -> Result<JobId>;

    /// Removes one entry; false when unknown.
    async fn delete_dead(&self, dead_id: &str) -> Result<bool>;

    /// Removes entries that failed before `cutoff_ms`; returns how many.
    async fn purge_dead(&self, req: PurgeDeadRequest) -> Result<u64>;

    /// Removes every entry of one task; returns how many.
    async fn purge_dead_by_task(&self, task: &str) -> Result<u64>;
}
