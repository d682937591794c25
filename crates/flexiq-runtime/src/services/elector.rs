//! Leader election: one cleaner per namespace, by a lease with expiry in the store.
//!
//! The holder renews the lease on every [`Elector::run_once`]; if it dies, the lease lapses
//! after its ttl and the next elector to ask takes over.

use std::time::Duration;

use flexiq_core::options::validate_name;
use flexiq_core::store::{AcquireLeaseRequest, LeaseRequest, ReleaseLeaseRequest};

use crate::error::{Error, Result};
use crate::queue::Queue;

/// Lease name the maintenance cleaner is elected under.
pub const CLEANER_LEASE: &str = "flexiq.cleaner";

/// How an [`Elector`] holds its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectorConfig {
    /// The lease's name (namespace-scoped by the store; default `"flexiq.cleaner"`).
    pub lease_name: String,
    /// How long one acquisition or renewal holds (default [`DEFAULT_CLEANER_TTL`], 5 s). A
    /// cleaner that dies or freezes holds back every rescue of its namespace until this lapses,
    /// so it bounds how late the jobs of a dead worker come back beyond their own lease.
    pub ttl: Duration,
}

/// The default ttl of the cleaner lease: short, because while a frozen cleaner's lease runs no
/// one rescues the jobs of dead workers.
pub const DEFAULT_CLEANER_TTL: Duration = Duration::from_secs(5);

impl Default for ElectorConfig {
    fn default() -> Self {
        ElectorConfig { lease_name: CLEANER_LEASE.to_string(), ttl: DEFAULT_CLEANER_TTL }
    }
}

impl ElectorConfig {
    /// Checks the name and a ttl of at least 10 ms.
    pub fn validate(&self) -> Result<()> {
        validate_name("lease name", &self.lease_name)?;
        if self.ttl < Duration::from_millis(10) {
            return Err(Error::invalid("leader lease ttl must be at least 10 ms"));
        }
        Ok(())
    }
}

/// What one election round found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectorReport {
    /// Whether this elector holds the lease now.
    pub leader: bool,
    /// Who holds it (this elector or another), if anyone.
    pub holder: Option<String>,
    /// When the current holding lapses (Unix ms), if held.
    pub expires_at: Option<i64>,
}

/// Acquires and renews a named lease for one holder.
#[derive(Debug, Clone)]
pub struct Elector {
    queue: Queue,
    holder: String,
    config: ElectorConfig,
}

impl Elector {
    /// An elector for `holder` (a worker id).
    pub fn new(queue: &Queue, holder: impl Into<String>, config: ElectorConfig) -> Result<Self> {
        config.validate()?;
        let holder = holder.into();
        validate_name("lease holder", &holder)?;
        Ok(Elector { queue: queue.clone(), holder, config })
    }

    /// The holder this elector campaigns for.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Takes or renews the lease if it is free, lapsed or already ours.
    pub async fn run_once(&self) -> Result<ElectorReport> {
        let store = self.queue.store();
        let now = self.queue.now_ms();
        let ttl_ms = u64::try_from(self.config.ttl.as_millis()).unwrap_or(u64::MAX);
        let name = self.config.lease_name.clone();
        let take = AcquireLeaseRequest { name: name.clone(), holder: self.holder.clone(), ttl_ms, now };
        let leader = store.acquire_lease(take).await?;
        let lease = store.lease(LeaseRequest { name, now }).await?;
        if leader {
            tracing::debug!(holder = %self.holder, lease = %self.config.lease_name, "holding leader lease");
        }
        Ok(ElectorReport {
            leader,
            holder: lease.as_ref().map(|l| l.holder.clone()),
            expires_at: lease.map(|l| l.expires_at),
        })
    }

    /// Gives the lease up so another elector can take over at once; false when not held.
    pub async fn resign(&self) -> Result<bool> {
        let req = ReleaseLeaseRequest { name: self.config.lease_name.clone(), holder: self.holder.clone() };
        Ok(self.queue.store().release_lease(req).await?)
    }
}
