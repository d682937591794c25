//! [`Settings`]: the deployment-wide key/value table, the one table without a namespace
//! column, so every namespace sharing the file reads the same values.

use std::collections::BTreeMap;

use flexiq_core::settings::validate_setting_key;
use flexiq_core::store::{SetSettingIfRequest, SetSettingRequest, Settings};
use flexiq_core::Result;
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

    async fn set_setting(&self, req: SetSettingRequest) -> Result<()> {
        req.validate()?;
        let SetSettingRequest { key, value } = req;
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

    async fn set_setting_if(&self, req: SetSettingIfRequest) -> Result<bool> {
        req.validate()?;
        let SetSettingIfRequest { key, expected, value } = req;
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
