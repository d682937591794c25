//! Queue control: pause, resume, rate limits, concurrency caps, purges, revocation and the
//! operator's requeue of a stuck job. All of it is persisted and namespace-scoped.

use flexiq_core::options::validate_name;
use flexiq_core::store::{
    PurgeCompletedRequest, PurgeQueueRequest, QueueConfig, RequeueRequest, SetConcurrencyRequest,
    SetMaxStalledRequest, SetRateLimitRequest,
};
use flexiq_core::RateLimit;

use super::{parse_id, secs_to_ms, Queue};
use crate::error::{Error, Result};

/// Largest concurrency cap accepted.
const MAX_QUEUE_CONCURRENCY: i64 = 1_000_000;

impl Queue {
    /// Pauses a queue for every worker of the namespace (running jobs are unaffected).
    pub async fn pause(&self, queue: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        self.store.pause(queue).await?;
        tracing::info!(queue, "paused queue");
        Ok(())
    }

    /// Alias of [`Queue::pause`].
    pub async fn pause_queue(&self, queue: &str) -> Result<()> {
        self.pause(queue).await
    }

    /// Resumes a paused queue.
    pub async fn resume(&self, queue: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        self.store.resume(queue).await?;
        tracing::info!(queue, "resumed queue");
        Ok(())
    }

    /// Alias of [`Queue::resume`].
    pub async fn resume_queue(&self, queue: &str) -> Result<()> {
        self.resume(queue).await
    }

    /// Every paused queue of the namespace, sorted.
    pub async fn paused_queues(&self) -> Result<Vec<String>> {
        Ok(self.store.paused_queues().await?)
    }

    /// Alias of [`Queue::paused_queues`].
    pub async fn list_paused_queues(&self) -> Result<Vec<String>> {
        self.paused_queues().await
    }

    /// Limits claims from a queue across all workers: `"N/s"`, `"N/m"` or `"N/h"`.
    pub async fn set_queue_rate_limit(&self, queue: &str, rate_limit: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        let limit = RateLimit::parse(rate_limit)?;
        Ok(self
            .store
            .set_rate_limit(SetRateLimitRequest { queue: queue.to_string(), limit: Some(limit) })
            .await?)
    }

    /// Removes a queue's rate limit.
    pub async fn clear_queue_rate_limit(&self, queue: &str) -> Result<()> {
        Ok(self.store.set_rate_limit(SetRateLimitRequest { queue: queue.to_string(), limit: None }).await?)
    }

    /// Caps the jobs of a queue running at once across all workers (at least 1).
    pub async fn set_queue_concurrency(&self, queue: &str, max_concurrent: i64) -> Result<()> {
        validate_name("queue name", queue)?;
        if !(1..=MAX_QUEUE_CONCURRENCY).contains(&max_concurrent) {
            return Err(Error::invalid(format!(
                "concurrency {max_concurrent} of queue {queue} must be between 1 and {MAX_QUEUE_CONCURRENCY}"
            )));
        }
        let req = SetConcurrencyRequest { queue: queue.to_string(), max: Some(max_concurrent as u32) };
        Ok(self.store.set_concurrency(req).await?)
    }

    /// Removes a queue's concurrency cap.
    pub async fn clear_queue_concurrency(&self, queue: &str) -> Result<()> {
        Ok(self.store.set_concurrency(SetConcurrencyRequest { queue: queue.to_string(), max: None }).await?)
    }

    /// Sets how many stalls (lapsed leases) a job of `queue` recovers from before it fails
    /// with `STALLED` (0 to 10,000; 0 fails the first stall).
    pub async fn set_queue_max_stalled(&self, queue: &str, max_stalled_count: i64) -> Result<()> {
        let max = u32::try_from(max_stalled_count).map_err(|_| {
            Error::invalid(format!(
                "max_stalled_count {max_stalled_count} of queue {queue} must not be negative"
            ))
        })?;
        let req = SetMaxStalledRequest { queue: queue.to_string(), max: Some(max) };
        req.validate()?;
        Ok(self.store.set_max_stalled(req).await?)
    }

    /// Restores a queue's stall budget to the default (1).
    pub async fn clear_queue_max_stalled(&self, queue: &str) -> Result<()> {
        let req = SetMaxStalledRequest { queue: queue.to_string(), max: None };
        req.validate()?;
        Ok(self.store.set_max_stalled(req).await?)
    }

    /// A queue's persisted controls (defaults for a queue never configured).
    pub async fn queue_config(&self, queue: &str) -> Result<QueueConfig> {
        validate_name("queue name", queue)?;
        Ok(self.store.queue_config(queue).await?)
    }

    /// Cancels every pending job of a queue (rows stay); returns how many.
    pub async fn purge(&self, queue: &str) -> Result<u64> {
        let n = self
            .store
            .purge_queue(PurgeQueueRequest { queue: queue.to_string(), now: self.now_ms() })
            .await?;
        tracing::info!(queue, cancelled = n, "purged queue");
        Ok(n)
    }

    /// Alias of [`Queue::purge`].
    pub async fn purge_queue(&self, queue: &str) -> Result<u64> {
        self.purge(queue).await
    }

    /// Refuses every future enqueue of a task with `TaskRevoked` (and retries of its dead
    /// letters and replays of its jobs). Jobs of the task already pending are not affected:
    /// workers still claim and run them.
    pub async fn revoke_task(&self, task: &str) -> Result<()> {
        validate_name("task name", task)?;
        self.store.revoke_task(task).await?;
        tracing::info!(task, "revoked task");
        Ok(())
    }

    /// Lifts a revocation so the task may be enqueued again; false when it was not revoked.
    pub async fn unrevoke_task(&self, task: &str) -> Result<bool> {
        validate_name("task name", task)?;
        let lifted = self.store.unrevoke_task(task).await?;
        if lifted {
            tracing::info!(task, "unrevoked task");
        }
        Ok(lifted)
    }

    /// The revoked task names in this namespace, sorted.
    pub async fn revoked_tasks(&self) -> Result<Vec<String>> {
        Ok(self.store.revoked_tasks().await?)
    }

    /// Deletes completed jobs that finished more than `older_than_secs` seconds ago; returns
    /// how many.
    pub async fn purge_completed(&self, older_than_secs: i64) -> Result<u64> {
        let cutoff = self.now_ms().saturating_sub(secs_to_ms("older_than", older_than_secs)?);
        Ok(self.store.purge_completed(PurgeCompletedRequest { cutoff_ms: cutoff }).await?)
    }

    /// Forces a stuck running job back to pending, keeping its retry budget. False when the
    /// job is unknown or not running. Only for jobs whose worker is known to be dead.
    pub async fn requeue_job(&self, id: &str) -> Result<bool> {
        let id = parse_id(id)?;
        let done = self.store.requeue(RequeueRequest { id: id.clone(), now: self.now_ms() }).await?;
        if done {
            tracing::warn!(job_id = %id, "requeued running job by hand");
        }
        Ok(done)
    }
}
