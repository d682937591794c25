//! `Reschedule` for [`FaultyStore`](super::FaultyStore). Rescheduling passes straight through.

use flexiq_core::store::{
    ChangeDelayRequest, ChangePriorityRequest, PromoteJobsRequest, PromoteRequest, Reschedule,
};
use flexiq_core::Result;

use super::FaultyStore;

#[async_trait::async_trait]
impl Reschedule for FaultyStore {
    async fn change_delay(&self, req: ChangeDelayRequest) -> Result<()> {
        self.inner.change_delay(req).await
    }

    async fn promote(&self, req: PromoteRequest) -> Result<()> {
        self.inner.promote(req).await
    }

    async fn promote_jobs(&self, req: PromoteJobsRequest) -> Result<u64> {
        self.inner.promote_jobs(req).await
    }

    async fn change_priority(&self, req: ChangePriorityRequest) -> Result<()> {
        self.inner.change_priority(req).await
    }
}
