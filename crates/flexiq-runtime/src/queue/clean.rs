//! Removing and re-running jobs in bulk: clean by status and age, drain, obliterate in pages,
//! remove one job (with its children), retry finished jobs, and orphan removal.
//!
//! These are operator tools, so every count and age is checked here before a store sees it
//! (negative, NaN-like or out-of-range numbers from the SDKs are `InvalidArgument` naming the
//! argument) and every call logs what it removed. Milliseconds throughout, as the backend
//! contract names them (`grace_ms`).

use flexiq_core::options::validate_name;
use flexiq_core::store::{CleanRequest, DrainRequest, ObliterateRequest, RemoveJobRequest, RetryJobsRequest};
use flexiq_core::{JobId, JobStatus};

use super::{parse_id, Queue};
use crate::error::{Error, Result};

/// Parses a status name given by a caller.
fn parse_status(status: &str) -> Result<JobStatus> {
    Ok(status.parse::<JobStatus>()?)
}

/// A count or limit of 1 to `MAX_PAGE`, named `what`.
pub(super) fn page_count(what: &str, n: i64) -> Result<u32> {
    let max = i64::from(flexiq_core::filter::MAX_PAGE);
    if !(1..=max).contains(&n) {
        return Err(Error::invalid(format!("{what} {n} must be between 1 and {max}")));
    }
    Ok(n as u32)
}

impl Queue {
    /// Removes up to `limit` jobs of `status` in `queue` that finished (for completed, failed,
    /// dead and cancelled) or were created (for the others) at least `grace_ms` ago, oldest
    /// first, with their history; returns their ids. Jobs waiting on a removed job drop the
    /// edge. `InvalidArgument` for `running` (cancel or obliterate those), an unknown status, a
    /// negative grace or a limit outside 1 to 10,000.
    pub async fn clean(&self, queue: &str, status: &str, grace_ms: i64, limit: i64) -> Result<Vec<JobId>> {
        let status = parse_status(status)?;
        let grace_ms = u64::try_from(grace_ms)
            .map_err(|_| Error::invalid(format!("grace_ms {grace_ms} must not be negative")))?;
        let limit = page_count("limit", limit)?;
        let req = CleanRequest { queue: queue.to_string(), status, grace_ms, limit, now: self.now_ms() };
        req.validate()?;
        let ids = self.store.clean(req).await?;
        tracing::info!(queue, status = status.as_str(), removed = ids.len(), "cleaned queue");
        Ok(ids)
    }

    /// Removes the pending jobs of `queue` that are due, and with `include_delayed` the
    /// delayed ones too; returns how many. Waiting, suspended and running jobs stay.
    pub async fn drain(&self, queue: &str, include_delayed: bool) -> Result<u64> {
        let req = DrainRequest { queue: queue.to_string(), include_delayed, now: self.now_ms() };
        req.validate()?;
        let n = self.store.drain(req).await?;
        tracing::info!(queue, include_delayed, removed = n, "drained queue");
        Ok(n)
    }

    /// Removes up to `count` jobs of `queue`, whatever their status, with their dead letters
    /// and archived copies; returns how many are left, and once none are the queue's
    /// controls and counts go too (0: nothing of the queue is left). Call again until 0.
    /// `Conflict` naming the queue while jobs run, unless `force` (their late acks are then
    /// `Superseded`).
    pub async fn obliterate(&self, queue: &str, force: bool, count: i64) -> Result<u64> {
        let count = page_count("count", count)?;
        let req = ObliterateRequest { queue: queue.to_string(), force, count, now: self.now_ms() };
        req.validate()?;
        let left = self.store.obliterate(req).await?;
        tracing::warn!(queue, force, left, "obliterated a page of a queue");
        Ok(left)
    }

    /// Removes history rows and records no job owns any more; returns how many.
    pub async fn remove_orphans(&self) -> Result<u64> {
        let n = self.store.remove_orphans().await?;
        tracing::info!(removed = n, "removed orphans");
        Ok(n)
    }

    /// Moves up to `count` jobs of `status` (`failed`, `dead` or `completed`) in `queue`,
    /// oldest finished first, back to pending now with a fresh retry budget (same ids);
    /// returns how many moved, 0 when none are left.
    pub async fn retry_jobs(&self, queue: &str, status: &str, count: i64) -> Result<u64> {
        let status = parse_status(status)?;
        let count = page_count("count", count)?;
        let req = RetryJobsRequest { queue: queue.to_string(), status, count, now: self.now_ms() };
        req.validate()?;
        let n = self.store.retry_jobs(req).await?;
        tracing::info!(queue, status = status.as_str(), moved = n, "retried finished jobs");
        Ok(n)
    }

    /// Removes a job with its history, and with `remove_children` the jobs it waits on
    /// (transitively) that no other job waits on; returns every id removed, the job first.
    /// `NotFound` for an unknown id, `Conflict` naming the job when it or a child to remove is
    /// running (then nothing is removed).
    pub async fn remove(&self, job_id: &str, remove_children: bool) -> Result<Vec<JobId>> {
        let id = parse_id(job_id)?;
        let req = RemoveJobRequest { job_id: id, remove_children, now: self.now_ms() };
        let removed = self.store.remove_job(req).await?;
        tracing::info!(job_id, removed = removed.jobs.len(), "removed job");
        Ok(removed.jobs)
    }

    /// Whether `queue` has a concurrency cap and as many jobs running as it allows.
    pub async fn is_maxed(&self, queue: &str) -> Result<bool> {
        validate_name("queue name", queue)?;
        let Some(cap) = self.store.queue_config(queue).await?.concurrency else {
            return Ok(false);
        };
        Ok(self.store.stats(Some(queue)).await?.running >= u64::from(cap))
    }

    /// Milliseconds until `queue`'s rate limit grants another claim (0 without a limit or
    /// when a claim is free now).
    pub async fn rate_limit_ttl(&self, queue: &str) -> Result<u64> {
        let req = flexiq_core::store::RateLimitTtlRequest { queue: queue.to_string(), now: self.now_ms() };
        req.validate()?;
        Ok(self.store.rate_limit_ttl(req).await?)
    }
}
