//! Worker and per-task configuration, with defaults and validation.

use std::time::Duration;

use flexiq_core::options::validate_name;

use crate::error::{Error, Result};
use crate::services::MaintenanceConfig;

/// Most handlers one worker runs at once.
pub const MAX_CONCURRENCY: u32 = 10_000;

/// How a worker runs.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerConfig {
    /// The id stamped on claimed jobs and in the worker registry (`None`: host, pid and a
    /// random suffix).
    pub worker_id: Option<String>,
    /// Handlers running at once (1 to 10,000; default 8).
    pub concurrency: u32,
    /// Queues to take jobs from; empty means every queue of the namespace.
    pub queues: Vec<String>,
    /// Jobs claimed beyond the free slots and held locally, so a freed slot starts its next
    /// job without a round trip, and claims come in batches. `None`, the default, sizes the
    /// buffer by how fast this worker finishes jobs: about 5 ms of work, between four and 64
    /// per slot (at most 10,000). A number fixes it. Buffered jobs are leased like running
    /// ones, and given back unstarted on shutdown.
    pub prefetch: Option<u32>,
    /// How often leases of running jobs are renewed, in one batched heartbeat that also
    /// delivers cancel requests (default 5 s). Must be under half the lease
    /// (`maintenance.rescue.stale_after`).
    pub heartbeat_interval: Duration,
    /// The longest a worker waits for a wake-up before claiming anyway: a safety net, since
    /// workers block on the store's `wait_for_work` (default 1 s).
    pub poll_interval: Duration,
    /// On shutdown, how long running handlers may take to finish before they are cancelled
    /// and their jobs given back (default 30 s).
    pub shutdown_timeout: Duration,
    /// How long finished attempts are gathered before their acks are written in one batch
    /// (default 2 ms; zero writes each completion as soon as the writer is free).
    pub ack_batch_window: Duration,
    /// Most acks in one batch (default 512).
    pub ack_batch_max: usize,
    /// The maintenance services this worker runs when elected cleaner of its namespace
    /// (`None`: this worker never cleans). Its `rescue.stale_after` is the lease window.
    pub maintenance: Option<MaintenanceConfig>,
    /// Where this worker serves Prometheus metrics (`GET /metrics`): its namespace's
    /// store-level gauges plus its own handler latencies, retries, claim batch sizes and lost
    /// leases (see [`crate::observe`]). `None`, the default, serves and records nothing.
    pub metrics_bind: Option<std::net::SocketAddr>,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            worker_id: None,
            concurrency: 8,
            queues: Vec::new(),
            prefetch: None,
            heartbeat_interval: Duration::from_secs(5),
            poll_interval: Duration::from_secs(1),
            shutdown_timeout: Duration::from_secs(30),
            ack_batch_window: Duration::from_millis(2),
            ack_batch_max: 512,
            maintenance: Some(MaintenanceConfig::default()),
            metrics_bind: None,
        }
    }
}

/// The least prefetch per slot when none is configured (as Celery's default prefetch
/// multiplier); a worker whose jobs finish fast holds more (see [`WorkerConfig::prefetch`]).
pub const PREFETCH_PER_SLOT: u32 = 4;

impl WorkerConfig {
    /// The prefetch a worker starts with: the configured one, or [`PREFETCH_PER_SLOT`] per
    /// slot, from which an unconfigured one grows with the finish rate.
    pub fn effective_prefetch(&self) -> u32 {
        self.prefetch
            .unwrap_or_else(|| self.concurrency.saturating_mul(PREFETCH_PER_SLOT).min(MAX_CONCURRENCY))
    }

