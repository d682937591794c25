//! Worker registry pruning: forgets workers that stopped heartbeating.

use std::time::Duration;

use flexiq_core::store::PruneWorkersRequest;
use tracing::Instrument;

use crate::error::{Error, Result};
use crate::queue::Queue;

/// How long a silent worker stays listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerPruneConfig {
    /// Workers whose last heartbeat is older than this are removed (default 5 min).
    pub stale_after: Duration,
}

impl Default for WorkerPruneConfig {
    fn default() -> Self {
        WorkerPruneConfig { stale_after: Duration::from_secs(300) }
    }
}

impl WorkerPruneConfig {
    /// Checks a window of at least 1 s.
    pub fn validate(&self) -> Result<()> {
        if self.stale_after < Duration::from_secs(1) {
            return Err(Error::invalid("worker prune window must be at least 1 s"));
        }
        Ok(())
    }
}

/// What one prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerPruneReport {
    /// Workers removed from the registry.
    pub pruned: u64,
}

/// Removes silent workers from the registry.
#[derive(Debug, Clone)]
pub struct WorkerPruner {
    queue: Queue,
    config: WorkerPruneConfig,
}

impl WorkerPruner {
    /// A pruner for `queue`'s namespace.
    pub fn new(queue: &Queue, config: WorkerPruneConfig) -> Result<Self> {
        config.validate()?;
        Ok(WorkerPruner { queue: queue.clone(), config })
    }

    /// Removes workers silent for longer than the window.
    pub async fn run_once(&self) -> Result<WorkerPruneReport> {
        let span = tracing::info_span!("sweep", kind = "workers", namespace = %self.queue.namespace());
        async {
            let window = i64::try_from(self.config.stale_after.as_millis()).unwrap_or(i64::MAX);
            let req = PruneWorkersRequest { cutoff_ms: self.queue.now_ms().saturating_sub(window) };
            let pruned = self.queue.store().prune_workers(req).await?;
            if pruned > 0 {
                tracing::info!(pruned, "pruned silent workers");
            }
            Ok(WorkerPruneReport { pruned })
        }
        .instrument(span)
        .await
    }
}
