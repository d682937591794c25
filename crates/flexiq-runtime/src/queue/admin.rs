//! Retention read-back and preview, deployment settings, schema and the contract floor.

use std::collections::BTreeMap;

use flexiq_core::settings::validate_setting_key;
use flexiq_core::store::{RetentionRequest, SetSettingIfRequest, SetSettingRequest};
use flexiq_core::{validate_new_floor, EffectiveRetention, MigrationSummary, Retention, RetentionPreview};

use super::Queue;
use crate::error::Result;

impl Queue {
    /// The retention the elected cleaner last applied to this namespace (windows in ms,
    /// `reported_at` Unix ms); `None` when no worker has swept yet.
    pub async fn effective_retention(&self) -> Result<Option<EffectiveRetention>> {
        Ok(self.store.effective_retention().await?)
    }

    /// Counts what a retention purge would delete now, deleting nothing. `retention`
    /// (seconds) defaults to this queue's configured windows, else the recommended ones.
    /// Windows and `reference_time` come back in milliseconds.
    pub async fn dry_run_retention(&self, retention: Option<Retention>) -> Result<RetentionPreview> {
        let (r, defaulted) = resolve_retention(retention.or(self.retention));
        r.validate()?;
        let windows = r.windows_ms();
        let now = self.now_ms();
        let counts = self.store.retention_counts(RetentionRequest { windows: windows.clone(), now }).await?;
        let total = counts.values().sum();
        Ok(RetentionPreview {
            enabled: r.enabled(),
            defaulted,
            namespace: self.namespace().to_string(),
            reference_time: now,
            windows,
            counts,
            total,
        })
    }

    /// A setting's value; `None` for a key never set.
    pub async fn get_setting(&self, key: &str) -> Result<Option<String>> {
        validate_setting_key(key)?;
        Ok(self.store.get_setting(key).await?)
    }

    /// Inserts or overwrites a setting (last write wins).
    pub async fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        let req = SetSettingRequest { key: key.to_string(), value: value.to_string() };
        Ok(self.store.set_setting(req).await?)
    }

    /// Compare-and-set: writes only while `key` holds `expected` (`None`: must be unset).
    /// False means another writer got there first.
    pub async fn set_setting_if(&self, key: &str, expected: Option<&str>, value: &str) -> Result<bool> {
        let req = SetSettingIfRequest {
            key: key.to_string(),
            expected: expected.map(str::to_string),
            value: value.to_string(),
        };
        Ok(self.store.set_setting_if(req).await?)
    }

    /// Removes a setting; false when it did not exist.
    pub async fn delete_setting(&self, key: &str) -> Result<bool> {
        validate_setting_key(key)?;
        Ok(self.store.delete_setting(key).await?)
    }

    /// Every setting, runtime-owned keys included.
    pub async fn list_settings(&self) -> Result<BTreeMap<String, String>> {
        Ok(self.store.list_settings().await?)
    }

    /// Applies pending schema changes and reports what ran; idempotent.
    pub async fn migrate(&self) -> Result<MigrationSummary> {
        Ok(self.store.migrate().await?)
    }

    /// The lowest contract level a process may speak and still open this storage.
    pub async fn min_contract(&self) -> Result<u32> {
        Ok(self.store.min_contract().await?)
    }

    /// Moves the contract floor; a level this build does not speak is refused.
    pub async fn set_min_contract(&self, level: i64) -> Result<()> {
        let level = validate_new_floor(level)?;
        Ok(self.store.set_min_contract(level).await?)
    }
}

/// The windows to apply and whether they are the recommended defaults set by no one.
pub(crate) fn resolve_retention(configured: Option<Retention>) -> (Retention, bool) {
    match configured {
        Some(r) => (r, false),
        None => (Retention::recommended(), true),
    }
}
