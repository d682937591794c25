//! `QueueControl` for [`FaultyStore`](super::FaultyStore). Queue controls pass straight through: a
//! campaign sets them up before its faults start.

use flexiq_core::store::{
    PurgeCompletedRequest, PurgeQueueRequest, QueueConfig, QueueControl, SetConcurrencyRequest,
    SetMaxStalledRequest, SetRateLimitRequest,
};
use flexiq_core::Result;

use super::FaultyStore;

#[async_trait::async_trait]
impl QueueControl for FaultyStore {
    async fn pause(&self, queue: &str) -> Result<()> {
        self.inner.pause(queue).await
    }

    async fn resume(&self, queue: &str) -> Result<()> {
        self.inner.resume(queue).await
    }

    async fn paused_queues(&self) -> Result<Vec<String>> {
        self.inner.paused_queues().await
    }

    async fn set_rate_limit(&self, req: SetRateLimitRequest) -> Result<()> {
        self.inner.set_rate_limit(req).await
    }

    async fn set_concurrency(&self, req: SetConcurrencyRequest) -> Result<()> {
        self.inner.set_concurrency(req).await
    }

    async fn set_max_stalled(&self, req: SetMaxStalledRequest) -> Result<()> {
        self.inner.set_max_stalled(req).await
    }

    async fn queue_config(&self, queue: &str) -> Result<QueueConfig> {
        self.inner.queue_config(queue).await
    }

    async fn purge_queue(&self, req: PurgeQueueRequest) -> Result<u64> {
        self.inner.purge_queue(req).await
    }

    async fn revoke_task(&self, task: &str) -> Result<()> {
        self.inner.revoke_task(task).await
    }

    async fn unrevoke_task(&self, task: &str) -> Result<bool> {
        self.inner.unrevoke_task(task).await
    }

    async fn revoked_tasks(&self) -> Result<Vec<String>> {
        self.inner.revoked_tasks().await
    }

    async fn purge_completed(&self, req: PurgeCompletedRequest) -> Result<u64> {
        self.inner.purge_completed(req).await
    }
}
