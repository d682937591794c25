//! Moving jobs that have not started on `NativeQueue`, as the runtime's `queue/reschedule.rs`:
//! a new delay, promotion of one delayed job or a batch of them, a new priority with optional
//! LIFO placement.
//!
//! Each call returns a Promise, as the backend contract has them. Numbers are checked here
//! for what a double can get wrong (NaN, fractions, beyond 2^53); which statuses may move,
//! the priority range and the batch size are the runtime's to refuse, so every SDK says the
//! same thing about them. `delayMs` is milliseconds, as the backend contract names it.

use napi_derive::napi;

use crate::args;
use crate::error::{IntoNapi, Result};
use crate::options::ChangePriorityOptions;
use crate::queue::NativeQueue;

/// Delayed jobs `promoteJobs` makes due when the caller names no number.
const DEFAULT_PROMOTE: i64 = 1_000;

#[napi]
impl NativeQueue {
    /// Makes a pending job due `delayMs` milliseconds from now (a LIFO job becomes FIFO).
    /// `NOT_FOUND` for an unknown id, `CONFLICT` naming the status for a job that is not
    /// pending.
    #[napi]
    pub async fn change_delay(&self, job_id: String, delay_ms: f64) -> Result<()> {
        let delay_ms = args::non_negative("delayMs", delay_ms)?;
        let q = self.queue()?;
        q.change_delay(&job_id, delay_ms).await.napi()
    }

    /// Makes a delayed pending job due now. `CONFLICT` when it is not pending, or pending and
    /// already due.
    #[napi]
    pub async fn promote(&self, job_id: String) -> Result<()> {
        let q = self.queue()?;
        q.promote(&job_id).await.napi()
    }

    /// Makes up to `count` (1 to 10,000, default 1,000) delayed jobs of `queue` due now,
    /// soonest first; resolves to how many (0: none left).
    #[napi]
    pub async fn promote_jobs(&self, queue: String, count: Option<f64>) -> Result<f64> {
        let count = args::page("count", count, DEFAULT_PROMOTE)?;
        let q = self.queue()?;
        Ok(q.promote_jobs(&queue, count).await.napi()? as f64)
    }

    /// Gives a pending, waiting or suspended job a new priority (higher runs first, within
    /// ±2,097,152); with `lifo` a due pending job is placed ahead of the FIFO jobs of that
    /// priority. `CONFLICT` naming the status for a job that started or finished.
    #[napi]
    pub async fn change_priority(
        &self,
        job_id: String,
        priority: f64,
        options: Option<ChangePriorityOptions>,
    ) -> Result<()> {
        let priority = args::whole("priority", priority)?;
        let lifo = options.and_then(|o| o.lifo).unwrap_or(false);
        let q = self.queue()?;
        q.change_priority(&job_id, priority, lifo).await.napi()
    }
}
