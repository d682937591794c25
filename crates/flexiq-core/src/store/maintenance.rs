//! Archival, retention sweeps and the worker registry: what the elected cleaner runs.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::history::WorkerInfo;
use crate::retention::{EffectiveRetention, RetentionTable, RetentionWindows};

/// Move terminal jobs into the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveTerminalRequest {
    /// Jobs finished before this time (Unix ms) are moved.
    pub cutoff_ms: i64,
    /// Most jobs to move (1 to `MAX_PAGE`).
    pub limit: u32,
    /// Unix ms.
    pub now: i64,
}

/// A retention sweep: counted ([`Maintenance::retention_counts`]) or applied
/// ([`Maintenance::retention_purge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionRequest {
    /// How long each table keeps its rows.
    pub windows: RetentionWindows,
    /// Unix ms: rows older than `now` minus their window go.
    pub now: i64,
}

/// Forget workers that stopped heartbeating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PruneWorkersRequest {
    /// Workers whose last heartbeat is before this time (Unix ms) go.
    pub cutoff_ms: i64,
}

impl ArchiveTerminalRequest {
    /// Checks the batch size.
    pub fn validate(&self) -> Result<()> {
        crate::store::inspect::check_page(self.limit, None)
    }
}

/// Archival, retention and the worker registry.
#[async_trait::async_trait]
pub trait Maintenance: Send + Sync {
    /// Moves up to `limit` terminal jobs finished before `cutoff_ms` into the archive.
    async fn archive_terminal(&self, req: ArchiveTerminalRequest) -> Result<u64>;
    /// Rows per table a purge with `windows` would delete at `now`.
    async fn retention_counts(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>>;
    /// Deletes those rows; returns the counts.
    async fn retention_purge(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>>;
    /// Records what the cleaner applied.
    async fn publish_effective_retention(&self, eff: &EffectiveRetention) -> Result<()>;
    /// What the cleaner last applied; `None` before any sweep.
    async fn effective_retention(&self) -> Result<Option<EffectiveRetention>>;
    /// Registers or refreshes a worker.
    async fn worker_heartbeat(&self, info: &WorkerInfo) -> Result<()>;
    /// Registered workers, each with the ids of the jobs running under its id now.
    async fn list_workers(&self) -> Result<Vec<WorkerInfo>>;
    /// Removes workers whose heartbeat is before `cutoff_ms`.
    async fn prune_workers(&self, req: PruneWorkersRequest) -> Result<u64>;
}
