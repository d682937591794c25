//! Queue administration: removing jobs by status, age or queue, moving finished jobs back to
//! pending, and the limits an operator asks about.
//!
//! Every removal takes the job with everything kept about it (errors, logs, partials, its
//! dead-letter entry, dependency edges), in the same transaction or script, so no half-removed
//! job is ever visible. A job that others wait on can be removed: its waiting dependents drop
//! the edge to it and start as soon as their remaining dependencies allow, exactly as if it had
//! never been one. Running jobs are never removed by `clean`, `drain` or `remove`; `obliterate`
//! removes them only with `force`, and their late acks are then `Superseded`.

use crate::error::{Error, Result};
use crate::filter::validate_limit;
use crate::id::JobId;
use crate::job::JobStatus;
use crate::options::validate_name;

/// Remove old jobs of one status from a queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanRequest {
    /// The queue.
    pub queue: String,
    /// Which jobs: any status but `running`.
    pub status: JobStatus,
    /// Only jobs older than this (ms): finished longer ago for finished statuses (completed,
    /// failed, dead, cancelled), created longer ago for the others.
    pub grace_ms: u64,
    /// Most jobs removed (1 to `MAX_PAGE`), oldest first.
    pub limit: u32,
    /// Unix ms.
    pub now: i64,
}

/// Remove a queue's jobs that wait to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainRequest {
    /// The queue.
    pub queue: String,
    /// Also the pending jobs whose `run_at` is still ahead (delayed); otherwise only due ones.
    pub include_delayed: bool,
    /// Unix ms.
    pub now: i64,
}

/// Remove a queue and everything in it, a page at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObliterateRequest {
    /// The queue.
    pub queue: String,
    /// Remove running jobs too; without it a queue with running jobs is refused (`Conflict`).
    pub force: bool,
    /// Most jobs removed by this call (1 to `MAX_PAGE`).
    pub count: u32,
    /// Unix ms.
    pub now: i64,
}

/// Move finished jobs of a queue back to pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryJobsRequest {
    /// The queue.
    pub queue: String,
    /// `failed`, `dead` or `completed`.
    pub status: JobStatus,
    /// Most jobs moved (1 to `MAX_PAGE`), oldest finished first.
    pub count: u32,
    /// Unix ms.
    pub now: i64,
}

/// Remove one job, and optionally what it waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoveJobRequest {
    /// The job.
    pub job_id: JobId,
    /// Also remove its children: the jobs it depends on, transitively, that no job outside
    /// the removal depends on.
    pub remove_children: bool,
    /// Unix ms.
    pub now: i64,
}

/// How long until a rate-limited queue grants its next claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimitTtlRequest {
    /// The queue.
    pub queue: String,
    /// Unix ms.
    pub now: i64,
}

/// What a `remove` removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    /// Every job removed: the job first, then its removed children.
    pub jobs: Vec<JobId>,
}

fn check_queue(queue: &str) -> Result<()> {
    validate_name("queue name", queue)
}

/// Checks a count or limit of 1 to `MAX_PAGE`, named `what` in the error.
pub(crate) fn check_count(what: &str, n: u32) -> Result<()> {
    validate_limit(i64::from(n))
        .map(|_| ())
        .map_err(|_| Error::invalid(format!("{what} {n} must be between 1 and {}", crate::filter::MAX_PAGE)))
}

impl CleanRequest {
    /// Checks the queue, that the status is not `running`, and the limit.
    pub fn validate(&self) -> Result<()> {
        check_queue(&self.queue)?;
        if self.status == JobStatus::Running {
            return Err(Error::invalid(format!(
                "status running cannot be cleaned in queue {}: cancel or obliterate running jobs",
                self.queue
            )));
        }
        check_count("limit", self.limit)
    }
}

impl DrainRequest {
    /// Checks the queue.
    pub fn validate(&self) -> Result<()> {
        check_queue(&self.queue)
    }
}

impl ObliterateRequest {
    /// Checks the queue and the count.
    pub fn validate(&self) -> Result<()> {
        check_queue(&self.queue)?;
        check_count("count", self.count)
    }
}

