//! `Schema` for [`FaultyStore`](super::FaultyStore). Migrations and the contract floor pass
//! straight through.

use flexiq_core::store::Schema;
use flexiq_core::{MigrationSummary, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl Schema for FaultyStore {
    async fn migrate(&self) -> Result<MigrationSummary> {
        self.inner.migrate().await
    }

    async fn min_contract(&self) -> Result<u32> {
        self.inner.min_contract().await
    }

    async fn set_min_contract(&self, level: u32) -> Result<()> {
        self.inner.set_min_contract(level).await
    }
}
