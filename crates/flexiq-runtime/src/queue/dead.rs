//! The dead-letter queue: listings, retry, delete and purges.

use flexiq_core::options::validate_name;
use flexiq_core::store::{DeadLettersAfterRequest, DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest};
use flexiq_core::{validate_limit, validate_offset, DeadJob, JobId, Page};

use super::{parse_row_id, secs_to_ms, Queue};
use crate::error::{Error, Result};

impl Queue {
    /// Dead letters, newest first. `limit` 1 to 10,000, `offset` 0 or more.
    pub async fn dead_letters(&self, limit: i64, offset: i64) -> Result<Vec<DeadJob>> {
        let req = DeadLettersRequest {
            task: None,
            limit: validate_limit(limit)?,
            offset: validate_offset(offset)?,
        };
        Ok(self.store.dead_letters(req).await?)
    }

    /// Dead letters of one task, newest first.
    pub async fn dead_letters_by_task(&self, task: &str, limit: i64, offset: i64) -> Result<Vec<DeadJob>> {
        validate_name("task name", task)?;
        let req = DeadLettersRequest {
            task: Some(task.to_string()),
            limit: validate_limit(limit)?,
            offset: validate_offset(offset)?,
        };
        Ok(self.store.dead_letters(req).await?)
    }

    /// Keyset twin of [`Queue::dead_letters`], by failure time.
    pub async fn dead_letters_after(&self, limit: i64, after: Option<&str>) -> Result<Page<DeadJob>> {
        if after.is_some_and(|c| c.trim().is_empty()) {
            return Err(Error::invalid("cursor must not be empty: pass None for the first page"));
        }
        let req = DeadLettersAfterRequest { limit: validate_limit(limit)?, after: after.map(str::to_string) };
        Ok(self.store.dead_letters_after(req).await?)
    }

    /// Re-enqueues a dead letter's job as a new job and removes the entry; returns the new
    /// id. Takes the dead-letter id, not the job id. `NotFound` for an unknown entry.
    pub async fn retry_dead(&self, dead_id: &str) -> Result<JobId> {
        let id = parse_row_id("dead letter", dead_id)?;
        let job = self.store.retry_dead(RetryDeadRequest { dead_id: id.clone(), now: self.now_ms() }).await?;
        tracing::info!(dead_id = %id, job_id = %job, "retried dead letter");
        Ok(job)
    }

    /// Discards one dead letter; false when no entry has that id.
    pub async fn delete_dead(&self, dead_id: &str) -> Result<bool> {
        Ok(self.store.delete_dead(&parse_row_id("dead letter", dead_id)?).await?)
    }

    /// Deletes dead letters that failed more than `older_than_secs` seconds ago; returns how many.
    pub async fn purge_dead(&self, older_than_secs: i64) -> Result<u64> {
        let cutoff = self.now_ms().saturating_sub(secs_to_ms("older_than", older_than_secs)?);
        Ok(self.store.purge_dead(PurgeDeadRequest { cutoff_ms: cutoff }).await?)
    }

    /// Deletes every dead letter of one task; returns how many.
    pub async fn purge_dead_by_task(&self, task: &str) -> Result<u64> {
        validate_name("task name", task)?;
        Ok(self.store.purge_dead_by_task(task).await?)
    }
}