impl RetryJobsRequest {
    /// Checks the queue, that the status is a finished one that can run again, and the count.
    pub fn validate(&self) -> Result<()> {
        check_queue(&self.queue)?;
        if !matches!(self.status, JobStatus::Failed | JobStatus::Dead | JobStatus::Completed) {
            return Err(Error::invalid(format!(
                "status {} cannot be retried in queue {}: only failed, dead or completed jobs",
                self.status.as_str(),
                self.queue
            )));
        }
        check_count("count", self.count)
    }
}

impl RateLimitTtlRequest {
    /// Checks the queue.
    pub fn validate(&self) -> Result<()> {
        check_queue(&self.queue)
    }
}

/// Removing jobs by status, age or queue, retrying finished jobs, and the rate-limit window.
#[async_trait::async_trait]
pub trait Admin: Send + Sync {
    /// Removes up to `limit` jobs of `status` in the queue older than `grace_ms`, oldest first;
    /// returns their ids.
    async fn clean(&self, req: CleanRequest) -> Result<Vec<JobId>>;

    /// Removes the queue's pending jobs that are due (with `include_delayed`, every pending
    /// job); returns how many. Waiting, suspended and running jobs stay.
    async fn drain(&self, req: DrainRequest) -> Result<u64>;

    /// Removes up to `count` jobs of the queue, any status (running only with `force`, else
    /// `Conflict` naming the queue and nothing removed), with their dead letters and archived
    /// copies; returns how many of its jobs are left. The call that leaves none also removes
    /// the queue's controls (pause, limits, caps) and counts, so 0 means no trace is left.
    async fn obliterate(&self, req: ObliterateRequest) -> Result<u64>;

    /// Removes what no job owns any more: history rows (errors, logs, partials, edges) of
    /// jobs that are gone, and on key-value stores job records no status index holds and index
    /// entries of records that are gone; returns how many were removed.
    async fn remove_orphans(&self) -> Result<u64>;

    /// Moves up to `count` jobs of `status` in the queue, oldest finished first, back to
    /// pending now: same id, attempt 0, a fresh retry budget, no result, error or worker
    /// (dead jobs leave the dead-letter queue); returns how many moved, 0 when none are left.
    async fn retry_jobs(&self, req: RetryJobsRequest) -> Result<u64>;

    /// Removes the job (and with `remove_children` its children); `NotFound` for an unknown
    /// id, `Conflict` naming the job when it or a child to remove is running, and then nothing
    /// is removed.
    async fn remove_job(&self, req: RemoveJobRequest) -> Result<Removed>;

    /// Milliseconds until the queue's rate limit grants another claim: 0 when it has no
    /// limit or a claim is free now.
    async fn rate_limit_ttl(&self, req: RateLimitTtlRequest) -> Result<u64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid<T: std::fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(Error::InvalidArgument(m)) => m,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn admin_requests_are_checked() {
        let clean =
            CleanRequest { queue: "q".into(), status: JobStatus::Completed, grace_ms: 0, limit: 10, now: 0 };
        clean.validate().unwrap();
        assert!(invalid(CleanRequest { status: JobStatus::Running, ..clean.clone() }.validate())
            .contains("running"));
        assert!(invalid(CleanRequest { limit: 0, ..clean.clone() }.validate()).contains("limit 0"));
        assert!(invalid(CleanRequest { limit: 10_001, ..clean.clone() }.validate()).contains("limit"));
        assert!(invalid(CleanRequest { queue: String::new(), ..clean }.validate()).contains("queue name"));
        let ob = ObliterateRequest { queue: "q".into(), force: false, count: 100, now: 0 };
        ob.validate().unwrap();
        assert!(invalid(ObliterateRequest { count: 0, ..ob }.validate()).contains("count 0"));
        let retry = RetryJobsRequest { queue: "q".into(), status: JobStatus::Dead, count: 5, now: 0 };
        retry.validate().unwrap();
        for bad in [JobStatus::Pending, JobStatus::Running, JobStatus::Waiting, JobStatus::Cancelled] {
            assert!(
                invalid(RetryJobsRequest { status: bad, ..retry.clone() }.validate()).contains(bad.as_str())
            );
        }
        DrainRequest { queue: "q".into(), include_delayed: true, now: 0 }.validate().unwrap();
        invalid(RateLimitTtlRequest { queue: "\u{0}".into(), now: 0 }.validate());
    }
}
