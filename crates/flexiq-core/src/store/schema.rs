//! Schema migrations and the contract floor every process of a deployment checks.

use crate::contract::MigrationSummary;
use crate::error::Result;

/// Schema and contract floor.
#[async_trait::async_trait]
pub trait Schema: Send + Sync {
    /// Applies pending migrations; idempotent.
    async fn migrate(&self) -> Result<MigrationSummary>;
    /// The floor.
    async fn min_contract(&self) -> Result<u32>;
    /// Moves the floor (validated against this build's level).
    async fn set_min_contract(&self, level: u32) -> Result<()>;
}
