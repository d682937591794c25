//! The [`Maintainer`]: every maintenance service, run only by the elected cleaner.
//!
//! Each round first campaigns for the namespace's cleaner lease; the holder then runs the
//! stale-lease rescue, the runaway reaper, archival, the retention sweep, registry pruning and
//! the job schedulers. Between rounds the leader fires due scheduler slots on a shorter tick
//! ([`Maintainer::fire_schedulers`]). A worker runs one in the background; tests call
//! [`Maintainer::run_once`] with a manual clock.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::archiver::{ArchiveConfig, ArchiveReport, Archiver};
use super::elector::{Elector, ElectorConfig, ElectorReport};
use super::events::{EventTrimConfig, EventTrimReport, EventTrimmer};
use super::pruner::{WorkerPruneConfig, WorkerPruneReport, WorkerPruner};
use super::rescuer::{RescueConfig, RescueReport, Rescuer, RunawayConfig, RunawayReaper, RunawayReport};
use super::retention::{RetentionReport, RetentionSweepConfig, RetentionSweeper};
use super::scheduler::{SchedulerFireConfig, SchedulerFireReport, SchedulerFirer};
use crate::error::{Error, Result};
use crate::queue::Queue;

/// The default time between maintenance rounds.
pub const DEFAULT_MAINTENANCE_INTERVAL: Duration = Duration::from_secs(1);

/// Configuration of every maintenance service and how often they run.
#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceConfig {
    /// Time between rounds (default [`DEFAULT_MAINTENANCE_INTERVAL`], 1 s). Must be at most
    /// half the leader lease ttl. Every round of every worker campaigns, so a worker takes over
    /// within one interval of a lapsed cleaner lease, and the leader's rescue runs once per
    /// interval: a dead worker's job is back at most `elector.ttl + interval` after its own
    /// lease lapsed (6 s with the defaults).
    pub interval: Duration,
    /// The leader lease.
    pub elector: ElectorConfig,
    /// Stale-lease release (its `stale_after` is the job lease window).
    pub rescue: RescueConfig,
    /// The absolute cap on one attempt.
    pub runaway: RunawayConfig,
    /// Archival of terminal jobs.
    pub archive: ArchiveConfig,
    /// Retention windows.
    pub retention: RetentionSweepConfig,
    /// Worker registry pruning.
    pub prune: WorkerPruneConfig,
    /// Job scheduler firing.
    pub schedulers: SchedulerFireConfig,
    /// Events stream retention.
    pub events: EventTrimConfig,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        MaintenanceConfig {
            interval: DEFAULT_MAINTENANCE_INTERVAL,
            elector: ElectorConfig::default(),
            rescue: RescueConfig::default(),
            runaway: RunawayConfig::default(),
            archive: ArchiveConfig::default(),
            retention: RetentionSweepConfig::default(),
            prune: WorkerPruneConfig::default(),
            schedulers: SchedulerFireConfig::default(),
            events: EventTrimConfig::default(),
        }
    }
}

impl MaintenanceConfig {
    /// Checks every service's config and that the leader renews well within its ttl.
    pub fn validate(&self) -> Result<()> {
        self.elector.validate()?;
        self.rescue.validate()?;
        self.runaway.validate()?;
        self.archive.validate()?;
        self.retention.validate()?;
        self.prune.validate()?;
        self.schedulers.validate()?;
        self.events.validate()?;
        if self.interval.is_zero() || self.interval * 2 > self.elector.ttl {
            return Err(Error::invalid(format!(
                "maintenance interval {} ms must be positive and at most half the leader lease ttl {} ms",
                self.interval.as_millis(),
                self.elector.ttl.as_millis()
            )));
        }
        Ok(())
    }
}

/// What one maintenance round did; the service reports are `None` when this process was
/// not the elected cleaner.
#[derive(Debug, Clone, PartialEq)]
pub struct MaintenanceReport {
    /// The election round.
    pub election: ElectorReport,
    /// Stale leases released.
    pub rescue: Option<RescueReport>,
    /// Runaway attempts expired.
    pub runaway: Option<RunawayReport>,
    /// Jobs archived.
    pub archive: Option<ArchiveReport>,
    /// Retention applied.
    pub retention: Option<RetentionReport>,
    /// Workers pruned.
    pub prune: Option<WorkerPruneReport>,
    /// Scheduler slots fired.
    pub schedulers: Option<SchedulerFireReport>,
    /// Events trimmed.
    pub events: Option<EventTrimReport>,
}

