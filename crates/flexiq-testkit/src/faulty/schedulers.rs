//! `Schedulers` for [`FaultyStore`](super::FaultyStore). Job schedulers pass straight through.

use flexiq_core::store::{
    FireSchedulersRequest, FiredSlot, ListSchedulersRequest, Schedulers, UpsertSchedulerRequest,
};
use flexiq_core::{JobScheduler, Page, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl Schedulers for FaultyStore {
    async fn upsert_job_scheduler(&self, req: UpsertSchedulerRequest) -> Result<JobScheduler> {
        self.inner.upsert_job_scheduler(req).await
    }

    async fn get_job_scheduler(&self, id: &str) -> Result<Option<JobScheduler>> {
        self.inner.get_job_scheduler(id).await
    }

    async fn list_job_schedulers(&self, req: ListSchedulersRequest) -> Result<Page<JobScheduler>> {
        self.inner.list_job_schedulers(req).await
    }

    async fn remove_job_scheduler(&self, id: &str) -> Result<bool> {
        self.inner.remove_job_scheduler(id).await
    }

    async fn count_job_schedulers(&self) -> Result<u64> {
        self.inner.count_job_schedulers().await
    }

    async fn fire_due_schedulers(&self, req: FireSchedulersRequest) -> Result<Vec<FiredSlot>> {
        self.inner.fire_due_schedulers(req).await
    }
}
