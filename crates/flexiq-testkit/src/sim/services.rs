//! The rescuer and the operator.
//!
//! The rescuer is the runtime's own: [`Rescuer::run_once`](flexiq_runtime::services::Rescuer)
//! and [`RunawayReaper::run_once`](flexiq_runtime::services::RunawayReaper) on a `Queue` over
//! the faulty store and the injected clock, so lease expiry here is the production code path.
//! The operator requeues, cancels or asks to cancel a job the seed picks, as an admin would
//! from the CLI, with the same faults on those calls.

use flexiq_core::store::{CancelRequest, JobStore, RequestCancelRequest, RequeueRequest};
use flexiq_core::{JobId, Result};
use rand::Rng;

use super::world::World;

impl World {
    /// One sweep: stale-lease release or runaway expiry.
    pub(crate) async fn rescue(&mut self) -> Result<()> {
        self.wake_workers();
        if self.rng.random_bool(0.7) {
            match self.rescuer.run_once().await {
                Ok(r) => {
                    let labels: Vec<String> = r.released.iter().map(|id| self.ledger.label(id)).collect();
                    self.note(format!("rescuer released [{}]", labels.join(" ")));
                }
                Err(e) => self.note(format!("rescuer failed: {e}")),
            }
        } else {
            match self.reaper.run_once().await {
                Ok(r) => {
                    let labels: Vec<String> = r.expired.iter().map(|id| self.ledger.label(id)).collect();
                    self.note(format!("reaper expired [{}]", labels.join(" ")));
                }
                Err(e) => self.note(format!("reaper failed: {e}")),
            }
        }
        Ok(())
    }

    /// An operator acts on a job the seed picks.
    pub(crate) async fn operate(&mut self) -> Result<()> {
        let ids: Vec<JobId> = self.ledger.jobs().map(|(id, _)| id.clone()).collect();
        if ids.is_empty() {
            return Ok(());
        }
        let id = ids[self.rng.random_range(0..ids.len())].clone();
        self.wake_workers();
        let label = self.ledger.label(&id);
        let now = self.now();
        let (what, reply) = match self.rng.random_range(0..3) {
            0 => ("requeue", self.store.requeue(RequeueRequest { id, now }).await),
            1 => ("cancel", self.store.cancel(CancelRequest { id, now }).await),
            _ => ("request_cancel", self.store.request_cancel(RequestCancelRequest { id, now }).await),
        };
        match reply {
            Ok(done) => self.note(format!("operator {what} {label} -> {done}")),
            Err(e) => self.note(format!("operator {what} {label} failed: {e}")),
        }
        Ok(())
    }
}
