//! Heartbeats: one batched lease renewal for every job the worker holds, plus the worker's
//! own entry in the registry.
//!
//! Started jobs are renewed with `heartbeat`, which also records their start in the store;
//! buffered ones with `renew_buffered`, which does not, so a job this worker never started is
//! released without a stall if the worker dies.
//!
//! The reply delivers cancel requests (the job's token fires with `Requested`) and lost
//! leases (`LeaseLost`: the job was released and may be re-claimed elsewhere; its eventual
//! ack will be `Superseded`).

use std::sync::Arc;

use flexiq_core::store::HeartbeatRequest;
use flexiq_core::{AckOutcome, Fence, JobId, WorkerInfo};
use tokio_util::sync::CancellationToken;

use super::context::{CancelReason, CancelState};
use super::Shared;

pub(crate) async fn run_heartbeats(shared: Arc<Shared>, info: WorkerInfo, stop: CancellationToken) {
    let mut tick = tokio::time::interval(shared.config.heartbeat_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        beat(&shared, &info).await;
    }
}

pub(crate) async fn beat(shared: &Shared, info: &WorkerInfo) {
    let now = shared.queue.now_ms();
    let (mut started, mut buffered) = (Vec::new(), Vec::new());
    for (id, a) in shared.active.lock().iter() {
        let held = (id.clone(), a.fence, a.cancel.clone());
        if a.started {
            started.push(held);
        } else {
            buffered.push(held);
        }
    }
    renew(shared, started, now, true).await;
    renew(shared, buffered, now, false).await;
    let info = WorkerInfo { heartbeat_at: now, ..info.clone() };
    if let Err(e) = shared.queue.store().worker_heartbeat(&info).await {
        tracing::warn!(error = %e, worker_id = %info.id, "worker registry heartbeat failed");
    }
}

/// Renews the leases of `held` in one batch: with their starts reported when `started`
/// (`heartbeat`), else as still buffered (`renew_buffered`).
async fn renew(shared: &Shared, held: Vec<(JobId, Fence, Arc<CancelState>)>, now: i64, started: bool) {
    if held.is_empty() {
        return;
    }
    let jobs = held.iter().map(|(id, fence, _)| (id.clone(), *fence)).collect();
    let req = HeartbeatRequest { jobs, now };
    let store = shared.queue.store();
    let replies = if started { store.heartbeat(req).await } else { store.renew_buffered(req).await };
    match replies {
        Ok(replies) => {
            for ((id, fence, cancel), reply) in held.iter().zip(replies) {
                if reply.outcome == AckOutcome::Superseded && !cancel.token.is_cancelled() {
                    tracing::warn!(job_id = %id, attempt = fence.attempt, "lease lost: the job was released");
                    cancel.cancel(CancelReason::LeaseLost);
                    if let Some(m) = &shared.metrics {
                        m.lease_lost();
                    }
                } else if reply.cancel_requested && !cancel.token.is_cancelled() {
                    tracing::info!(job_id = %id, "cancellation requested");
                    cancel.cancel(CancelReason::Requested);
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, jobs = held.len(), started, "heartbeat failed"),
    }
}
