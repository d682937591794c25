//! Counts, metrics and the dead-letter queue on `NativeQueue`.
//!
//! `countPendingByQueue` is synchronous (index-backed, the `maxPending` number); the rest
//! scan and return Promises.

use std::collections::HashMap;

use napi::bindgen_prelude::block_on;
use napi_derive::napi;

use crate::args;
use crate::error::{invalid, IntoNapi, Result};
use crate::queue::NativeQueue;
use crate::types::{stats_map, DeadJob, DeadJobPage, Metric, Stats};

/// Default page size of dead-letter listings.
const DEFAULT_DEAD_LIMIT: i64 = 10;

fn dead(v: Vec<flexiq_core::DeadJob>) -> Vec<DeadJob> {
    v.into_iter().map(Into::into).collect()
}

/// `now - older_than_ms`, for the purges that take an age in ms.
pub(crate) fn cutoff(q: &flexiq_runtime::Queue, older_than_ms: f64) -> Result<i64> {
    let ms = args::millis("olderThanMs", older_than_ms)?;
    let ms = i64::try_from(ms).map_err(|_| invalid(format!("olderThanMs {ms} is too large")))?;
    Ok(q.now_ms().saturating_sub(ms))
}

#[napi]
impl NativeQueue {
    /// Jobs per status over the whole namespace.
    #[napi]
    pub async fn stats(&self) -> Result<Stats> {
        let q = self.queue()?;
        Ok(q.stats().await.napi()?.into())
    }

    /// Jobs per status on one queue.
    #[napi]
    pub async fn stats_by_queue(&self, queue: String) -> Result<Stats> {
        let q = self.queue()?;
        Ok(q.stats_for_queue(&queue).await.napi()?.into())
    }

    /// Jobs per status for every known queue, including queues with no jobs.
    #[napi]
    pub async fn stats_all_queues(&self) -> Result<HashMap<String, Stats>> {
        let q = self.queue()?;
        Ok(stats_map(q.stats_all_queues().await.napi()?))
    }

    /// Raw per-execution metric rows recorded at or after `sinceMs` (Unix ms), oldest first,
    /// optionally of one task.
    #[napi]
    pub async fn get_metrics(&self, since_ms: f64, task: Option<String>) -> Result<Vec<Metric>> {
        let since = args::unix_ms("sinceMs", since_ms)?;
        let q = self.queue()?;
        Ok(q.get_metrics(since, task.as_deref()).await.napi()?.into_iter().map(Into::into).collect())
    }

    /// Pending jobs waiting on one queue: the number the `maxPending` cap is compared
    /// against. Synchronous and index-backed.
    #[napi]
    pub fn count_pending_by_queue(&self, queue: String) -> Result<f64> {
        let q = self.queue()?;
        Ok(block_on(q.count_pending_by_queue(&queue)).napi()? as f64)
    }

    /// Dead letters, newest first (`limit` default 10, `offset` default 0).
    #[napi]
    pub async fn dead_letters(&self, limit: Option<f64>, offset: Option<f64>) -> Result<Vec<DeadJob>> {
        let (limit, offset) = (args::limit(limit, DEFAULT_DEAD_LIMIT)?, args::offset(offset)?);
        let q = self.queue()?;
        Ok(dead(q.dead_letters(limit, offset).await.napi()?))
    }

    /// Dead letters of one task, newest first.
    #[napi]
    pub async fn dead_letters_by_task(
        &self,
        task_name: String,
        limit: Option<f64>,
        offset: Option<f64>,
    ) -> Result<Vec<DeadJob>> {
        let (limit, offset) = (args::limit(limit, DEFAULT_DEAD_LIMIT)?, args::offset(offset)?);
        let q = self.queue()?;
        Ok(dead(q.dead_letters_by_task(&task_name, limit, offset).await.napi()?))
    }

    /// Keyset twin of `deadLetters`, by failed time.
    #[napi]
    pub async fn dead_letters_after(&self, limit: Option<f64>, after: Option<String>) -> Result<DeadJobPage> {
        let limit = args::limit(limit, DEFAULT_DEAD_LIMIT)?;
        let after = args::cursor(after)?;
        let q = self.queue()?;
        Ok(q.dead_letters_after(limit, after.as_deref()).await.napi()?.into())
    }

    /// Re-enqueues a dead letter's job as a new job and removes the entry; resolves to the
    /// new job id. Takes the dead-letter id.
    #[napi]
    pub async fn retry_dead(&self, dead_id: String) -> Result<String> {
        let q = self.queue()?;
        Ok(q.retry_dead(&dead_id).await.napi()?.to_string())
    }

    /// Discards one dead letter; `false` when no entry has that id.
    #[napi]
    pub async fn delete_dead(&self, dead_id: String) -> Result<bool> {
        let q = self.queue()?;
        q.delete_dead(&dead_id).await.napi()
    }

    /// Deletes dead letters that failed more than `olderThanMs` milliseconds ago; resolves to
    /// how many.
    #[napi]
    pub async fn purge_dead(&self, older_than_ms: f64) -> Result<f64> {
        let q = self.queue()?;
        let cutoff = cutoff(&q, older_than_ms)?;
        Ok(q.store().purge_dead(cutoff).await.napi()? as f64)
    }

    /// Deletes every dead letter of one task; resolves to how many.
    #[napi]
    pub async fn purge_dead_by_task(&self, task_name: String) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.purge_dead_by_task(&task_name).await.napi()? as f64)
    }
}
