//! Bulk removal and re-running on `NativeQueue`, as the runtime's `queue/clean.rs`: clean by
//! status and age, drain, obliterate in pages, remove one job (with its children), retry
//! finished jobs, orphan removal, and the two limit probes (`isMaxed`, `rateLimitTtl`).
//!
//! Every call scans or deletes many rows, so each returns a Promise. Numbers are checked
//! here for what a double can get wrong (NaN, fractions, beyond 2^53); ranges, statuses and
//! names are the runtime's to refuse, so every SDK says the same thing about them. `graceMs`
//! is milliseconds, as the backend contract names it.

use flexiq_core::JobId;
use napi_derive::napi;

use crate::args;
use crate::error::{IntoNapi, Result};
use crate::options::{ObliterateOptions, RemoveOptions};
use crate::queue::NativeQueue;

/// Jobs a clean, obliterate or retry call handles when the caller names no number.
const DEFAULT_PAGE: i64 = 1_000;

fn id_strings(ids: Vec<JobId>) -> Vec<String> {
    ids.into_iter().map(|id| id.to_string()).collect()
}

#[napi]
impl NativeQueue {
    /// Removes up to `limit` (1 to 10,000, default 1,000) jobs of `status` in `queue` that
    /// finished (completed, failed, dead, cancelled) or were created (the other statuses) at
    /// least `graceMs` milliseconds ago, oldest first, with their history; resolves to their
    /// ids. `running` is refused: cancel or obliterate those.
    #[napi]
    pub async fn clean(
        &self,
        queue: String,
        status: String,
        grace_ms: f64,
        limit: Option<f64>,
    ) -> Result<Vec<String>> {
        let grace_ms = args::non_negative("graceMs", grace_ms)?;
        let limit = args::page("limit", limit, DEFAULT_PAGE)?;
        let q = self.queue()?;
        Ok(id_strings(q.clean(&queue, &status, grace_ms, limit).await.napi()?))
    }

    /// Removes the pending jobs of `queue` that are due, and with `includeDelayed` (default
    /// `false`) the delayed ones too; resolves to how many. Waiting, suspended and running
    /// jobs stay.
    #[napi]
    pub async fn drain(&self, queue: String, include_delayed: Option<bool>) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.drain(&queue, include_delayed.unwrap_or(false)).await.napi()? as f64)
    }

    /// Removes up to `count` jobs of `queue` whatever their status, with their dead letters
    /// and archived copies; resolves to how many are left (0: nothing of the queue is left,
    /// its controls and counts included). Call again until 0. `CONFLICT` while jobs of the
    /// queue run, unless `force`.
    #[napi]
    pub async fn obliterate(&self, queue: String, options: Option<ObliterateOptions>) -> Result<f64> {
        let (force, count) = options.map_or((None, None), |o| (o.force, o.count));
        let count = args::page("count", count, DEFAULT_PAGE)?;
        let q = self.queue()?;
        Ok(q.obliterate(&queue, force.unwrap_or(false), count).await.napi()? as f64)
    }

    /// Removes history rows and records no job owns any more; resolves to how many.
    #[napi]
    pub async fn remove_orphans(&self) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.remove_orphans().await.napi()? as f64)
    }

    /// Moves up to `count` (1 to 10,000, default 1,000) jobs of `status` (`failed`, the
    /// default, `dead` or `completed`) in `queue`, oldest finished first, back to pending now
    /// with a fresh retry budget and the same ids; resolves to how many moved (0: none left).
    #[napi]
    pub async fn retry_jobs(&self, queue: String, status: Option<String>, count: Option<f64>) -> Result<f64> {
        let count = args::page("count", count, DEFAULT_PAGE)?;
        let status = status.unwrap_or_else(|| "failed".to_string());
        let q = self.queue()?;
        Ok(q.retry_jobs(&queue, &status, count).await.napi()? as f64)
    }

    /// Removes a job with its history, and with `removeChildren` (default `true`) the jobs it
    /// waits on (transitively) that no other job waits on; resolves to every id removed, the
    /// job first. `NOT_FOUND` for an unknown id; `CONFLICT` naming the job when it or a child
    /// to remove is running, and then nothing is removed.
    #[napi]
    pub async fn remove(&self, job_id: String, options: Option<RemoveOptions>) -> Result<Vec<String>> {
        let children = options.and_then(|o| o.remove_children).unwrap_or(true);
        let q = self.queue()?;
        Ok(id_strings(q.remove(&job_id, children).await.napi()?))
    }

    /// Whether `queue` has a concurrency cap and as many jobs running as it allows.
    #[napi]
    pub async fn is_maxed(&self, queue: String) -> Result<bool> {
        let q = self.queue()?;
        q.is_maxed(&queue).await.napi()
    }

    /// Milliseconds until `queue`'s rate limit grants another claim (0 without a limit or
    /// when a claim is free now).
    #[napi]
    pub async fn rate_limit_ttl(&self, queue: String) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.rate_limit_ttl(&queue).await.napi()? as f64)
    }
}
