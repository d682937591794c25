//! Schema and contract floor. Redis has no schema to migrate: `migrate()` sets the floor's
//! default and backfills the combined listing indexes once ([`crate::backfill`]); the floor
//! is the deployment-wide `{prefix}:meta` field `min_contract`.

use flexiq_core::store::Schema;
use flexiq_core::{validate_new_floor, MigrationSummary, Result};

use crate::conn::{n, s};
use crate::store::RedisStore;

#[async_trait::async_trait]
impl Schema for RedisStore {
    async fn migrate(&self) -> Result<MigrationSummary> {
        self.ctx.check()?;
        self.ctx.conn.cmd("HSETNX", vec![s(self.ctx.keys.meta()), s("min_contract"), n(1)]).await?;
        self.backfill_combined_indexes().await?;
        Ok(MigrationSummary { schemaless: true, ..Default::default() })
    }

    async fn min_contract(&self) -> Result<u32> {
        self.ctx.check()?;
        self.floor().await
    }

    async fn set_min_contract(&self, level: u32) -> Result<()> {
        self.ctx.check()?;
        let level = validate_new_floor(i64::from(level))?;
        self.ctx
            .conn
            .cmd("HSET", vec![s(self.ctx.keys.meta()), s("min_contract"), n(i64::from(level))])
            .await?;
        Ok(())
    }
}
