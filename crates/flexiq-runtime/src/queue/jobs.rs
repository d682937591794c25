//! Job calls: enqueue, fetch, cancel, replay, the error record, the graph, and the
//! partial / log / progress writes a running job makes.

use flexiq_core::options::validate_name;
use flexiq_core::store::{
    AppendLogRequest, CancelRequest, EnqueueRequest, PublishPartialRequest, ReplayRequest,
    RequestCancelRequest, SetProgressRequest,
};
use flexiq_core::{
    AckOutcome, EnqueueOptions, Fence, Job, JobDag, JobError, JobId, JobStatus, LogEntry, NewJob, ReplayEntry,
};

use super::{parse_id, Queue};
use crate::error::{Error, Result};

/// One job of an [`Queue::enqueue_many`] batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnqueueItem {
    /// Task name.
    pub task: String,
    /// Opaque payload bytes.
    pub payload: Vec<u8>,
    /// Options (queue, priority, delay, retries, ...).
    pub options: EnqueueOptions,
}

impl EnqueueItem {
    /// An item with default options.
    pub fn new(task: impl Into<String>, payload: impl Into<Vec<u8>>) -> Self {
        EnqueueItem { task: task.into(), payload: payload.into(), options: EnqueueOptions::default() }
    }
}

/// Longest log level accepted (bytes).
const MAX_LEVEL_BYTES: usize = 32;
/// Largest log message accepted (bytes).
const MAX_LOG_BYTES: usize = 64 * 1024;

impl Queue {
    /// Enqueues one job and returns its id (an existing job's id when its unique key
    /// deduplicated it). The queue's `max_pending` cap applies.
    pub async fn enqueue(
        &self,
        task: &str,
        payload: impl Into<Vec<u8>>,
        opts: EnqueueOptions,
    ) -> Result<JobId> {
        Ok(self.enqueue_outcome(task, payload, opts).await?.id)
    }

    /// Enqueues a batch in one transaction: every job is validated first, then all are
    /// written or none. Returns the ids in order.
    pub async fn enqueue_many(&self, items: Vec<EnqueueItem>) -> Result<Vec<JobId>> {
        if items.is_empty() {
            return Err(Error::invalid("enqueue_many needs at least one job"));
        }
        let now = self.now_ms();
        let jobs = items
            .into_iter()
            .map(|i| NewJob::build(&i.task, i.payload, crate::observe::carry_trace(i.options), now))
            .collect::<flexiq_core::Result<Vec<_>>>()?;
        let n = jobs.len();
        let out = self.store.enqueue(EnqueueRequest { jobs, max_pending: self.max_pending, now }).await?;
        tracing::debug!(count = n, "enqueued batch");
        Ok(out.into_iter().map(|e| e.id).collect())
    }

    /// A job's current state; `None` for an id no job carries.
    pub async fn get_job(&self, id: &str) -> Result<Option<Job>> {
        Ok(self.store.get(&parse_id(id)?).await?)
    }

    /// Whether the job is in `status` now (`pending`, `running`, `completed`, `failed`,
    /// `dead`, `cancelled`, `suspended` or `waiting`): one field read, cheaper than
    /// [`Queue::get_job`]. False for an unknown or archived job; `InvalidArgument` for a
    /// malformed id or an unknown status.
    pub async fn is_job_in_state(&self, job_id: &str, status: &str) -> Result<bool> {
        let status = status.parse::<JobStatus>()?;
        Ok(self.store.job_status(&parse_id(job_id)?).await? == Some(status))
    }

