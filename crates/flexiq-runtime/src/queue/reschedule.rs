//! Moving jobs that have not started in time or in line: a new delay, promotion of one
//! delayed job or a batch of them, a new priority, LIFO placement.
//!
//! The rules (which statuses may move, the priority range, what LIFO means for `run_at`) are
//! the store contract's, in `flexiq_core::store::reschedule`; this layer parses the caller's
//! values, stamps `now` from the queue's clock, and logs each change.

use flexiq_core::store::{ChangeDelayRequest, ChangePriorityRequest, PromoteJobsRequest, PromoteRequest};

use super::clean::page_count;
use super::{parse_id, Queue};
use crate::error::{Error, Result};

impl Queue {
    /// Makes a pending job due `delay_ms` from now (a LIFO job becomes FIFO). `NotFound` for
    /// an unknown id, `Conflict` naming the status for a job that is not pending,
    /// `InvalidArgument` for a negative delay.
    pub async fn change_delay(&self, job_id: &str, delay_ms: i64) -> Result<()> {
        let req = ChangeDelayRequest { job_id: parse_id(job_id)?, delay_ms, now: self.now_ms() };
        req.validate()?;
        self.store.change_delay(req).await?;
        tracing::info!(job_id, delay_ms, "changed a job's delay");
        Ok(())
    }

    /// Makes a delayed pending job due now. `Conflict` when it is not pending or already due.
    pub async fn promote(&self, job_id: &str) -> Result<()> {
        let req = PromoteRequest { job_id: parse_id(job_id)?, now: self.now_ms() };
        self.store.promote(req).await?;
        tracing::info!(job_id, "promoted a delayed job");
        Ok(())
    }

    /// Makes up to `count` (1 to 10,000) delayed jobs of `queue` due now, soonest first;
    /// returns how many. Call again until it returns 0.
    pub async fn promote_jobs(&self, queue: &str, count: i64) -> Result<u64> {
        let count = page_count("count", count)?;
        let req = PromoteJobsRequest { queue: queue.to_string(), count, now: self.now_ms() };
        req.validate()?;
        let n = self.store.promote_jobs(req).await?;
        tracing::info!(queue, promoted = n, "promoted delayed jobs");
        Ok(n)
    }

    /// Gives a pending, waiting or suspended job a new priority (higher runs first, within
    /// ±2,097,152). With `lifo` a due pending job is placed ahead of the FIFO jobs of that
    /// priority. `Conflict` naming the status for a job that started or finished.
    pub async fn change_priority(&self, job_id: &str, priority: i64, lifo: bool) -> Result<()> {
        let p = i32::try_from(priority)
            .map_err(|_| Error::invalid(format!("priority {priority} of job {job_id} is out of range")))?;
        let req = ChangePriorityRequest { job_id: parse_id(job_id)?, priority: p, lifo, now: self.now_ms() };
        req.validate()?;
        self.store.change_priority(req).await?;
        tracing::info!(job_id, priority, lifo, "changed a job's priority");
        Ok(())
    }
}
