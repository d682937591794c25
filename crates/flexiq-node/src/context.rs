//! `NativeJobContext`: one attempt of one job, as a JS handler sees it.
//!
//! The JS layer wraps it in the `ctx` handed to handlers. Cancellation reaches JS lazily:
//! the first time a handler reads `ctx.signal`, the JS layer calls [`NativeJobContext::watch_cancel`],
//! which waits on the attempt's cancellation token and soft-timeout token and, when either
//! fires, calls the worker's abort callback with this attempt's token and the reason
//! (`SOFT_TIMEOUT` for the soft timeout, which stops nothing by itself).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use flexiq_runtime::{CancelReason, JobContext};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::error::{IntoNapi, Result};
use crate::types::decode;
use crate::worker::HandlerOutcome;

/// What the abort callback receives.
#[napi(object)]
pub struct AbortEvent {
    /// The attempt's token (`NativeJobContext.token`).
    pub token: u32,
    /// `JOB_CANCELLED`, `TIMEOUT`, `LEASE_LOST`, `SHUTDOWN` or `SOFT_TIMEOUT`.
    pub reason: String,
}

/// The worker's abort callback.
pub(crate) type AbortFn = ThreadsafeFunction<AbortEvent, (), AbortEvent, Status, false>;

/// The reason code of a passed soft timeout: the attempt keeps running, `ctx.signal` aborts
/// so the handler can wrap up before the hard timeout.
pub(crate) const SOFT_TIMEOUT: &str = "SOFT_TIMEOUT";

/// The `code` a cancellation reason is reported with on `ctx.signal.reason`.
pub(crate) fn reason_code(r: Option<CancelReason>) -> &'static str {
    match r {
        Some(CancelReason::Requested) | None => "JOB_CANCELLED",
        Some(CancelReason::HardTimeout) => "TIMEOUT",
        Some(CancelReason::LeaseLost) => "LEASE_LOST",
        Some(CancelReason::Shutdown) => "SHUTDOWN",
    }
}

/// One attempt of one job.
#[napi]
pub struct NativeJobContext {
    pub(crate) ctx: JobContext,
    pub(crate) token: u32,
    /// Weak, so contexts a handler kept do not keep a stopped worker's callback (and the
    /// process) alive.
    pub(crate) abort: Weak<AbortFn>,
    /// Cancelled when the attempt's handler settles (or its future is dropped).
    pub(crate) done: CancellationToken,
    /// Set when the handler settled on its own; unset when its future was dropped (a hard
    /// timeout or shutdown), in which case the token is about to fire.
    pub(crate) settled: Arc<AtomicBool>,
    /// Where [`NativeJobContext::settle`] sends the attempt's outcome (taken by the first call).
    pub(crate) reply: Mutex<Option<oneshot::Sender<HandlerOutcome>>>,
}

/// How long a watcher whose attempt was dropped waits for the reason to be recorded (ms).
const DROPPED_GRACE_MS: u64 = 1_000;

#[napi]
impl NativeJobContext {
    /// The job's id.
    #[napi(getter)]
    pub fn id(&self) -> String {
        self.ctx.id().to_string()
    }

    /// This attempt's number (1-based).
    #[napi(getter)]
    pub fn attempt(&self) -> u32 {
        self.ctx.attempt()
    }

    /// The task name.
    #[napi(getter)]
    pub fn task(&self) -> String {
        self.ctx.task().to_string()
    }

    /// The queue the job came from.
    #[napi(getter)]
    pub fn queue(&self) -> String {
        self.ctx.job().queue.clone()
    }

    /// The payload as JSON text.
    #[napi(getter)]
    pub fn payload(&self) -> String {
        String::from_utf8_lossy(self.ctx.payload()).into_owned()
    }

    /// The attempt's token, which the abort callback names.
    #[napi(getter)]
    pub fn token(&self) -> u32 {
        self.token
    }