    /// The result bytes of a completed job; `None` while it is not completed (or completed
    /// without a result). `NotFound` for an unknown id.
    pub async fn get_result(&self, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.store.get_result(&parse_id(id)?).await?)
    }

    /// Requests cooperative cancellation: a running job's handler sees its cancellation token
    /// fire at the worker's next heartbeat; a job not yet running is cancelled outright.
    /// False when the job is already terminal; `NotFound` for an unknown id.
    pub async fn request_cancel(&self, id: &str) -> Result<bool> {
        Ok(self.store.request_cancel(RequestCancelRequest { id: parse_id(id)?, now: self.now_ms() }).await?)
    }

    /// Whether cancellation was requested; `NotFound` for an unknown id.
    pub async fn is_cancel_requested(&self, id: &str) -> Result<bool> {
        Ok(self.store.is_cancel_requested(&parse_id(id)?).await?)
    }

    /// Cancels a pending, delayed, waiting or suspended job (and its dependents). False when
    /// it is running or terminal; `NotFound` for an unknown id.
    pub async fn cancel_job(&self, id: &str) -> Result<bool> {
        Ok(self.store.cancel(CancelRequest { id: parse_id(id)?, now: self.now_ms() }).await?)
    }

    /// Every failed attempt of a job, oldest first; `NotFound` for an unknown id.
    pub async fn get_job_errors(&self, id: &str) -> Result<Vec<JobError>> {
        Ok(self.store.job_errors(&parse_id(id)?).await?)
    }

    /// Enqueues a copy of a job (fresh id and retry budget, same payload) and records the
    /// replay; returns the new id. `NotFound` for an unknown id.
    pub async fn replay(&self, id: &str) -> Result<JobId> {
        let new_id = self.store.replay(ReplayRequest { id: parse_id(id)?, now: self.now_ms() }).await?;
        tracing::info!(job_id = id, replay_job_id = %new_id, "replayed job");
        Ok(new_id)
    }

    /// Alias of [`Queue::replay`].
    pub async fn replay_job(&self, id: &str) -> Result<JobId> {
        self.replay(id).await
    }

    /// Every replay of a job, newest first (`replayed_at` in Unix ms).
    pub async fn replay_history(&self, id: &str) -> Result<Vec<ReplayEntry>> {
        Ok(self.store.replay_history(&parse_id(id)?).await?)
    }

    /// Alias of [`Queue::replay_history`].
    pub async fn get_replay_history(&self, id: &str) -> Result<Vec<ReplayEntry>> {
        self.replay_history(id).await
    }

    /// The dependency graph reachable from a job in both directions (edges point
    /// dependency -> dependent); `NotFound` for an unknown id.
    pub async fn job_dag(&self, id: &str) -> Result<JobDag> {
        Ok(self.store.job_dag(&parse_id(id)?).await?)
    }

    /// Appends a partial result to a job and returns its sequence number (1, 2, ...).
    pub async fn publish_partial(&self, id: &str, data: impl Into<Vec<u8>>) -> Result<u64> {
        let req = PublishPartialRequest { id: parse_id(id)?, data: data.into(), now: self.now_ms() };
        Ok(self.store.publish_partial(req).await?)
    }

    /// Appends a log line (`level` such as `info`, `warn`, `error`) to a job.
    pub async fn log(&self, id: &str, level: &str, message: &str) -> Result<()> {
        validate_name("log level", level)?;
        if level.len() > MAX_LEVEL_BYTES {
            return Err(Error::invalid(format!("log level {level:?} is over {MAX_LEVEL_BYTES} bytes")));
        }
        if message.len() > MAX_LOG_BYTES {
            return Err(Error::invalid(format!(
                "log message for job {id} is {} bytes, over {MAX_LOG_BYTES}",
                message.len()
            )));
        }
        let req = AppendLogRequest {
            id: parse_id(id)?,
            level: level.to_string(),
            message: message.to_string(),
            now: self.now_ms(),
        };
        Ok(self.store.append_log(req).await?)
    }

    /// A job's log lines, oldest first.
    pub async fn job_logs(&self, id: &str) -> Result<Vec<LogEntry>> {
        Ok(self.store.job_logs(&parse_id(id)?).await?)
    }

    /// Records progress (0 to 100) of the running attempt `fence`; `Superseded` when that
    /// attempt is no longer the running one.
    pub async fn set_progress(&self, id: &str, fence: Fence, progress: f64) -> Result<AckOutcome> {
        Ok(self.store.set_progress(SetProgressRequest { id: parse_id(id)?, fence, progress }).await?)
    }
}
