//! [`Settings`] (deployment-wide, not namespace-scoped) and [`Leadership`] leases.

use std::collections::BTreeMap;

use flexiq_core::options::validate_name;
use flexiq_core::settings::{validate_setting_key, validate_setting_value};
use flexiq_core::store::{Leadership, Settings};
use flexiq_core::{Error, Lease, Result};
use rusqlite::OptionalExtension;

use crate::error::SqlResultExt;
use crate::SqliteStore;

#[async_trait::async_trait]
impl Settings for SqliteStore {
    async fn get_setting(&self, key: &str) -> Result<Option<String>> {
        validate_setting_key(key)?;
        let key = key.to_string();
        self.read(move |conn| {
            conn.prepare_cached("SELECT value FROM settings WHERE key = ?1")
                .db()?
                .query_row([&key], |r| r.get(0))
                .optional()
                .db()
        })
        .await
    }

    async fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        validate_setting_key(key)?;
        validate_setting_value(key, value)?;
        let (key, value) = (key.to_string(), value.to_string());
        self.write(false, move |ctx| {
            ctx.conn
                .prepare_cached(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                )
                .db()?
                .execute((&key, &value))
                .db()?;
            Ok(())
        })
        .await
    }

    async fn set_setting_if(&self, key: &str, expected: Option<&str>, value: &str) -> Result<bool> {
        validate_setting_key(key)?;
        validate_setting_value(key, value)?;
        let (key, expected, value) = (key.to_string(), expected.map(str::to_string), value.to_string());
        self.write(false, move |ctx| {
            let n = match &expected {
                None => ctx
                    .conn
                    .prepare_cached(
                        "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
                    )
                    .db()?
                    .execute((&key, &value))
                    .db()?,
                Some(exp) => ctx
                    .conn
                    .prepare_cached("UPDATE settings SET value = ?2 WHERE key = ?1 AND value = ?3")
                    .db()?
                    .execute((&key, &value, exp))
                    .db()?,
            };
            Ok(n > 0)
        })
        .await
    }

    async fn delete_setting(&self, key: &str) -> Result<bool> {
        validate_setting_key(key)?;
        let key = key.to_string();
        self.write(false, move |ctx| {
            let n =
                ctx.conn.prepare_cached("DELETE FROM settings WHERE key = ?1").db()?.execute([&key]).db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn list_settings(&self) -> Result<BTreeMap<String, String>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached("SELECT key, value FROM settings").db()?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }
}

fn validate_lease(name: &str, holder: &str) -> Result<()> {
    validate_name("lease name", name)?;
    validate_name("lease holder", holder)
}

#[async_trait::async_trait]
impl Leadership for SqliteStore {
    async fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64, now: i64) -> Result<bool> {
        validate_lease(name, holder)?;
        if ttl_ms == 0 {
            return Err(Error::invalid(format!("ttl of lease {name} must be positive")));
        }
        let expires = now.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX));
        let (ns, name, holder) = (self.ns(), name.to_string(), holder.to_string());
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached(
                    "INSERT INTO leases (ns, name, holder, expires_at) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (ns, name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
                     WHERE leases.holder = excluded.holder OR leases.expires_at <= ?5",
                )
                .db()?
                .execute((&*ns, &name, &holder, expires, now))
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn release_lease(&self, name: &str, holder: &str) -> Result<bool> {
        validate_lease(name, holder)?;
        let (ns, name, holder) = (self.ns(), name.to_string(), holder.to_string());
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM leases WHERE ns = ?1 AND name = ?2 AND holder = ?3")
                .db()?
                .execute((&*ns, &name, &holder))
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn lease(&self, name: &str, now: i64) -> Result<Option<Lease>> {
        validate_name("lease name", name)?;
        let (ns, name) = (self.ns(), name.to_string());
        self.read(move |conn| {
            conn.prepare_cached(
                "SELECT name, holder, expires_at FROM leases WHERE ns = ?1 AND name = ?2 AND expires_at > ?3",
            )
            .db()?
            .query_row((&*ns, &name, now), |r| {
                Ok(Lease { name: r.get(0)?, holder: r.get(1)?, expires_at: r.get(2)? })
            })
            .optional()
            .db()
        })
        .await
    }
}
