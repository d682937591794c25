//! [`Schema`] for [`PgStore`]: migrations and the contract floor through the store handle's
//! pool, on the runner in `migrate.rs` that connecting and [`PgStore::migrate_schema`] share.

use flexiq_core::store::Schema;
use flexiq_core::{MigrationSummary, Result};

use crate::migrate::{read_floor, run};
use crate::store::PgStore;

#[async_trait::async_trait]
impl Schema for PgStore {
    async fn migrate(&self) -> Result<MigrationSummary> {
        let c = self.conn().await?;
        run(&c, self.schema(), self.quoted_schema()).await
    }

    async fn min_contract(&self) -> Result<u32> {
        let c = self.conn().await?;
        read_floor(&c, self.quoted_schema()).await
    }

    async fn set_min_contract(&self, level: u32) -> Result<()> {
        let level = flexiq_core::validate_new_floor(i64::from(level))?;
        let c = self.conn().await?;
        let sql = self.sql("UPDATE {S}.meta SET value = $1 WHERE key = 'contract_floor'");
        c.exec("set contract floor", &sql, &[&i64::from(level)]).await?;
        Ok(())
    }
}
