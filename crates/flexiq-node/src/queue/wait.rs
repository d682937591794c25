//! Waiting on `NativeQueue`: a job's terminal result and its stream of partial results.

use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::PartialStream;
use futures::StreamExt;
use napi_derive::napi;

use super::jobs::text;
use crate::args;
use crate::error::{IntoNapi, Result};
use crate::queue::NativeQueue;

fn wait_opts(timeout_ms: Option<f64>, poll_ms: Option<f64>) -> Result<(Option<Duration>, Option<Duration>)> {
    let timeout = timeout_ms.map(|t| args::millis("timeoutMs", t).map(Duration::from_millis)).transpose()?;
    let poll = poll_ms
        .map(|p| args::int("pollMs", p, 1, i64::from(u32::MAX)).map(|p| Duration::from_millis(p as u64)))
        .transpose()?;
    Ok((timeout, poll))
}

#[napi]
impl NativeQueue {
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
