//! Running one claimed job: the handler under its timeouts, panics caught, the outcome turned
//! into an ack.

use std::sync::Arc;
use std::time::Duration;

use flexiq_core::store::{Ack, AckKind};
use flexiq_core::ClaimedJob;
use futures::FutureExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::context::{CancelReason, CancelState, JobContext};
use super::counters::Counters;
use super::Shared;
use crate::observe::Outcome;

/// Runs `claimed` to an ack. `kill` fires when shutdown's deadline passes: the handler is
/// dropped and the job given back.
pub(crate) async fn execute(
    shared: Arc<Shared>,
    claimed: ClaimedJob,
    cancel: Arc<CancelState>,
    kill: CancellationToken,
) -> Ack {
    let ClaimedJob { job, fence } = claimed;
    let job_id = job.id.clone();
    let span = tracing::info_span!("run", job_id = %job_id, task = %job.task, attempt = fence.attempt);
    crate::observe::adopt_trace(&span, &job);
    let kind = async {
        let Some((handler, opts)) = shared.handlers.get(&job.task).cloned() else {
            let msg = format!("no handler registered for task {} on worker {}", job.task, shared.worker_id);
            tracing::warn!(%msg, "unknown task");
            return AckKind::Fail { error: msg, retryable: false };
        };
        Counters::add(&shared.counters.started, 1);
        let hard = job.timeout_ms.map(Duration::from_millis).or(opts.timeout);
        let soft = CancellationToken::new();
        let soft_guard = opts.soft_timeout.map(|d| {
            let t = soft.clone();
            tokio::spawn(async move {
                tokio::time::sleep(d).await;
                t.cancel();
            })
        });
        let job = Arc::new(job);
        let ctx = JobContext { job: job.clone(), fence, cancel: cancel.clone(), soft_timeout: soft, queue: shared.queue.clone() };
        let began = std::time::Instant::now();
        let run = std::panic::AssertUnwindSafe(handler(ctx)).catch_unwind();
        let timeout = async {
            match hard {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        let kind = tokio::select! {
            out = run => match out {
                Ok(Ok(result)) => AckKind::Complete { result },
                Ok(Err(e)) if cancel.reason() == Some(CancelReason::Requested) => AckKind::Cancel {
                    reason: format!("cancellation requested ({})", e.message),
                },
                Ok(Err(e)) => AckKind::Fail { error: e.message, retryable: e.retryable },
                Err(panic) => AckKind::Fail {
                    error: format!("handler for task {} panicked: {}", job.task, panic_message(&panic)),
                    retryable: true,
                },
            },
            _ = timeout => {
                cancel.cancel(CancelReason::HardTimeout);
                let ms = hard.map(|d| d.as_millis()).unwrap_or_default();
                AckKind::Fail {
                    error: format!("timeout: attempt {} of job {} exceeded its {ms} ms timeout", fence.attempt, job.id),
                    retryable: true,
                }
            }
            _ = kill.cancelled() => {
                cancel.cancel(CancelReason::Shutdown);
                AckKind::Defer { until: shared.queue.now_ms(), reason: format!("worker {} shut down", shared.worker_id) }
            }
        };
        if let Some(g) = soft_guard {
            g.abort();
        }
        if let Some(m) = &shared.metrics {
            let (outcome, retry_due) = match &kind {
                AckKind::Complete { .. } => (Outcome::Completed, false),
                AckKind::Fail { retryable, .. } => (Outcome::Failed, *retryable && fence.attempt <= job.max_retries),
                AckKind::Defer { .. } => (Outcome::GivenBack, false),
                AckKind::Cancel { .. } => (Outcome::Cancelled, false),
                AckKind::Suspend { .. } => (Outcome::Suspended, false),
            };
            m.attempt(&job.task, outcome, began.elapsed(), retry_due);
        }
        match &kind {
            AckKind::Complete { .. } => Counters::add(&shared.counters.succeeded, 1),
            AckKind::Fail { error, retryable } => {
                Counters::add(&shared.counters.failed, 1);
                if *retryable && fence.attempt <= job.max_retries {
                    tracing::info!(error = %error, max_retries = job.max_retries, "attempt failed, will retry");
                } else if *retryable {
                    tracing::warn!(error = %error, "attempt failed with no retries left: dead-letter");
                } else {
                    tracing::warn!(error = %error, "attempt failed, not retryable");
                }
            }
            AckKind::Defer { .. } => Counters::add(&shared.counters.given_back, 1),
            AckKind::Cancel { reason } => {
                Counters::add(&shared.counters.cancelled, 1);
                tracing::info!(reason = %reason, "attempt stopped on a cancel request: job cancelled");
            }
            AckKind::Suspend { .. } => {}
        }
        kind
    }
    .instrument(span)
    .await;
    Ack { job_id, fence, kind }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
