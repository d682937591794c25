//! Job calls on `NativeQueue`: fetch, results, partial streams, cancellation, the error
//! record, replays and the dependency graph.

use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::PartialStream;
use futures::StreamExt;
use napi::bindgen_prelude::block_on;
use napi_derive::napi;

use crate::args;
use crate::error::{IntoNapi, Result};
use crate::queue::NativeQueue;
use crate::types::{Job, JobDag, JobError, LogEntry, ReplayEntry};

fn text(bytes: Option<Vec<u8>>) -> Option<String> {
    bytes.map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn wait_opts(timeout_ms: Option<f64>, poll_ms: Option<f64>) -> Result<(Option<Duration>, Option<Duration>)> {
    let timeout = timeout_ms.map(|t| args::millis("timeoutMs", t).map(Duration::from_millis)).transpose()?;
    let poll = poll_ms
        .map(|p| args::int("pollMs", p, 1, i64::from(u32::MAX)).map(|p| Duration::from_millis(p as u64)))
        .transpose()?;
    Ok((timeout, poll))
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

    /// Waits for a job to finish and resolves to its result as JSON text (`null` without
    /// one). Rejects with `JOB_FAILED`, `JOB_CANCELLED`, `TIMEOUT` (after `timeoutMs`) or
    /// `NOT_FOUND`. `pollMs` caps one wait on the store (default 1,000 ms).
    #[napi]
    pub async fn result(
        &self,
        id: String,
        timeout_ms: Option<f64>,
        poll_ms: Option<f64>,
    ) -> Result<Option<String>> {
        let (timeout, poll) = wait_opts(timeout_ms, poll_ms)?;
        let q = self.queue()?;
        Ok(text(q.result(&id, timeout, poll).await.napi()?))
    }

    /// The partial results a job publishes, in order; see `NativePartialStream`.
    #[napi]
    pub fn stream(
        &self,
        id: String,
        timeout_ms: Option<f64>,
        poll_ms: Option<f64>,
    ) -> Result<NativePartialStream> {
        let (timeout, poll) = wait_opts(timeout_ms, poll_ms)?;
        let q = self.queue()?;
        let inner = q.stream(&id, timeout, poll).napi()?;
        Ok(NativePartialStream { inner: Arc::new(tokio::sync::Mutex::new(inner)) })
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

    /// Forces a stuck running job back to pending, keeping its retry budget. `false` when the
    /// job is missing or not running. Synchronous.
    #[napi]
    pub fn requeue_job(&self, id: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.requeue_job(&id)).napi()
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

/// One published partial result.
#[napi(object)]
pub struct NativePartial {
    /// Sequence number, from 1, gapless per job.
    pub seq: f64,
    /// The partial as JSON text.
    pub data: String,
    /// When it was published (Unix ms).
    pub published_at: f64,
}

/// A job's partial results, read one at a time (the JS layer makes it an async iterator).
#[napi]
pub struct NativePartialStream {
    inner: Arc<tokio::sync::Mutex<PartialStream>>,
}

#[napi]
impl NativePartialStream {
    /// The next partial, or `null` once the job is terminal and every partial was read.
    /// Rejects with `TIMEOUT` or `NOT_FOUND`.
    #[napi]
    pub async fn next(&self) -> Result<Option<NativePartial>> {
        let inner = self.inner.clone();
        let mut stream = inner.lock().await;
        match stream.next().await {
            None => Ok(None),
            Some(item) => {
                let p = item.napi()?;
                Ok(Some(NativePartial {
                    seq: p.seq as f64,
                    data: String::from_utf8_lossy(&p.data).into_owned(),
                    published_at: p.published_at as f64,
                }))
            }
        }
    }
}
