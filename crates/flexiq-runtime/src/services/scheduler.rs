//! Job scheduler firing: the elected cleaner enqueues the due slots of every job scheduler.
//!
//! Firing runs on its own short tick (default 250 ms) between the full maintenance rounds, so
//! a one-second scheduler fires each slot on time instead of catching up every few seconds.
//! Only the leader fires, to keep the work in one process; exactness does not rest on that:
//! the store fires a slot only while the scheduler still points at it, in the transaction or
//! script that enqueues its job, so a deposed leader that fires late enqueues nothing twice.

use std::time::Duration;

use flexiq_core::store::FireSchedulersRequest;
use tracing::Instrument;

use crate::error::{Error, Result};
use crate::queue::Queue;

/// How often and how much the leader fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedulerFireConfig {
    /// Time between firing rounds (default 250 ms, 10 ms to 60 s).
    pub tick: Duration,
    /// Most schedulers fired per store call (default 100, 1 to 10,000).
    pub batch: u32,
    /// Most store calls per round (default 10), so one round stays short.
    pub max_batches: u32,
}

impl Default for SchedulerFireConfig {
    fn default() -> Self {
        SchedulerFireConfig { tick: Duration::from_millis(250), batch: 100, max_batches: 10 }
    }
}

impl SchedulerFireConfig {
    /// Checks the tick and the batch sizes.
    pub fn validate(&self) -> Result<()> {
        if self.tick < Duration::from_millis(10) || self.tick > Duration::from_secs(60) {
            return Err(Error::invalid(format!(
                "scheduler tick {} ms must be between 10 ms and 60 s",
                self.tick.as_millis()
            )));
        }
        if !(1..=flexiq_core::MAX_PAGE).contains(&self.batch) || self.max_batches == 0 {
            return Err(Error::invalid("scheduler batch must be 1 to 10,000 and max_batches at least 1"));
        }
        Ok(())
    }
}

/// What one firing round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedulerFireReport {
    /// Slots fired (one job each).
    pub fired: u64,
}

/// Fires the due slots of the namespace's job schedulers.
#[derive(Debug, Clone)]
pub struct SchedulerFirer {
    queue: Queue,
    config: SchedulerFireConfig,
}

impl SchedulerFirer {
    /// A firer for `queue`'s namespace.
    pub fn new(queue: &Queue, config: SchedulerFireConfig) -> Result<Self> {
        config.validate()?;
        Ok(SchedulerFirer { queue: queue.clone(), config })
    }

    /// The time between firing rounds.
    pub fn tick(&self) -> Duration {
        self.config.tick
    }

    /// Fires every due slot (up to the batch limits) at the queue's clock.
    pub async fn run_once(&self) -> Result<SchedulerFireReport> {
        let span = tracing::debug_span!("sweep", kind = "schedulers", namespace = %self.queue.namespace());
        async {
            let mut fired = 0u64;
            for _ in 0..self.config.max_batches {
                let req = FireSchedulersRequest { limit: self.config.batch, now: self.queue.now_ms() };
                let slots = self.queue.store().fire_due_schedulers(req).await?;
                for s in &slots {
                    tracing::info!(scheduler = %s.scheduler_id, slot_ms = s.slot_ms, job = %s.job_id, "fired scheduler slot");
                }
                fired += slots.len() as u64;
                if slots.is_empty() {
                    break;
                }
            }
            Ok(SchedulerFireReport { fired })
        }
        .instrument(span)
        .await
    }
}