    /// Sets the lease window (the cleaner releases jobs whose heartbeat is older) and a
    /// heartbeat of a third of it. The cleaner's own lease and round interval
    /// ([`MaintenanceConfig::elector`], [`MaintenanceConfig::interval`]) stay as they are: with
    /// their defaults a dead or frozen worker's job is rescued at most about 6 s after its lease
    /// lapsed, whichever worker was cleaner.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.heartbeat_interval = lease / 3;
        if let Some(m) = &mut self.maintenance {
            m.rescue.stale_after = lease;
        }
        self
    }

    /// Checks every field; `InvalidArgument` names the bad one.
    pub fn validate(&self) -> Result<()> {
        if let Some(id) = &self.worker_id {
            validate_name("worker id", id)?;
        }
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(Error::invalid(format!(
                "concurrency {} must be between 1 and {MAX_CONCURRENCY}",
                self.concurrency
            )));
        }
        if let Some(p) = self.prefetch.filter(|p| *p > MAX_CONCURRENCY) {
            return Err(Error::invalid(format!("prefetch {p} is over {MAX_CONCURRENCY}")));
        }
        for q in &self.queues {
            validate_name("queue name", q)?;
        }
        if self.heartbeat_interval < Duration::from_millis(10) {
            return Err(Error::invalid(format!(
                "heartbeat interval {} ms must be at least 10 ms (a lease heartbeats every third of itself, so at least 30 ms)",
                self.heartbeat_interval.as_millis()
            )));
        }
        if self.poll_interval < Duration::from_millis(1) {
            return Err(Error::invalid("poll interval must be at least 1 ms"));
        }
        if self.ack_batch_window > Duration::from_secs(1) {
            return Err(Error::invalid("ack batch window must be at most 1 s"));
        }
        if self.ack_batch_max == 0 {
            return Err(Error::invalid("ack batch max must be at least 1"));
        }
        if let Some(m) = &self.maintenance {
            m.validate()?;
            if self.heartbeat_interval * 2 > m.rescue.stale_after {
                return Err(Error::invalid(format!(
                    "heartbeat interval {} ms must be at most half the lease {} ms",
                    self.heartbeat_interval.as_millis(),
                    m.rescue.stale_after.as_millis()
                )));
            }
        }
        Ok(())
    }
}

/// Options of one registered task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskOptions {
    /// Hard timeout of an attempt when the job carries none: the handler future is dropped,
    /// its token fired, and the attempt fails as retryable.
    pub timeout: Option<Duration>,
    /// Soft timeout: the context's soft-timeout token fires; the attempt keeps running.
    pub soft_timeout: Option<Duration>,
}

impl TaskOptions {
    /// Checks the timeouts: positive, and the soft one below the hard one.
    pub fn validate(&self) -> Result<()> {
        if self.timeout.is_some_and(|t| t.is_zero()) || self.soft_timeout.is_some_and(|t| t.is_zero()) {
            return Err(Error::invalid("task timeouts must be positive"));
        }
        if let (Some(hard), Some(soft)) = (self.timeout, self.soft_timeout) {
            if soft >= hard {
                return Err(Error::invalid("soft timeout must be shorter than the hard timeout"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_defaults_to_four_per_slot_and_can_be_set() {
        assert_eq!(WorkerConfig::default().effective_prefetch(), 8 * PREFETCH_PER_SLOT);
        let c = |concurrency, prefetch| WorkerConfig { concurrency, prefetch, ..Default::default() };
        assert_eq!(c(1, None).effective_prefetch(), PREFETCH_PER_SLOT);
        assert_eq!(c(MAX_CONCURRENCY, None).effective_prefetch(), MAX_CONCURRENCY);
        assert_eq!(c(8, Some(0)).effective_prefetch(), 0);
        assert!(c(8, Some(MAX_CONCURRENCY + 1)).validate().unwrap_err().to_string().contains("prefetch"));
    }

    #[test]
    fn defaults_validate_and_bad_fields_are_named() {
        assert!(WorkerConfig::default().validate().is_ok());
        assert!(WorkerConfig::default().with_lease(Duration::from_millis(300)).validate().is_ok());
        let bad = |c: WorkerConfig| c.validate().unwrap_err().to_string();
        assert!(bad(WorkerConfig { concurrency: 0, ..Default::default() }).contains("concurrency"));
        assert!(bad(WorkerConfig { queues: vec![String::new()], ..Default::default() }).contains("queue"));
        assert!(bad(WorkerConfig { ack_batch_max: 0, ..Default::default() }).contains("ack batch"));
        assert!(bad(WorkerConfig { heartbeat_interval: Duration::from_secs(60), ..Default::default() })
            .contains("half the lease"));
        assert!(bad(WorkerConfig { poll_interval: Duration::ZERO, ..Default::default() }).contains("poll"));
        assert!(TaskOptions { timeout: Some(Duration::ZERO), soft_timeout: None }.validate().is_err());
        let inverted =
            TaskOptions { timeout: Some(Duration::from_secs(1)), soft_timeout: Some(Duration::from_secs(2)) };
        assert!(inverted.validate().is_err());
    }
}
