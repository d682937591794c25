//! Settings: the deployment-wide key/value hash `{prefix}:settings`, shared by every namespace
//! (the one store surface not under the namespace's hash tag).

use std::collections::BTreeMap;

use flexiq_core::settings::validate_setting_key;
use flexiq_core::store::{SetSettingIfRequest, SetSettingRequest, Settings};
use flexiq_core::Result;

use crate::conn::s;
use crate::row::{self, int, text};
use crate::store::RedisStore;

#[async_trait::async_trait]
impl Settings for RedisStore {
    async fn get_setting(&self, key: &str) -> Result<Option<String>> {
        self.ctx.check()?;
        validate_setting_key(key)?;
        Ok(text(&self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.settings()), s(key)]).await?))
    }

    async fn set_setting(&self, req: SetSettingRequest) -> Result<()> {
        self.ctx.check()?;
        req.validate()?;
        self.ctx.conn.cmd("HSET", vec![s(self.ctx.keys.settings()), s(req.key), s(req.value)]).await?;
        Ok(())
    }

    async fn set_setting_if(&self, req: SetSettingIfRequest) -> Result<bool> {
        self.ctx.check()?;
        req.validate()?;
        let SetSettingIfRequest { key, expected, value } = req;
        let args = vec![
            s("setting_if"),
            s(key),
            s(if expected.is_some() { "1" } else { "0" }),
            s(expected.unwrap_or_default()),
            s(value),
        ];
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.global, args).await?;
        Ok(int(&v) == Some(1))
    }

    async fn delete_setting(&self, key: &str) -> Result<bool> {
        self.ctx.check()?;
        validate_setting_key(key)?;
        let v = self.ctx.conn.cmd("HDEL", vec![s(self.ctx.keys.settings()), s(key)]).await?;
        Ok(int(&v) == Some(1))
    }

    async fn list_settings(&self) -> Result<BTreeMap<String, String>> {
        self.ctx.check()?;
        let flat = row::strings(self.ctx.conn.cmd("HGETALL", vec![s(self.ctx.keys.settings())]).await?);
        Ok(flat.chunks(2).filter(|p| p.len() == 2).map(|p| (p[0].clone(), p[1].clone())).collect())
    }
}
