//! Read-side listings and counts.

use std::collections::BTreeMap;

use crate::cursor::Page;
use crate::error::Result;
use crate::filter::JobFilter;
use crate::history::{JobDag, JobError};
use crate::id::JobId;
use crate::job::Job;
use crate::stats::Stats;

/// Listings, counts and the job graph.
#[async_trait::async_trait]
pub trait Inspect: Send + Sync {
    /// Jobs matching `filter`, newest first (created_at, then id), offset-paginated.
    async fn list_jobs(&self, filter: &JobFilter, limit: u32, offset: u64) -> Result<Vec<Job>>;

    /// The keyset twin of [`Inspect::list_jobs`]: same order, `after` is the previous page's
    /// cursor (bound to this filter).
    async fn list_jobs_after(&self, filter: &JobFilter, limit: u32, after: Option<&str>)
        -> Result<Page<Job>>;

    /// Counts by status, over one queue or the whole namespace.
    async fn stats(&self, queue: Option<&str>) -> Result<Stats>;

    /// Counts per queue that holds jobs.
    async fn stats_by_queue(&self) -> Result<BTreeMap<String, Stats>>;

    /// Counts per known queue, including queues with no jobs (known from enqueues and queue
    /// control).
    async fn stats_all_queues(&self) -> Result<BTreeMap<String, Stats>>;

    /// Pending jobs on one queue (index-backed; the `max_pending` number).
    async fn count_pending(&self, queue: &str) -> Result<u64>;

    /// Every failed attempt of a job, oldest first; `NotFound` when unknown.
    async fn job_errors(&self, id: &JobId) -> Result<Vec<JobError>>;

    /// The dependency graph reachable from a job in both directions; empty for an unknown id.
    async fn job_dag(&self, id: &JobId) -> Result<JobDag>;

    /// Archived jobs, newest first by finish time, offset-paginated.
    async fn list_archived(&self, limit: u32, offset: u64) -> Result<Vec<Job>>;

    /// The keyset twin of [`Inspect::list_archived`].
    async fn list_archived_after(&self, limit: u32, after: Option<&str>) -> Result<Page<Job>>;
}
