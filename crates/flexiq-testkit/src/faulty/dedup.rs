//! `Deduplication` for [`FaultyStore`](super::FaultyStore). Dedup records pass straight through.

use flexiq_core::store::{DedupJobIdRequest, Deduplication};
use flexiq_core::{JobId, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl Deduplication for FaultyStore {
    async fn dedup_job_id(&self, req: DedupJobIdRequest) -> Result<Option<JobId>> {
        self.inner.dedup_job_id(req).await
    }

    async fn delete_dedup_key(&self, key: &str) -> Result<bool> {
        self.inner.delete_dedup_key(key).await
    }
}
