//! [`Settings`] for [`PgStore`]: the deployment-wide key/value table, shared by every
//! namespace (so it carries no namespace column).

use std::collections::BTreeMap;

use flexiq_core::settings::validate_setting_key;
use flexiq_core::store::{SetSettingIfRequest, SetSettingRequest, Settings};
use flexiq_core::Result;

use crate::store::PgStore;

#[async_trait::async_trait]
impl Settings for PgStore {
    async fn get_setting(&self, key: &str) -> Result<Option<String>> {
        validate_setting_key(key)?;
        let c = self.conn().await?;
        let sql = self.sql("SELECT value FROM {S}.settings WHERE key = $1");
        Ok(c.opt("get setting", &sql, &[&key]).await?.map(|r| r.get(0)))
    }

    async fn set_setting(&self, req: SetSettingRequest) -> Result<()> {
        req.validate()?;
        let c = self.conn().await?;
        let sql = self.sql(
            "INSERT INTO {S}.settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        );
        c.exec("set setting", &sql, &[&req.key, &req.value]).await?;
        Ok(())
    }

    async fn set_setting_if(&self, req: SetSettingIfRequest) -> Result<bool> {
        req.validate()?;
        let c = self.conn().await?;
        let (key, value) = (&req.key, &req.value);
        let n = match &req.expected {
            None => {
                let sql =
                    self.sql("INSERT INTO {S}.settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING");
                c.exec("set setting", &sql, &[key, value]).await?
            }
            Some(old) => {
                let sql = self.sql("UPDATE {S}.settings SET value = $2 WHERE key = $1 AND value = $3");
                c.exec("set setting", &sql, &[key, value, old]).await?
            }
        };
        Ok(n == 1)
    }

    async fn delete_setting(&self, key: &str) -> Result<bool> {
        validate_setting_key(key)?;
        let c = self.conn().await?;
        let sql = self.sql("DELETE FROM {S}.settings WHERE key = $1");
        Ok(c.exec("delete setting", &sql, &[&key]).await? > 0)
    }

    async fn list_settings(&self) -> Result<BTreeMap<String, String>> {
        let c = self.conn().await?;
        let sql = self.sql("SELECT key, value FROM {S}.settings");
        Ok(c.rows("list settings", &sql, &[]).await?.iter().map(|r| (r.get(0), r.get(1))).collect())
    }
}
