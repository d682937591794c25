//! Job calls on `NativeQueue`: enqueuing, fetch, cancellation, the error record and logs,
//! replays and the dependency graph.

use flexiq_runtime::EnqueueItem;
use napi::bindgen_prelude::{block_on, PromiseRaw};
use napi::Env;
use napi_derive::napi;

use crate::bridge;
use crate::error::{IntoNapi, Result};
use crate::options::{EnqueueManyItem, JobOptions};
use crate::queue::NativeQueue;
use crate::types::{Job, JobDag, JobError, LogEntry, ReplayEntry};

pub(super) fn text(bytes: Option<Vec<u8>>) -> Option<String> {
    bytes.map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[napi]
impl NativeQueue {
    /// A job's current state, or `null` for an id no job carries. Synchronous.
    #[napi]
    pub fn get_job(&self, id: String) -> Result<Option<Job>> {
        let q = self.queue()?;
        Ok(block_on(q.get_job(&id)).napi()?.map(Into::into))
    }

    /// The result of a completed job as JSON text; `null` while it is not completed (or when
    /// it completed without a result). `NOT_FOUND` for an unknown id. Synchronous.
    #[napi]
    pub fn get_result(&self, id: String) -> Result<Option<String>> {
        let q = self.queue()?;
        Ok(text(block_on(q.get_result(&id)).napi()?))
    }

    /// Requests cooperative cancellation: a running job's `ctx.signal` aborts at the worker's
    /// next heartbeat; a job not yet running is cancelled outright. `false` when the job is
    /// already terminal; `NOT_FOUND` for an unknown id. Synchronous.
    #[napi]
    pub fn request_cancel(&self, id: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.request_cancel(&id)).napi()
    }

    /// Whether cancellation was requested; `NOT_FOUND` for an unknown id. Synchronous.
    #[napi]
    pub fn is_cancel_requested(&self, id: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.is_cancel_requested(&id)).napi()
    }

    /// Cancels a pending, delayed, waiting or suspended job (and its dependents). `false`
    /// when it is running or terminal; `NOT_FOUND` for an unknown id. Synchronous.
    #[napi]
    pub fn cancel_job(&self, id: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.cancel_job(&id)).napi()
    }

    /// Whether the job is in `status` now (`'pending'`, `'running'`, `'completed'`, `'failed'`,
    /// `'dead'`, `'cancelled'`, `'suspended'` or `'waiting'`): one field read, cheaper than
    /// `getJob`. `false` for an unknown or archived job; `INVALID_ARGUMENT` for a malformed id
    /// or an unknown status.
    #[napi]
    pub async fn is_job_in_state(&self, job_id: String, status: String) -> Result<bool> {
        let q = self.queue()?;
        q.is_job_in_state(&job_id, &status).await.napi()
    }

    /// Every failed attempt of a job, oldest first; `NOT_FOUND` for an unknown id.
    #[napi]
    pub async fn get_job_errors(&self, id: String) -> Result<Vec<JobError>> {
        let q = self.queue()?;
        Ok(q.get_job_errors(&id).await.napi()?.into_iter().map(Into::into).collect())
    }

    /// A job's log lines, oldest first (what its handler wrote with `ctx.log`).
    #[napi]
    pub async fn job_logs(&self, id: String) -> Result<Vec<LogEntry>> {
        let q = self.queue()?;
        Ok(q.job_logs(&id).await.napi()?.into_iter().map(Into::into).collect())
    }

    /// Publishes a partial result (JSON text) for a job from outside its handler; resolves to
    /// its sequence number (1, 2, ...). `NOT_FOUND` for an unknown job.
    #[napi]
    pub async fn publish_partial(&self, id: String, data: String) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.publish_partial(&id, data.into_bytes()).await.napi()? as f64)
    }

    /// Re-enqueues a copy of a job (fresh id and retry budget) and records the replay;
    /// resolves to the new id.
    #[napi]
    pub async fn replay_job(&self, id: String) -> Result<String> {
        let q = self.queue()?;
        Ok(q.replay(&id).await.napi()?.to_string())
    }

    /// Every replay of a job, newest first.
    #[napi]
    pub async fn get_replay_history(&self, id: String) -> Result<Vec<ReplayEntry>> {
        let q = self.queue()?;
        Ok(q.replay_history(&id).await.napi()?.into_iter().map(Into::into).collect())
    }

    /// The dependency graph reachable from a job in both directions.
    #[napi]
    pub async fn job_dag(&self, id: String) -> Result<JobDag> {
        let q = self.queue()?;
        Ok(q.job_dag(&id).await.napi()?.into())
    }
}

#[napi]
impl NativeQueue {
    /// Enqueues one job whose payload is JSON text; resolves to its id (an existing job's id
    /// when its unique key deduplicated it).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn enqueue<'env>(
        &self,
        env: &'env Env,
        task: String,
        payload: String,
        options: Option<JobOptions>,
    ) -> Result<PromiseRaw<'env, String>> {
        let opts = options.map(JobOptions::resolve).transpose()?.unwrap_or_default();
        let q = self.queue()?;
        bridge::promise(env, async move {
            Ok(q.enqueue(&task, payload.into_bytes(), opts).await.napi()?.to_string())
        })
    }

    /// Enqueues a batch in one transaction (all or none); resolves to the ids in order.
    #[napi(ts_return_type = "Promise<Array<string>>")]
    pub fn enqueue_many<'env>(
        &self,
        env: &'env Env,
        items: Vec<EnqueueManyItem>,
    ) -> Result<PromiseRaw<'env, Vec<String>>> {
        let items = items
            .into_iter()
            .map(|i| {
                Ok(EnqueueItem {
                    task: i.task,
                    payload: i.payload.into_bytes(),
                    options: i.options.map(JobOptions::resolve).transpose()?.unwrap_or_default(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let q = self.queue()?;
        bridge::promise(env, async move {
            Ok(q.enqueue_many(items).await.napi()?.into_iter().map(|id| id.to_string()).collect())
        })
    }
}
