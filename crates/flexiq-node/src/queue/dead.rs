//! The dead-letter queue on `NativeQueue`: listings, retry, delete and purges.

use flexiq_core::store::PurgeDeadRequest;
use napi_derive::napi;

use super::cutoff;
use crate::args;
use crate::error::{IntoNapi, Result};
use crate::queue::NativeQueue;
use crate::types::{DeadJob, DeadJobPage};

/// Default page size of dead-letter listings.
const DEFAULT_DEAD_LIMIT: i64 = 10;

fn dead(v: Vec<flexiq_core::DeadJob>) -> Vec<DeadJob> {
    v.into_iter().map(Into::into).collect()
}

#[napi]
impl NativeQueue {
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
        Ok(q.store().purge_dead(PurgeDeadRequest { cutoff_ms: cutoff }).await.napi()? as f64)
    }

    /// Deletes every dead letter of one task; resolves to how many.
    #[napi]
    pub async fn purge_dead_by_task(&self, task_name: String) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.purge_dead_by_task(&task_name).await.napi()? as f64)
    }
}
