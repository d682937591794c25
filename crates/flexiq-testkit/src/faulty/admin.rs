//! `Admin` for [`FaultyStore`](super::FaultyStore). Queue administration passes straight through.

use flexiq_core::store::{
    Admin, CleanRequest, DrainRequest, ObliterateRequest, RateLimitTtlRequest, RemoveJobRequest, Removed,
    RetryJobsRequest,
};
use flexiq_core::{JobId, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl Admin for FaultyStore {
    async fn clean(&self, req: CleanRequest) -> Result<Vec<JobId>> {
        self.inner.clean(req).await
    }

    async fn drain(&self, req: DrainRequest) -> Result<u64> {
        self.inner.drain(req).await
    }

    async fn obliterate(&self, req: ObliterateRequest) -> Result<u64> {
        self.inner.obliterate(req).await
    }

    async fn remove_orphans(&self) -> Result<u64> {
        self.inner.remove_orphans().await
    }

    async fn retry_jobs(&self, req: RetryJobsRequest) -> Result<u64> {
        self.inner.retry_jobs(req).await
    }

    async fn remove_job(&self, req: RemoveJobRequest) -> Result<Removed> {
        self.inner.remove_job(req).await
    }

    async fn rate_limit_ttl(&self, req: RateLimitTtlRequest) -> Result<u64> {
        self.inner.rate_limit_ttl(req).await
    }
}
