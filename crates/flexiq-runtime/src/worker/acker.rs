//! Group commit of acks.
//!
//! Finished attempts are gathered for `ack_batch_window` (or until `ack_batch_max`) and
//! written with one fenced `store.ack` call. A `Superseded` outcome means a newer attempt owns
//! the job: nothing was written, and it is logged, never retried. A job stays in the worker's
//! active set (and keeps its lease renewed) until its ack is written.

use std::sync::Arc;
use std::time::Duration;

use flexiq_core::store::{Ack, AckKind, AckRequest};
use flexiq_core::AckOutcome;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::counters::Counters;
use super::Shared;

/// Attempts at writing one batch before giving up on it.
const ACK_TRIES: u32 = 5;

pub(crate) async fn run_acker(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<Ack>) {
    let window = shared.config.ack_batch_window;
    let max = shared.config.ack_batch_max;
    let mut batch: Vec<Ack> = Vec::with_capacity(max.min(1_024));
    while let Some(first) = rx.recv().await {
        batch.push(first);
        if !window.is_zero() {
            let deadline = tokio::time::sleep(window);
            tokio::pin!(deadline);
            while batch.len() < max {
                tokio::select! {
                    biased;
                    msg = rx.recv() => match msg {
                        Some(a) => batch.push(a),
                        None => break,
                    },
                    _ = &mut deadline => break,
                }
            }
        }
        while batch.len() < max {
            match rx.try_recv() {
                Ok(a) => batch.push(a),
                Err(_) => break,
            }
        }
        write_batch(&shared, std::mem::take(&mut batch)).await;
    }
}

async fn write_batch(shared: &Shared, batch: Vec<Ack>) {
    let n = batch.len();
    let span = tracing::debug_span!("ack", worker_id = %shared.worker_id, count = n);
    let outcomes = write_with_retries(shared, &batch).instrument(span).await;
    apply_outcomes(shared, &batch, outcomes);
}

async fn write_with_retries(shared: &Shared, batch: &[Ack]) -> Option<Vec<AckOutcome>> {
    let n = batch.len();
    let mut tries = 0;
    loop {
        tries += 1;
        let req = AckRequest { acks: batch.to_vec(), now: shared.queue.now_ms() };
        match shared.queue.store().ack(req).await {
            Ok(o) => return Some(o),
            Err(e) if e.is_retryable() && tries < ACK_TRIES => {
                tracing::warn!(error = %e, tries, "ack batch failed, retrying");
                tokio::time::sleep(Duration::from_millis(10 * u64::from(tries))).await;
            }
            Err(e) => {
                tracing::error!(error = %e, count = n, "ack batch failed: its jobs will be re-run once their leases lapse");
                Counters::add(&shared.counters.ack_errors, 1);
                if let Some(m) = &shared.metrics {
                    m.ack_failed();
                }
                return None;
            }
        }
    }
}

fn apply_outcomes(shared: &Shared, batch: &[Ack], outcomes: Option<Vec<AckOutcome>>) {
    if let Some(outcomes) = outcomes {
        if let Some(m) = &shared.metrics {
            let superseded = outcomes.iter().filter(|o| **o == AckOutcome::Superseded).count();
            m.acked(batch.len(), superseded as u64);
        }
        for (ack, outcome) in batch.iter().zip(outcomes) {
            match outcome {
                AckOutcome::Acknowledged => {
                    Counters::add(&shared.counters.acknowledged, 1);
                    log_applied(ack);
                }
                AckOutcome::Superseded => {
                    Counters::add(&shared.counters.superseded, 1);
                    tracing::warn!(
                        job_id = %ack.job_id,
                        attempt = ack.fence.attempt,
                        worker_id = %shared.worker_id,
                        "ack superseded: a newer attempt owns the job, nothing written"
                    );
                }
            }
        }
    }
    let mut active = shared.active.lock();
    for ack in batch {
        if active.get(&ack.job_id).is_some_and(|a| a.fence == ack.fence) {
            active.remove(&ack.job_id);
        }
    }
}

fn log_applied(ack: &Ack) {
    match &ack.kind {
        AckKind::Fail { error, retryable: true } => {
            tracing::info!(job_id = %ack.job_id, attempt = ack.fence.attempt, error = %error, "attempt failed: retry or dead-letter per the job's budget");
        }
        AckKind::Fail { error, retryable: false } => {
            tracing::info!(job_id = %ack.job_id, attempt = ack.fence.attempt, error = %error, "job failed for good");
        }
        AckKind::Defer { reason, .. } => {
            tracing::debug!(job_id = %ack.job_id, reason = %reason, "job given back");
        }
        _ => {}
    }
}
