//! `Inspect` for [`FaultyStore`](super::FaultyStore). Listings and counts pass straight through:
//! the campaign checks its invariants with them, so a fault here would only hide what the store
//! holds.

use std::collections::BTreeMap;

use flexiq_core::store::{
    Inspect, ListArchivedAfterRequest, ListArchivedRequest, ListJobsAfterRequest, ListJobsRequest,
};
use flexiq_core::{Job, JobDag, JobError, JobId, JobStatus, Page, Result, Stats};

use super::FaultyStore;

#[async_trait::async_trait]
impl Inspect for FaultyStore {
    async fn list_jobs(&self, req: ListJobsRequest) -> Result<Vec<Job>> {
        self.inner.list_jobs(req).await
    }

    async fn list_jobs_after(&self, req: ListJobsAfterRequest) -> Result<Page<Job>> {
        self.inner.list_jobs_after(req).await
    }

    async fn stats(&self, queue: Option<&str>) -> Result<Stats> {
        self.inner.stats(queue).await
    }

    async fn stats_by_queue(&self) -> Result<BTreeMap<String, Stats>> {
        self.inner.stats_by_queue().await
    }

    async fn stats_all_queues(&self) -> Result<BTreeMap<String, Stats>> {
        self.inner.stats_all_queues().await
    }

    async fn count_pending(&self, queue: &str) -> Result<u64> {
        self.inner.count_pending(queue).await
    }

    async fn job_status(&self, id: &JobId) -> Result<Option<JobStatus>> {
        self.inner.job_status(id).await
    }

    async fn job_errors(&self, id: &JobId) -> Result<Vec<JobError>> {
        self.inner.job_errors(id).await
    }

    async fn job_dag(&self, id: &JobId) -> Result<JobDag> {
        self.inner.job_dag(id).await
    }

    async fn list_archived(&self, req: ListArchivedRequest) -> Result<Vec<Job>> {
        self.inner.list_archived(req).await
    }

    async fn list_archived_after(&self, req: ListArchivedAfterRequest) -> Result<Page<Job>> {
        self.inner.list_archived_after(req).await
    }
}
