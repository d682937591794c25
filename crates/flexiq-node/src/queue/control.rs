//! Queue control on `NativeQueue`: pause and resume, limits, stall budgets, purges, task
//! revocation and forcing a stuck job back to pending.
//!
//! Pauses, rate limits, concurrency caps, stall budgets and revocations are single-row
//! writes, persisted and shared by every worker of the namespace, so they are synchronous, as
//! is `requeueJob`; `purge` cancels a whole backlog and `purgeCompleted` deletes, so they
//! return Promises.

use flexiq_core::store::PurgeCompletedRequest;
use napi::bindgen_prelude::block_on;
use napi_derive::napi;

use super::cutoff;
use crate::args;
use crate::error::{IntoNapi, Result};
use crate::queue::NativeQueue;

/// A queue's persisted controls.
#[napi(object)]
pub struct QueueControls {
    /// Whether the queue is paused.
    pub paused: bool,
    /// Its rate limit as `"N/s"`, `"N/m"` or `"N/h"`; `null` when unlimited.
    pub rate_limit: Option<String>,
    /// Most of its jobs running at once across all workers; `null` when uncapped.
    pub concurrency: Option<u32>,
    /// Stalls (lapsed leases) a job of it recovers from before it fails with `STALLED`;
    /// `null` when none is set (the default of 1 applies).
    pub max_stalled_count: Option<u32>,
}

#[napi]
impl NativeQueue {
    /// Limits claims from a queue across all workers: `"N/s"`, `"N/m"` or `"N/h"` (N a whole
    /// number, 1 or more). Checked by the scheduler before per-task limits. Synchronous.
    #[napi]
    pub fn set_queue_rate_limit(&self, queue: String, rate_limit: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.set_queue_rate_limit(&queue, &rate_limit)).napi()
    }

    /// Removes a queue's rate limit (a queue without one is fine). Synchronous.
    #[napi]
    pub fn clear_queue_rate_limit(&self, queue: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.clear_queue_rate_limit(&queue)).napi()
    }

    /// Caps how many jobs of a queue run at once across all workers (a whole number, 1 to
    /// 1,000,000). Synchronous.
    #[napi]
    pub fn set_queue_concurrency(&self, queue: String, max_concurrent: f64) -> Result<()> {
        let n = args::int("maxConcurrent", max_concurrent, 1, 1_000_000)?;
        let q = self.queue()?;
        block_on(q.set_queue_concurrency(&queue, n)).napi()
    }

    /// Removes a queue's concurrency cap. Synchronous.
    #[napi]
    pub fn clear_queue_concurrency(&self, queue: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.clear_queue_concurrency(&queue)).napi()
    }

    /// Sets how many stalls (lapsed leases) a job of `queue` recovers from before it fails
    /// with `STALLED` (a whole number, 0 to 10,000; 0 fails the first stall). Synchronous.
    #[napi]
    pub fn set_queue_max_stalled(&self, queue: String, max_stalled_count: f64) -> Result<()> {
        let n = args::non_negative("maxStalledCount", max_stalled_count)?;
        let q = self.queue()?;
        block_on(q.set_queue_max_stalled(&queue, n)).napi()
    }

    /// Restores a queue's stall budget to the default (1). Synchronous.
    #[napi]
    pub fn clear_queue_max_stalled(&self, queue: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.clear_queue_max_stalled(&queue)).napi()
    }

    /// A queue's pause flag, rate limit, concurrency cap and stall budget (defaults for a
    /// queue never configured). Synchronous.
    #[napi]
    pub fn queue_config(&self, queue: String) -> Result<QueueControls> {
        let q = self.queue()?;
        let c = block_on(q.queue_config(&queue)).napi()?;
        Ok(QueueControls {
            paused: c.paused,
            rate_limit: c.rate_limit.map(|l| l.to_string()),
            concurrency: c.concurrency,
            max_stalled_count: c.max_stalled_count,
        })
    }

    /// Cancels every pending job of a queue; resolves to how many. The rows stay
    /// (inspectable, history kept); running jobs are untouched.
    #[napi]
    pub async fn purge(&self, queue: String) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.purge(&queue).await.napi()? as f64)
    }

    /// Refuses every future enqueue of a task (and dead-letter retries and replays of it)
    /// with `TASK_REVOKED`. Jobs of the task already pending still run. Synchronous.
    #[napi]
    pub fn revoke_task(&self, task_name: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.revoke_task(&task_name)).napi()
    }

    /// Lifts a revocation; `false` when the task was not revoked. Synchronous.
    #[napi]
    pub fn unrevoke_task(&self, task_name: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.unrevoke_task(&task_name)).napi()
    }

    /// The revoked task names of the namespace, sorted. Synchronous.
    #[napi]
    pub fn revoked_tasks(&self) -> Result<Vec<String>> {
        let q = self.queue()?;
        block_on(q.revoked_tasks()).napi()
    }
}

#[napi]
impl NativeQueue {
    /// Pauses a queue for every worker of the namespace (running jobs are unaffected).
    #[napi]
    pub fn pause_queue(&self, queue: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.pause_queue(&queue)).napi()
    }

    /// Resumes a paused queue.
    #[napi]
    pub fn resume_queue(&self, queue: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.resume_queue(&queue)).napi()
    }

    /// Every paused queue of the namespace, sorted.
    #[napi]
    pub fn list_paused_queues(&self) -> Result<Vec<String>> {
        let q = self.queue()?;
        block_on(q.list_paused_queues()).napi()
    }

    /// Deletes completed jobs that finished more than `olderThanMs` milliseconds ago;
    /// resolves to how many.
    #[napi]
    pub async fn purge_completed(&self, older_than_ms: f64) -> Result<f64> {
        let q = self.queue()?;
        let cutoff = cutoff(&q, older_than_ms)?;
        Ok(q.store().purge_completed(PurgeCompletedRequest { cutoff_ms: cutoff }).await.napi()? as f64)
    }

    /// Forces a stuck running job back to pending, keeping its retry budget. `false` when the
    /// job is missing or not running. Synchronous.
    #[napi]
    pub fn requeue_job(&self, id: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.requeue_job(&id)).napi()
    }
}
