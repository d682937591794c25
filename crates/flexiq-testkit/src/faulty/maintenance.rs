//! `Maintenance` for [`FaultyStore`](super::FaultyStore). Archival, retention and the worker
//! registry pass straight through.

use std::collections::BTreeMap;

use flexiq_core::store::{ArchiveTerminalRequest, Maintenance, PruneWorkersRequest, RetentionRequest};
use flexiq_core::{EffectiveRetention, Result, RetentionTable, WorkerInfo};

use super::FaultyStore;

#[async_trait::async_trait]
impl Maintenance for FaultyStore {
    async fn archive_terminal(&self, req: ArchiveTerminalRequest) -> Result<u64> {
        self.inner.archive_terminal(req).await
    }

    async fn retention_counts(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        self.inner.retention_counts(req).await
    }

    async fn retention_purge(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        self.inner.retention_purge(req).await
    }

    async fn publish_effective_retention(&self, eff: &EffectiveRetention) -> Result<()> {
        self.inner.publish_effective_retention(eff).await
    }

    async fn effective_retention(&self) -> Result<Option<EffectiveRetention>> {
        self.inner.effective_retention().await
    }

    async fn worker_heartbeat(&self, info: &WorkerInfo) -> Result<()> {
        self.inner.worker_heartbeat(info).await
    }

    async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        self.inner.list_workers().await
    }

    async fn prune_workers(&self, req: PruneWorkersRequest) -> Result<u64> {
        self.inner.prune_workers(req).await
    }
}
