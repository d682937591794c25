//! Settings, leader leases, maintenance sweeps and the schema.

use std::collections::BTreeMap;

use crate::contract::MigrationSummary;
use crate::error::Result;
use crate::history::{Lease, WorkerInfo};
use crate::retention::{EffectiveRetention, RetentionTable, RetentionWindows};

/// The deployment-wide key/value store (not namespace-scoped).
#[async_trait::async_trait]
pub trait Settings: Send + Sync {
    /// A value, or `None` when never set.
    async fn get_setting(&self, key: &str) -> Result<Option<String>>;
    /// Inserts or overwrites.
    async fn set_setting(&self, key: &str, value: &str) -> Result<()>;
    /// Writes only while `key` holds `expected` (`None`: must be unset); false otherwise.
    async fn set_setting_if(&self, key: &str, expected: Option<&str>, value: &str) -> Result<bool>;
    /// Removes a key; false when it did not exist.
    async fn delete_setting(&self, key: &str) -> Result<bool>;
    /// Every key and value.
    async fn list_settings(&self) -> Result<BTreeMap<String, String>>;
}

/// Named leases with expiry, for electing one cleaner per namespace.
#[async_trait::async_trait]
pub trait Leadership: Send + Sync {
    /// Takes the lease if free, lapsed or already held by `holder` (renewing it) until
    /// `now + ttl_ms`; false when someone else holds it.
    async fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64, now: i64) -> Result<bool>;
    /// Gives the lease up; false when `holder` did not hold it.
    async fn release_lease(&self, name: &str, holder: &str) -> Result<bool>;
    /// The current unlapsed holder.
    async fn lease(&self, name: &str, now: i64) -> Result<Option<Lease>>;
}

/// Archival, retention and the worker registry.
#[async_trait::async_trait]
pub trait Maintenance: Send + Sync {
    /// Moves up to `limit` terminal jobs finished before `cutoff` (Unix ms) into the archive.
    async fn archive_terminal(&self, cutoff: i64, limit: u32, now: i64) -> Result<u64>;
    /// Rows per table a purge with `windows` would delete at `now`.
    async fn retention_counts(
        &self,
        windows: &RetentionWindows,
        now: i64,
    ) -> Result<BTreeMap<RetentionTable, u64>>;
    /// Deletes those rows; returns the counts.
    async fn retention_purge(
        &self,
        windows: &RetentionWindows,
        now: i64,
    ) -> Result<BTreeMap<RetentionTable, u64>>;
    /// Records what the cleaner applied.
    async fn publish_effective_retention(&self, eff: &EffectiveRetention) -> Result<()>;
    /// What the cleaner last applied; `None` before any sweep.
    async fn effective_retention(&self) -> Result<Option<EffectiveRetention>>;
    /// Registers or refreshes a worker.
    async fn worker_heartbeat(&self, info: &WorkerInfo) -> Result<()>;
    /// Registered workers.
    async fn list_workers(&self) -> Result<Vec<WorkerInfo>>;
    /// Removes workers whose heartbeat is before `cutoff` (Unix ms).
    async fn prune_workers(&self, cutoff: i64) -> Result<u64>;
}

/// Schema and contract floor.
#[async_trait::async_trait]
pub trait Schema: Send + Sync {
    /// Applies pending migrations; idempotent.
    async fn migrate(&self) -> Result<MigrationSummary>;
    /// The floor.
    async fn min_contract(&self) -> Result<u32>;
    /// Moves the floor (validated against this build's level).
    async fn set_min_contract(&self, level: u32) -> Result<()>;
}