/// Runs the services under leader election.
#[derive(Debug, Clone)]
pub struct Maintainer {
    elector: Elector,
    rescuer: Rescuer,
    runaway: RunawayReaper,
    archiver: Archiver,
    retention: RetentionSweeper,
    pruner: WorkerPruner,
    firer: SchedulerFirer,
    trimmer: EventTrimmer,
    interval: Duration,
    leader: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Maintainer {
    /// A maintainer campaigning as `holder` (a worker id) on `queue`'s namespace.
    pub fn new(queue: &Queue, config: MaintenanceConfig, holder: impl Into<String>) -> Result<Self> {
        config.validate()?;
        Ok(Maintainer {
            elector: Elector::new(queue, holder, config.elector.clone())?,
            rescuer: Rescuer::new(queue, config.rescue)?,
            runaway: RunawayReaper::new(queue, config.runaway)?,
            archiver: Archiver::new(queue, config.archive)?,
            retention: RetentionSweeper::new(queue, config.retention)?,
            pruner: WorkerPruner::new(queue, config.prune)?,
            firer: SchedulerFirer::new(queue, config.schedulers)?,
            trimmer: EventTrimmer::new(queue, config.events)?,
            interval: config.interval,
            leader: Default::default(),
        })
    }

    /// One round: campaign, and if elected run every service once.
    pub async fn run_once(&self) -> Result<MaintenanceReport> {
        let election = self.elector.run_once().await?;
        self.leader.store(election.leader, std::sync::atomic::Ordering::Release);
        if !election.leader {
            return Ok(MaintenanceReport {
                election,
                rescue: None,
                runaway: None,
                archive: None,
                retention: None,
                prune: None,
                schedulers: None,
                events: None,
            });
        }
        Ok(MaintenanceReport {
            rescue: Some(self.rescuer.run_once().await?),
            runaway: Some(self.runaway.run_once().await?),
            archive: Some(self.archiver.run_once().await?),
            retention: Some(self.retention.run_once().await?),
            prune: Some(self.pruner.run_once().await?),
            schedulers: Some(self.firer.run_once().await?),
            events: Some(self.trimmer.run_once().await?),
            election,
        })
    }

    /// Fires due scheduler slots when the last round elected this maintainer; `None` when it
    /// is not the leader.
    pub async fn fire_schedulers(&self) -> Result<Option<SchedulerFireReport>> {
        if !self.leader.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(None);
        }
        self.firer.run_once().await.map(Some)
    }

    /// Gives up the cleaner lease (on shutdown) so another worker takes over at once.
    pub async fn resign(&self) -> Result<bool> {
        self.elector.resign().await
    }
}

/// A worker's background maintenance loop: a round every interval until `stop`, then resign.
pub(crate) async fn run_maintenance(
    queue: Queue,
    config: MaintenanceConfig,
    holder: String,
    stop: CancellationToken,
) {
    let maintainer = match Maintainer::new(&queue, config, holder) {
        Ok(m) => m,
        Err(e) => {
            tracing::error!(error = %e, "maintenance disabled: bad configuration");
            return;
        }
    };
    let tick = maintainer.firer.tick().min(maintainer.interval);
    'rounds: loop {
        if let Err(e) = maintainer.run_once().await {
            tracing::warn!(error = %e, "maintenance round failed");
        }
        let next_round = tokio::time::Instant::now() + maintainer.interval;
        loop {
            let wake = (tokio::time::Instant::now() + tick).min(next_round);
            tokio::select! {
                _ = stop.cancelled() => break 'rounds,
                _ = tokio::time::sleep_until(wake) => {}
            }
            if tokio::time::Instant::now() >= next_round {
                break;
            }
            if let Err(e) = maintainer.fire_schedulers().await {
                tracing::warn!(error = %e, "scheduler firing failed");
            }
        }
    }
    if let Err(e) = maintainer.resign().await {
        tracing::warn!(error = %e, "could not resign the cleaner lease");
    }
}
