//! The deployment-wide key/value store: the one store surface not scoped to a namespace.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::settings::{validate_setting_key, validate_setting_value};

/// Insert or overwrite a setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetSettingRequest {
    /// The key.
    pub key: String,
    /// The new value.
    pub value: String,
}

/// Write a setting only while it holds an expected value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetSettingIfRequest {
    /// The key.
    pub key: String,
    /// The value it must hold; `None`: it must be unset.
    pub expected: Option<String>,
    /// The new value.
    pub value: String,
}

impl SetSettingRequest {
    /// Checks the key and the value.
    pub fn validate(&self) -> Result<()> {
        validate_setting_key(&self.key)?;
        validate_setting_value(&self.key, &self.value)
    }
}

impl SetSettingIfRequest {
    /// Checks the key and the value.
    pub fn validate(&self) -> Result<()> {
        validate_setting_key(&self.key)?;
        validate_setting_value(&self.key, &self.value)
    }
}

/// The deployment-wide key/value store (not namespace-scoped).
#[async_trait::async_trait]
pub trait Settings: Send + Sync {
    /// A value, or `None` when never set.
    async fn get_setting(&self, key: &str) -> Result<Option<String>>;
    /// Inserts or overwrites.
    async fn set_setting(&self, req: SetSettingRequest) -> Result<()>;
    /// Writes only while `key` holds `expected` (`None`: must be unset); false otherwise.
    async fn set_setting_if(&self, req: SetSettingIfRequest) -> Result<bool>;
    /// Removes a key; false when it did not exist.
    async fn delete_setting(&self, key: &str) -> Result<bool>;
    /// Every key and value.
    async fn list_settings(&self) -> Result<BTreeMap<String, String>>;
}
