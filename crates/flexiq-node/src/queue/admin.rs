//! Retention, settings, schema and the contract floor on `NativeQueue`.
//!
//! Settings, `effectiveRetention` and the contract floor are synchronous (single-row reads
//! and writes); the retention preview and `migrate` scan or apply DDL and return Promises.

use std::collections::HashMap;

use napi::bindgen_prelude::block_on;
use napi_derive::napi;

use crate::args;
use crate::error::{IntoNapi, Result};
use crate::options::RetentionOptions;
use crate::queue::NativeQueue;
use crate::types::{EffectiveRetention, MigrationSummary, RetentionPreview};

/// The settings prefixes the runtime owns (`auth:`, `contract:`, `retention:`, ...): writing
/// under them corrupts state the runtime and dashboard read back.
#[allow(unreachable_pub)]
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn reserved_setting_prefixes() -> Vec<&'static str> {
    flexiq_core::reserved_setting_prefixes().to_vec()
}

/// The contract level this build speaks.
#[allow(unreachable_pub)]
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn contract_level() -> u32 {
    flexiq_core::CONTRACT_LEVEL
}

#[napi]
impl NativeQueue {
    /// The retention the elected cleaner last applied to this namespace (windows in ms,
    /// `reportedAt` Unix ms); `null` when no worker has swept yet. Synchronous.
    #[napi]
    pub fn effective_retention(&self) -> Result<Option<EffectiveRetention>> {
        let q = self.queue()?;
        Ok(block_on(q.effective_retention()).napi()?.map(Into::into))
    }

    /// Counts what a retention purge would delete now, deleting nothing. `retention`
    /// (seconds) defaults to this queue's configured windows, else the recommended ones.
    #[napi]
    pub async fn dry_run_retention(&self, retention: Option<RetentionOptions>) -> Result<RetentionPreview> {
        let r = retention.map(RetentionOptions::resolve).transpose()?;
        let q = self.queue()?;
        Ok(q.dry_run_retention(r).await.napi()?.into())
    }

    /// A setting's value; `null` for a key never set. Synchronous.
    #[napi]
    pub fn get_setting(&self, key: String) -> Result<Option<String>> {
        let q = self.queue()?;
        block_on(q.get_setting(&key)).napi()
    }

    /// Inserts or overwrites a setting (last write wins). Synchronous.
    #[napi]
    pub fn set_setting(&self, key: String, value: String) -> Result<()> {
        let q = self.queue()?;
        block_on(q.set_setting(&key, &value)).napi()
    }

    /// Compare-and-set: writes only while `key` holds `expected` (`null`: must be unset).
    /// `false` means another writer got there first. Synchronous.
    #[napi]
    pub fn set_setting_if(&self, key: String, expected: Option<String>, value: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.set_setting_if(&key, expected.as_deref(), &value)).napi()
    }

    /// Removes a setting; `false` when it did not exist. Synchronous.
    #[napi]
    pub fn delete_setting(&self, key: String) -> Result<bool> {
        let q = self.queue()?;
        block_on(q.delete_setting(&key)).napi()
    }

    /// Every setting, runtime-owned keys included. Synchronous.
    #[napi]
    pub fn list_settings(&self) -> Result<HashMap<String, String>> {
        let q = self.queue()?;
        Ok(block_on(q.list_settings()).napi()?.into_iter().collect())
    }

    /// Applies pending schema changes and reports what ran; idempotent.
    #[napi]
    pub async fn migrate(&self) -> Result<MigrationSummary> {
        let q = self.queue()?;
        Ok(q.migrate().await.napi()?.into())
    }

    /// The lowest contract level a process may speak and still open this storage.
    /// Synchronous.
    #[napi]
    pub fn min_contract(&self) -> Result<u32> {
        let q = self.queue()?;
        block_on(q.min_contract()).napi()
    }

    /// Moves the contract floor; a level this build does not speak is refused. Synchronous.
    #[napi]
    pub fn set_min_contract(&self, level: f64) -> Result<()> {
        let level = args::int("level", level, i64::MIN + 1, i64::MAX)?;
        let q = self.queue()?;
        block_on(q.set_min_contract(level)).napi()
    }
}
