//! `Leadership` for [`FaultyStore`](super::FaultyStore). Leases pass straight through: the campaign
//! runs one rescuer and elects nobody.

use flexiq_core::store::{AcquireLeaseRequest, Leadership, LeaseRequest, ReleaseLeaseRequest};
use flexiq_core::{Lease, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl Leadership for FaultyStore {
    async fn acquire_lease(&self, req: AcquireLeaseRequest) -> Result<bool> {
        self.inner.acquire_lease(req).await
    }

    async fn release_lease(&self, req: ReleaseLeaseRequest) -> Result<bool> {
        self.inner.release_lease(req).await
    }

    async fn lease(&self, req: LeaseRequest) -> Result<Option<Lease>> {
        self.inner.lease(req).await
    }
}
