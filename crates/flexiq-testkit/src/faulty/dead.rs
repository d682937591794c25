//! `DeadLetters` for [`FaultyStore`](super::FaultyStore). The dead-letter queue passes straight
//! through: no runtime path retries through it.

use flexiq_core::store::{
    DeadLetters, DeadLettersAfterRequest, DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest,
};
use flexiq_core::{DeadJob, JobId, Page, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl DeadLetters for FaultyStore {
    async fn dead_letters(&self, req: DeadLettersRequest) -> Result<Vec<DeadJob>> {
        self.inner.dead_letters(req).await
    }

    async fn dead_letters_after(&self, req: DeadLettersAfterRequest) -> Result<Page<DeadJob>> {
        self.inner.dead_letters_after(req).await
    }

    async fn retry_dead(&self, req: RetryDeadRequest) -> Result<JobId> {
        self.inner.retry_dead(req).await
    }

    async fn delete_dead(&self, dead_id: &str) -> Result<bool> {
        self.inner.delete_dead(dead_id).await
    }

    async fn purge_dead(&self, req: PurgeDeadRequest) -> Result<u64> {
        self.inner.purge_dead(req).await
    }

    async fn purge_dead_by_task(&self, task: &str) -> Result<u64> {
        self.inner.purge_dead_by_task(task).await
    }
}
