//! Deduplicated enqueues and the dedup records behind them.
//!
//! `enqueue` returns only an id; a producer using dedup modes usually needs to know whether
//! its job was the one inserted, so `enqueue_outcome` returns the store's verdict as well.
//! The modes themselves are decided in `flexiq_core::dedup`, inside the store's enqueue.

use flexiq_core::dedup::validate_dedup_key;
use flexiq_core::store::{DedupJobIdRequest, EnqueueRequest, Enqueued};
use flexiq_core::{EnqueueOptions, JobId, NewJob};

use super::Queue;
use crate::error::{Error, Result};

impl Queue {
    /// Enqueues one job like [`Queue::enqueue`] and says what happened: `created` is false when
    /// a unique key or dedup key returned an existing job (whose id it is).
    pub async fn enqueue_outcome(
        &self,
        task: &str,
        payload: impl Into<Vec<u8>>,
        opts: EnqueueOptions,
    ) -> Result<Enqueued> {
        let now = self.now_ms();
        let job = NewJob::build(task, payload.into(), crate::observe::carry_trace(opts), now)?;
        let mut out = self
            .store
            .enqueue(EnqueueRequest { jobs: vec![job], max_pending: self.max_pending, now })
            .await?;
        let first = out
            .pop()
            .ok_or_else(|| Error::Core(flexiq_core::Error::backend("enqueue returned no outcome")))?;
        tracing::debug!(job_id = %first.id, task, created = first.created, "enqueued");
        Ok(first)
    }

    /// The job holding dedup key `key` now; `None` when the key is free.
    pub async fn dedup_job_id(&self, key: &str) -> Result<Option<JobId>> {
        let req = DedupJobIdRequest { key: key.to_string(), now: self.now_ms() };
        req.validate()?;
        Ok(self.store.dedup_job_id(req).await?)
    }

    /// Deletes dedup key `key`, so the next enqueue with it inserts; the holding job is left
    /// alone. True when the key existed.
    pub async fn delete_dedup_key(&self, key: &str) -> Result<bool> {
        validate_dedup_key(key)?;
        let removed = self.store.delete_dedup_key(key).await?;
        tracing::info!(key, removed, "deleted a dedup key");
        Ok(removed)
    }
}
