//! [`JobContext`]: what a handler gets for one attempt.
//!
//! Besides the job it carries two signals. The cancellation token fires when the handler
//! should stop: a cooperative cancel request, the hard timeout, a lost lease or a worker
//! shutdown past its deadline ([`JobContext::cancel_reason`] says which). The soft-timeout
//! token fires at the task's soft timeout, as a hint to wrap up. Partials, logs and progress
//! go through the queue, the progress write fenced to this attempt.

use std::collections::HashMap;
use std::sync::Arc;

use flexiq_core::{AckOutcome, Fence, Job, JobId};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::queue::Queue;

/// Why a job's cancellation token fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelReason {
    /// Someone called `request_cancel`.
    Requested,
    /// The attempt ran past its hard timeout.
    HardTimeout,
    /// The worker's lease on the attempt was lost (another worker may own the job now).
    LeaseLost,
    /// The worker is shutting down and its deadline passed.
    Shutdown,
}

/// Shared between the context and the worker's bookkeeping.
#[derive(Debug, Default)]
pub(crate) struct CancelState {
    pub(crate) token: CancellationToken,
    pub(crate) reason: Mutex<Option<CancelReason>>,
}

impl CancelState {
    /// Fires the token, keeping the first reason given.
    pub(crate) fn cancel(&self, reason: CancelReason) {
        {
            let mut r = self.reason.lock();
            if r.is_none() {
                *r = Some(reason);
            }
        }
        self.token.cancel();
    }

    pub(crate) fn reason(&self) -> Option<CancelReason> {
        *self.reason.lock()
    }
}

/// One attempt of one job, as a handler sees it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct JobContext {
    pub(crate) job: Arc<Job>,
    pub(crate) fence: Fence,
    pub(crate) cancel: Arc<CancelState>,
    pub(crate) soft_timeout: CancellationToken,
    pub(crate) queue: Queue,
}

impl JobContext {
    /// The job as claimed (status `running`).
    pub fn job(&self) -> &Job {
        &self.job
    }

    /// The job's id.
    pub fn id(&self) -> &JobId {
        &self.job.id
    }

    /// The task name.
    pub fn task(&self) -> &str {
        &self.job.task
    }

    /// The payload bytes.
    pub fn payload(&self) -> &[u8] {
        &self.job.payload
    }

    /// This attempt's number (1-based).
    pub fn attempt(&self) -> u32 {
        self.fence.attempt
    }

    /// This attempt's fence.
    pub fn fence(&self) -> Fence {
        self.fence
    }

    /// The queue the job came from (for enqueuing follow-up work).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Fires when the handler should stop; see [`JobContext::cancel_reason`].
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel.token
    }

    /// Whether the cancellation token has fired.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.token.is_cancelled()
    }

    /// Why the cancellation token fired, once it has.
    pub fn cancel_reason(&self) -> Option<CancelReason> {
        self.cancel.reason()
    }

    /// Fires at the task's soft timeout: a hint to finish up; the attempt keeps running.
    pub fn soft_timeout(&self) -> &CancellationToken {
        &self.soft_timeout
    }

    /// The results of this job's completed children (a flow's parent, or any job with
    /// dependencies), by child id; `None` for a child that completed without a result.
    pub async fn children_values(&self) -> Result<HashMap<JobId, Option<Vec<u8>>>> {
        let deps = self.queue.all_dependencies(self.job.id.as_str()).await?;
        Ok(deps.processed.into_iter().map(|c| (c.id, c.result)).collect())
    }

    /// The children whose failure was ignored (`ignore_dependency`), with their last error.
    pub async fn ignored_failures(&self) -> Result<HashMap<JobId, String>> {
        let deps = self.queue.all_dependencies(self.job.id.as_str()).await?;
        Ok(deps.ignored.into_iter().map(|c| (c.id, c.error.unwrap_or_default())).collect())
    }

    /// Publishes a partial result; returns its sequence number (1, 2, ...).
    pub async fn publish_partial(&self, data: impl Into<Vec<u8>>) -> Result<u64> {
        self.queue.publish_partial(self.job.id.as_str(), data).await
    }

    /// Appends a log line to the job.
    pub async fn log(&self, level: &str, message: &str) -> Result<()> {
        self.queue.log(self.job.id.as_str(), level, message).await
    }

    /// Records progress (0 to 100), fenced to this attempt: `Superseded` once another
    /// attempt owns the job.
    pub async fn set_progress(&self, progress: f64) -> Result<()> {
        match self.queue.set_progress(self.job.id.as_str(), self.fence, progress).await? {
            AckOutcome::Acknowledged => Ok(()),
            AckOutcome::Superseded => Err(Error::Core(flexiq_core::Error::Superseded(self.job.id.clone()))),
        }
    }
}
