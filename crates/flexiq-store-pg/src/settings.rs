//! [`Settings`] (deployment-wide, not namespaced) and [`Leadership`] leases for [`PgStore`].

use std::collections::BTreeMap;

use flexiq_core::settings::{validate_setting_key, validate_setting_value};
use flexiq_core::store::{Leadership, Settings};
use flexiq_core::{Error, Lease, Result};

use crate::db::i64_of;
use crate::store::PgStore;

#[async_trait::async_trait]
impl Settings for PgStore {
    async fn get_setting(&self, key: &str) -> Result<Option<String>> {
        validate_setting_key(key)?;
        let c = self.conn().await?;
        let sql = self.sql("SELECT value FROM {S}.settings WHERE key = $1");
        Ok(c.opt("get setting", &sql, &[&key]).await?.map(|r| r.get(0)))
    }

    async fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        validate_setting_key(key)?;
        validate_setting_value(key, value)?;
        let c = self.conn().await?;
        let sql = self.sql(
            "INSERT INTO {S}.settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        );
        c.exec("set setting", &sql, &[&key, &value]).await?;
        Ok(())
    }

    async fn set_setting_if(&self, key: &str, expected: Option<&str>, value: &str) -> Result<bool> {
        validate_setting_key(key)?;
        validate_setting_value(key, value)?;
        let c = self.conn().await?;
        let n = match expected {
            None => {
                let sql =
                    self.sql("INSERT INTO {S}.settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING");
                c.exec("set setting", &sql, &[&key, &value]).await?
            }
            Some(old) => {
                let sql = self.sql("UPDATE {S}.settings SET value = $2 WHERE key = $1 AND value = $3");
                c.exec("set setting", &sql, &[&key, &value, &old]).await?
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

fn check_lease(name: &str, holder: Option<&str>) -> Result<()> {
    flexiq_core::options::validate_name("lease name", name)?;
    if let Some(h) = holder {
        flexiq_core::options::validate_name("lease holder", h)?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl Leadership for PgStore {
    async fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64, now: i64) -> Result<bool> {
        check_lease(name, Some(holder))?;
        if ttl_ms == 0 {
            return Err(Error::invalid(format!("lease {name} needs a positive ttl")));
        }
        let expires = now.saturating_add(i64_of("lease ttl ms", ttl_ms)?);
        let ns: &str = &self.ns;
        let sql = self.sql(
            "INSERT INTO {S}.leases AS l (namespace, name, holder, expires_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (namespace, name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at \
             WHERE l.holder = EXCLUDED.holder OR l.expires_at <= $5 RETURNING holder",
        );
        let c = self.conn().await?;
        Ok(c.opt("acquire lease", &sql, &[&ns, &name, &holder, &expires, &now]).await?.is_some())
    }

    async fn release_lease(&self, name: &str, holder: &str) -> Result<bool> {
        check_lease(name, Some(holder))?;
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.leases WHERE namespace = $1 AND name = $2 AND holder = $3");
        let c = self.conn().await?;
        Ok(c.exec("release lease", &sql, &[&ns, &name, &holder]).await? > 0)
    }

    async fn lease(&self, name: &str, now: i64) -> Result<Option<Lease>> {
        check_lease(name, None)?;
        let ns: &str = &self.ns;
        let sql =
            self.sql("SELECT name, holder, expires_at FROM {S}.leases WHERE namespace = $1 AND name = $2 AND expires_at > $3");
        let c = self.conn().await?;
        Ok(c.opt("read lease", &sql, &[&ns, &name, &now]).await?.map(|r| Lease {
            name: r.get(0),
            holder: r.get(1),
            expires_at: r.get(2),
        }))
    }
}
