//! Settings (deployment-wide), leader leases, maintenance sweeps, the worker registry and
//! the schema / contract floor.

use std::collections::BTreeMap;

use flexiq_core::history::{Lease, WorkerInfo};
use flexiq_core::options::validate_name;
use flexiq_core::retention::{EffectiveRetention, RetentionTable, RetentionWindows};
use flexiq_core::settings::{validate_setting_key, validate_setting_value};
use flexiq_core::store::{Leadership, Maintenance, Schema, Settings};
use flexiq_core::{validate_new_floor, Error, MigrationSummary, Result};

use crate::conn::{n, s};
use crate::control::ARCHIVE_BATCH;
use crate::row::{self, int, text};
use crate::store::RedisStore;

impl RedisStore {
    async fn retention(
        &self,
        windows: &RetentionWindows,
        now: i64,
        mode: &str,
    ) -> Result<BTreeMap<RetentionTable, u64>> {
        let mut out = BTreeMap::new();
        for t in RetentionTable::ALL {
            let Some(cutoff) = windows.cutoff(t, now) else { continue };
            let args = vec![s(t.key()), n(cutoff), s(mode)];
            let v = self.ctx.conn.script(&self.ctx.conn.scripts.retention, &self.ctx.keys.base, args).await?;
            out.insert(t, int(&v).unwrap_or(0).max(0) as u64);
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl Settings for RedisStore {
    async fn get_setting(&self, key: &str) -> Result<Option<String>> {
        self.ctx.check()?;
        validate_setting_key(key)?;
        Ok(text(&self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.settings()), s(key)]).await?))
    }

    async fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        self.ctx.check()?;
        validate_setting_key(key)?;
        validate_setting_value(key, value)?;
        self.ctx.conn.cmd("HSET", vec![s(self.ctx.keys.settings()), s(key), s(value)]).await?;
        Ok(())
    }

    async fn set_setting_if(&self, key: &str, expected: Option<&str>, value: &str) -> Result<bool> {
        self.ctx.check()?;
        validate_setting_key(key)?;
        validate_setting_value(key, value)?;
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

#[async_trait::async_trait]
impl Leadership for RedisStore {
    async fn acquire_lease(&self, name: &str, holder: &str, ttl_ms: u64, now: i64) -> Result<bool> {
        self.ctx.check()?;
        validate_name("lease name", name)?;
        validate_name("lease holder", holder)?;
        if ttl_ms == 0 {
            return Err(Error::invalid(format!("lease {name} needs a ttl of at least 1 ms")));
        }
        let args = vec![s("lease_acquire"), s(name), s(holder), n(ttl_ms as i64), n(now)];
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        Ok(int(&v) == Some(1))
    }

    async fn release_lease(&self, name: &str, holder: &str) -> Result<bool> {
        self.ctx.check()?;
        let args = vec![s("lease_release"), s(name), s(holder)];
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        Ok(int(&v) == Some(1))
    }

    async fn lease(&self, name: &str, now: i64) -> Result<Option<Lease>> {
        self.ctx.check()?;
        let v = self
            .ctx
            .conn
            .cmd("HMGET", vec![s(self.ctx.keys.k(&format!("lease:{name}"))), s("h"), s("x")])
            .await?
            .into_array();
        match (v.first().and_then(text), v.get(1).and_then(int)) {
            (Some(holder), Some(expires_at)) if expires_at > now => {
                Ok(Some(Lease { name: name.to_string(), holder, expires_at }))
            }
            _ => Ok(None),
        }
    }
}

#[async_trait::async_trait]
impl Maintenance for RedisStore {
    async fn archive_terminal(&self, cutoff: i64, limit: u32, now: i64) -> Result<u64> {
        self.ctx.check()?;
        if limit == 0 {
            return Err(Error::invalid("archive limit must be at least 1"));
        }
        let mut left = i64::from(limit);
        let mut total = 0;
        while left > 0 {
            let batch = left.min(ARCHIVE_BATCH);
            let args = vec![n(cutoff), n(batch), n(now), s("archive")];
            let done =
                int(&self.ctx.conn.script(&self.ctx.conn.scripts.archive, &self.ctx.keys.base, args).await?)
                    .unwrap_or(0);
            total += done as u64;
            left -= done;
            if done < batch {
                break;
            }
        }
        Ok(total)
    }

    async fn retention_counts(
        &self,
        windows: &RetentionWindows,
        now: i64,
    ) -> Result<BTreeMap<RetentionTable, u64>> {
        self.ctx.check()?;
        self.retention(windows, now, "count").await
    }

    async fn retention_purge(
        &self,
        windows: &RetentionWindows,
        now: i64,
    ) -> Result<BTreeMap<RetentionTable, u64>> {
        self.ctx.check()?;
        self.retention(windows, now, "purge").await
    }

    async fn publish_effective_retention(&self, eff: &EffectiveRetention) -> Result<()> {
        self.ctx.check()?;
        let json = serde_json::to_string(eff).map_err(Error::backend)?;
        self.ctx.conn.cmd("SET", vec![s(self.ctx.keys.k("effret")), s(json)]).await?;
        Ok(())
    }

    async fn effective_retention(&self) -> Result<Option<EffectiveRetention>> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("GET", vec![s(self.ctx.keys.k("effret"))]).await?;
        text(&v).map(|j| serde_json::from_str(&j).map_err(Error::backend)).transpose()
    }

    async fn worker_heartbeat(&self, info: &WorkerInfo) -> Result<()> {
        self.ctx.check()?;
        validate_name("worker id", &info.id)?;
        let json = serde_json::to_string(info).map_err(Error::backend)?;
        self.ctx.conn.cmd("HSET", vec![s(self.ctx.keys.k("workers")), s(info.id.clone()), s(json)]).await?;
        Ok(())
    }

    async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("HVALS", vec![s(self.ctx.keys.k("workers"))]).await?;
        let mut out: Vec<WorkerInfo> = row::strings(v)
            .iter()
            .map(|j| serde_json::from_str(j).map_err(Error::backend))
            .collect::<Result<_>>()?;
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    async fn prune_workers(&self, cutoff: i64) -> Result<u64> {
        self.ctx.check()?;
        let stale: Vec<String> = self
            .list_workers()
            .await?
            .into_iter()
            .filter(|w| w.heartbeat_at < cutoff)
            .map(|w| w.id)
            .collect();
        if stale.is_empty() {
            return Ok(0);
        }
        let mut args = vec![s(self.ctx.keys.k("workers"))];
        args.extend(stale.into_iter().map(s));
        Ok(int(&self.ctx.conn.cmd("HDEL", args).await?).unwrap_or(0) as u64)
    }
}

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
