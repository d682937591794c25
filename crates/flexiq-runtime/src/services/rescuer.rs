//! Lease expiry, both tiers: the [`Rescuer`] releases jobs whose heartbeat stopped (a dead
//! worker), the [`RunawayReaper`] fails attempts older than an absolute cap (a wedged worker
//! that still heartbeats).

use std::time::Duration;

use flexiq_core::store::{ExpireRunawayRequest, ReleaseStaleRequest};
use flexiq_core::JobId;
use tracing::Instrument;

use crate::error::{Error, Result};
use crate::queue::Queue;

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The heartbeat-loss window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RescueConfig {
    /// A running job whose last heartbeat is older than this is released back to pending
    /// (default 30 s). This is the lease: workers must heartbeat well within it.
    pub stale_after: Duration,
}

impl Default for RescueConfig {
    fn default() -> Self {
        RescueConfig { stale_after: Duration::from_secs(30) }
    }
}

impl RescueConfig {
    /// Checks a window of at least 20 ms.
    pub fn validate(&self) -> Result<()> {
        if self.stale_after < Duration::from_millis(20) {
            return Err(Error::invalid("stale-lease window must be at least 20 ms"));
        }
        Ok(())
    }
}

/// What one rescue released.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RescueReport {
    /// Jobs released back to pending (or dead-lettered when out of retries).
    pub released: Vec<JobId>,
}

/// Releases jobs whose worker stopped heartbeating.
#[derive(Debug, Clone)]
pub struct Rescuer {
    queue: Queue,
    config: RescueConfig,
}

impl Rescuer {
    /// A rescuer for `queue`'s namespace.
    pub fn new(queue: &Queue, config: RescueConfig) -> Result<Self> {
        config.validate()?;
        Ok(Rescuer { queue: queue.clone(), config })
    }

    /// Releases every stale running job (`LEASE_HEARTBEAT_LOST`).
    pub async fn run_once(&self) -> Result<RescueReport> {
        let span = tracing::info_span!("sweep", kind = "rescue", namespace = %self.queue.namespace());
        async {
            let req =
                ReleaseStaleRequest { stale_after_ms: ms(self.config.stale_after), now: self.queue.now_ms() };
            let released = self.queue.store().release_stale(req).await?;
            for id in &released {
                tracing::warn!(job_id = %id, "released job whose worker stopped heartbeating");
            }
            Ok(RescueReport { released })
        }
        .instrument(span)
        .await
    }
}

/// The absolute cap on one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunawayConfig {
    /// An attempt started longer ago than this fails as retryable (`LEASE_ABSOLUTE_CAP`)
    /// even while its worker heartbeats (default 24 h; `None`: no cap).
    pub absolute_cap: Option<Duration>,
}

impl Default for RunawayConfig {
    fn default() -> Self {
        RunawayConfig { absolute_cap: Some(Duration::from_secs(24 * 3_600)) }
    }
}

impl RunawayConfig {
    /// Checks a cap of at least 1 s.
    pub fn validate(&self) -> Result<()> {
        if self.absolute_cap.is_some_and(|c| c < Duration::from_secs(1)) {
            return Err(Error::invalid("absolute lease cap must be at least 1 s"));
        }
        Ok(())
    }
}

/// What one runaway sweep expired.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunawayReport {
    /// Attempts failed for outliving the cap.
    pub expired: Vec<JobId>,
}

/// Fails attempts that outlive the absolute cap.
#[derive(Debug, Clone)]
pub struct RunawayReaper {
    queue: Queue,
    config: RunawayConfig,
}

impl RunawayReaper {
    /// A reaper for `queue`'s namespace.
    pub fn new(queue: &Queue, config: RunawayConfig) -> Result<Self> {
        config.validate()?;
        Ok(RunawayReaper { queue: queue.clone(), config })
    }

    /// Fails every running attempt older than the cap; nothing when there is no cap.
    pub async fn run_once(&self) -> Result<RunawayReport> {
        let Some(cap) = self.config.absolute_cap else {
            return Ok(RunawayReport::default());
        };
        let span = tracing::info_span!("sweep", kind = "runaway", namespace = %self.queue.namespace());
        async {
            let req = ExpireRunawayRequest { absolute_cap_ms: ms(cap), now: self.queue.now_ms() };
            let expired = self.queue.store().expire_runaway(req).await?;
            for id in &expired {
                tracing::warn!(job_id = %id, cap_ms = ms(cap), "failed attempt that outlived the absolute cap");
            }
            Ok(RunawayReport { expired })
        }
        .instrument(span)
        .await
    }
}
