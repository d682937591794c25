//! Named leases with expiry, which elect one cleaner per namespace.

use crate::error::{Error, Result};
use crate::history::Lease;
use crate::options::validate_name;

/// Take or renew a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcquireLeaseRequest {
    /// The lease.
    pub name: String,
    /// Who takes it.
    pub holder: String,
    /// How long it lasts from `now` (at least 1).
    pub ttl_ms: u64,
    /// Unix ms.
    pub now: i64,
}

/// Give a lease up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseLeaseRequest {
    /// The lease.
    pub name: String,
    /// Who gives it up.
    pub holder: String,
}

/// Read a lease's current holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRequest {
    /// The lease.
    pub name: String,
    /// Unix ms: a lease that lapsed before it has no holder.
    pub now: i64,
}

impl AcquireLeaseRequest {
    /// Checks the names and that the lease lasts at least 1 ms.
    pub fn validate(&self) -> Result<()> {
        validate_name("lease name", &self.name)?;
        validate_name("lease holder", &self.holder)?;
        if self.ttl_ms == 0 || i64::try_from(self.ttl_ms).is_err() {
            return Err(Error::invalid(format!(
                "lease {} needs a ttl from 1 ms to {} ms, not {}",
                self.name,
                i64::MAX,
                self.ttl_ms
            )));
        }
        Ok(())
    }
}

impl ReleaseLeaseRequest {
    /// Checks the names.
    pub fn validate(&self) -> Result<()> {
        validate_name("lease name", &self.name)?;
        validate_name("lease holder", &self.holder)
    }
}

impl LeaseRequest {
    /// Checks the name.
    pub fn validate(&self) -> Result<()> {
        validate_name("lease name", &self.name)
    }
}

/// Named leases with expiry, for electing one cleaner per namespace.
#[async_trait::async_trait]
pub trait Leadership: Send + Sync {
    /// Takes the lease if free, lapsed or already held by `holder` (renewing it) until
    /// `now + ttl_ms`; false when someone else holds it.
    async fn acquire_lease(&self, req: AcquireLeaseRequest) -> Result<bool>;
    /// Gives the lease up; false when `holder` did not hold it.
    async fn release_lease(&self, req: ReleaseLeaseRequest) -> Result<bool>;
    /// The current unlapsed holder.
    async fn lease(&self, req: LeaseRequest) -> Result<Option<Lease>>;
}