    /// Whether the attempt was told to stop.
    #[napi]
    pub fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// Why it was told to stop (`JOB_CANCELLED`, `TIMEOUT`, `LEASE_LOST`, `SHUTDOWN`), once it
    /// was; else `SOFT_TIMEOUT` once the task's soft timeout passed (the attempt keeps
    /// running); else `null`.
    #[napi]
    pub fn cancel_reason(&self) -> Option<&'static str> {
        if self.ctx.is_cancelled() {
            return Some(reason_code(self.ctx.cancel_reason()));
        }
        self.ctx.soft_timeout().is_cancelled().then_some(SOFT_TIMEOUT)
    }

    /// Starts forwarding this attempt's first stop signal (its cancellation, or its soft
    /// timeout) to the abort callback.
    #[napi]
    pub fn watch_cancel(&self) {
        let cancel = self.ctx.cancellation().clone();
        let soft = self.ctx.soft_timeout().clone();
        let done = self.done.clone();
        let ctx = self.ctx.clone();
        let abort = self.abort.clone();
        let token = self.token;
        let settled = self.settled.clone();
        napi::bindgen_prelude::spawn(async move {
            let reason = tokio::select! {
                biased;
                _ = cancel.cancelled() => Some(reason_code(ctx.cancel_reason())),
                _ = soft.cancelled() => Some(SOFT_TIMEOUT),
                _ = done.cancelled() => {
                    // A dropped attempt (timeout, shutdown) has its token fired right after.
                    let dropped = !settled.load(Ordering::Acquire)
                        && tokio::time::timeout(Duration::from_millis(DROPPED_GRACE_MS), cancel.cancelled())
                            .await
                            .is_ok();
                    dropped.then(|| reason_code(ctx.cancel_reason()))
                }
            };
            if let (Some(reason), Some(abort)) = (reason, abort.upgrade()) {
                abort.call(
                    AbortEvent { token, reason: reason.to_string() },
                    ThreadsafeFunctionCallMode::NonBlocking,
                );
            }
        });
    }

    /// Reports how the attempt ended; the JS layer calls it once, when the handler settled.
    /// Later calls are ignored.
    #[napi]
    pub fn settle(&self, outcome: HandlerOutcome) {
        if let Some(reply) = self.reply.lock().take() {
            let _ = reply.send(outcome);
        }
    }

    /// Publishes a partial result (JSON text); resolves to its sequence number (1, 2, ...).
    #[napi]
    pub async fn publish(&self, data: String) -> Result<f64> {
        let ctx = self.ctx.clone();
        Ok(ctx.publish_partial(data.into_bytes()).await.napi()? as f64)
    }

    /// Appends a log line (`level` such as `info`, `warn`, `error`) to the job.
    #[napi]
    pub async fn log(&self, level: String, message: String) -> Result<()> {
        let ctx = self.ctx.clone();
        ctx.log(&level, &message).await.napi()
    }

    /// The JSON-decoded results of this job's completed children (a flow's parent, or any job
    /// with dependencies), by child id; `null` for a child that completed without a result.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub async fn children_values(&self) -> Result<HashMap<String, Value>> {
        let ctx = self.ctx.clone();
        let values = ctx.children_values().await.napi()?;
        Ok(values
            .into_iter()
            .map(|(id, v)| (id.to_string(), v.as_deref().map_or(Value::Null, decode)))
            .collect())
    }

    /// The children whose failure was ignored (`ignore_dependency`), by child id, with their
    /// last error.
    #[napi]
    pub async fn ignored_failures(&self) -> Result<HashMap<String, String>> {
        let ctx = self.ctx.clone();
        Ok(ctx.ignored_failures().await.napi()?.into_iter().map(|(id, e)| (id.to_string(), e)).collect())
    }

    /// Records progress (0 to 100), fenced to this attempt: `SUPERSEDED` once another
    /// attempt owns the job.
    #[napi]
    pub async fn set_progress(&self, progress: f64) -> Result<()> {
        let ctx = self.ctx.clone();
        ctx.set_progress(progress).await.napi()
    }
}
