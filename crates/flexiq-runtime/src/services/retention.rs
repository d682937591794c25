//! The retention sweep: deletes history past its window and publishes what it applied.

use std::collections::BTreeMap;

use flexiq_core::store::RetentionRequest;
use flexiq_core::{EffectiveRetention, Retention, RetentionTable};

use tracing::Instrument;

use crate::error::Result;
use crate::queue::Queue;

/// Which windows the sweep applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetentionSweepConfig {
    /// Windows in seconds. `None`: the queue's configured retention, else the recommended
    /// defaults (published as `defaulted`). `Some(Retention::default())` turns retention off.
    pub retention: Option<Retention>,
}

impl RetentionSweepConfig {
    /// Checks the windows.
    pub fn validate(&self) -> Result<()> {
        if let Some(r) = &self.retention {
            r.validate()?;
        }
        Ok(())
    }
}

/// What one sweep deleted and published.
#[derive(Debug, Clone, PartialEq)]
pub struct RetentionReport {
    /// Rows deleted per table.
    pub deleted: BTreeMap<RetentionTable, u64>,
    /// Their sum.
    pub total: u64,
    /// What was published for `effective_retention()` (windows in ms).
    pub effective: EffectiveRetention,
}

/// Applies retention to one namespace.
#[derive(Debug, Clone)]
pub struct RetentionSweeper {
    queue: Queue,
    config: RetentionSweepConfig,
}

impl RetentionSweeper {
    /// A sweeper for `queue`'s namespace.
    pub fn new(queue: &Queue, config: RetentionSweepConfig) -> Result<Self> {
        config.validate()?;
        Ok(RetentionSweeper { queue: queue.clone(), config })
    }

    /// Purges every table past its window, then publishes the windows applied.
    pub async fn run_once(&self) -> Result<RetentionReport> {
        let span = tracing::info_span!("sweep", kind = "retention", namespace = %self.queue.namespace());
        self.sweep().instrument(span).await
    }

    async fn sweep(&self) -> Result<RetentionReport> {
        let (retention, defaulted) =
            crate::queue::resolve_retention(self.config.retention.or(self.queue.configured_retention()));
        let windows = retention.windows_ms();
        let now = self.queue.now_ms();
        let store = self.queue.store();
        let deleted = if retention.enabled() {
            store.retention_purge(RetentionRequest { windows: windows.clone(), now }).await?
        } else {
            BTreeMap::new()
        };
        let total = deleted.values().sum();
        let effective = EffectiveRetention {
            enabled: retention.enabled(),
            defaulted,
            namespace: self.queue.namespace().to_string(),
            reported_at: now,
            windows,
        };
        store.publish_effective_retention(&effective).await?;
        if total > 0 {
            tracing::info!(total, ?deleted, "retention sweep deleted rows");
        }
        Ok(RetentionReport { deleted, total, effective })
    }
}
