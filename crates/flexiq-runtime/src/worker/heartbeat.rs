//! Heartbeats: one batched lease renewal for every job the worker holds, plus the worker's
//! own entry in the registry.
//!
//! The reply delivers cancel requests (the job's token fires with `Requested`) and lost
//! leases (`LeaseLost`: the job was released and may be re-claimed elsewhere; its eventual
//! ack will be `Superseded`).

use std::sync::Arc;

use flexiq_core::store::HeartbeatRequest;
use flexiq_core::{AckOutcome, WorkerInfo};
use tokio_util::sync::CancellationToken;

use super::context::CancelReason;
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
    let held: Vec<_> =
        shared.active.lock().iter().map(|(id, a)| (id.clone(), a.fence, a.cancel.clone())).collect();
    if !held.is_empty() {
        let jobs = held.iter().map(|(id, fence, _)| (id.clone(), *fence)).collect();
        match shared.queue.store().heartbeat(HeartbeatRequest { jobs, now }).await {
            Ok(replies) => {
                for ((id, fence, cancel), reply) in held.iter().zip(replies) {
                    if reply.outcome == AckOutcome::Superseded && !cancel.token.is_cancelled() {
                        tracing::warn!(job_id = %id, attempt = fence.attempt, "lease lost: the job was released");
                        cancel.cancel(CancelReason::LeaseLost);
                    } else if reply.cancel_requested && !cancel.token.is_cancelled() {
                        tracing::info!(job_id = %id, "cancellation requested");
                        cancel.cancel(CancelReason::Requested);
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, jobs = held.len(), "heartbeat failed"),
        }
    }
    let info = WorkerInfo { heartbeat_at: now, ..info.clone() };
    if let Err(e) = shared.queue.store().worker_heartbeat(&info).await {
        tracing::warn!(error = %e, worker_id = %info.id, "worker registry heartbeat failed");
    }
}
