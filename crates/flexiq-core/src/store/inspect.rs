//! Read-side listings and counts.

use std::collections::BTreeMap;

use crate::cursor::Page;
use crate::error::Result;
use crate::filter::JobFilter;
use crate::history::{JobDag, JobError};
use crate::id::JobId;
use crate::job::{Job, JobStatus};
use crate::stats::Stats;

/// An offset page of jobs matching a filter.
#[derive(Debug, Clone, PartialEq)]
pub struct ListJobsRequest {
    /// Which jobs.
    pub filter: JobFilter,
    /// Page size (1 to `MAX_PAGE`).
    pub limit: u32,
    /// Rows to skip.
    pub offset: u64,
}

/// A keyset page of jobs matching a filter.
#[derive(Debug, Clone, PartialEq)]
pub struct ListJobsAfterRequest {
    /// Which jobs.
    pub filter: JobFilter,
    /// Page size (1 to `MAX_PAGE`).
    pub limit: u32,
    /// The previous page's cursor (bound to this filter); `None` for the first page.
    pub after: Option<String>,
}

/// An offset page of archived jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListArchivedRequest {
    /// Page size (1 to `MAX_PAGE`).
    pub limit: u32,
    /// Rows to skip.
    pub offset: u64,
}

/// A keyset page of archived jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListArchivedAfterRequest {
    /// Page size (1 to `MAX_PAGE`).
    pub limit: u32,
    /// The previous page's cursor; `None` for the first page.
    pub after: Option<String>,
}

impl ListJobsRequest {
    /// Checks the page size and offset.
    pub fn validate(&self) -> Result<()> {
        check_page(self.limit, Some(self.offset))
    }
}

impl ListJobsAfterRequest {
    /// Checks the page size.
    pub fn validate(&self) -> Result<()> {
        check_page(self.limit, None)
    }
}

impl ListArchivedRequest {
    /// Checks the page size and offset.
    pub fn validate(&self) -> Result<()> {
        check_page(self.limit, Some(self.offset))
    }
}

impl ListArchivedAfterRequest {
    /// Checks the page size.
    pub fn validate(&self) -> Result<()> {
        check_page(self.limit, None)
    }
}

/// The one page-size and offset rule of every listing.
pub(crate) fn check_page(limit: u32, offset: Option<u64>) -> Result<()> {
    crate::filter::validate_limit(i64::from(limit))?;
    if let Some(o) = offset {
        if i64::try_from(o).is_err() {
            return Err(crate::Error::invalid(format!("offset {o} is too large")));
        }
    }
    Ok(())
}

/// Listings, counts and the job graph.
#[async_trait::async_trait]
pub trait Inspect: Send + Sync {
    /// Jobs matching `filter`, newest first (created_at, then id), offset-paginated.
    async fn list_jobs(&self, req: ListJobsRequest) -> Result<Vec<Job>>;

    /// The keyset twin of [`Inspect::list_jobs`]: same order, `after` is the previous page's
    /// cursor (bound to this filter).
    async fn list_jobs_after(&self, req: ListJobsAfterRequest) -> Result<Page<Job>>;

    /// Counts by status, over one queue or the whole namespace.
    async fn stats(&self, queue: Option<&str>) -> Result<Stats>;

    /// Counts per queue that holds jobs.
    async fn stats_by_queue(&self) -> Result<BTreeMap<String, Stats>>;

    /// Counts per known queue, including queues with no jobs (known from enqueues and queue
    /// control).
    async fn stats_all_queues(&self) -> Result<BTreeMap<String, Stats>>;

    /// Pending jobs on one queue (index-backed; the `max_pending` number).
    async fn count_pending(&self, queue: &str) -> Result<u64>;

    /// A live job's status alone: one field read by primary key, cheaper than
    /// [`crate::store::JobStore::get`]. `None` for an id no live job carries, an archived job
    /// included (archives are read with [`Inspect::list_archived`]).
    async fn job_status(&self, id: &JobId) -> Result<Option<JobStatus>>;

    /// Every failed attempt of a job, oldest first; `NotFound` when unknown.
    async fn job_errors(&self, id: &JobId) -> Result<Vec<JobError>>;

    /// The dependency graph reachable from a job in both directions; `NotFound` naming the id
    /// when no job carries it.
    async fn job_dag(&self, id: &JobId) -> Result<JobDag>;

    /// Archived jobs, newest first by finish time, offset-paginated.
    async fn list_archived(&self, req: ListArchivedRequest) -> Result<Vec<Job>>;

    /// The keyset twin of [`Inspect::list_archived`].
    async fn list_archived_after(&self, req: ListArchivedAfterRequest) -> Result<Page<Job>>;
}
