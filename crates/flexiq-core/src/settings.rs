//! Deployment-wide settings: opaque string values, and the prefixes the runtime owns.

use crate::error::{Error, Result};

/// Prefixes whose keys belong to the runtime. Writing under them corrupts state the
/// dashboard, contract floor, middleware toggles, retention and webhooks read back.
pub const RESERVED_SETTING_PREFIXES: [&str; 8] = [
    "auth:",
    "contract:",
    "middleware:disabled:",
    "quota:",
    "retention:",
    "webhook:",
    "webhooks:",
    "flexiq.webhooks",
];

/// The reserved prefixes (the spec's `reservedSettingPrefixes()`).
pub fn reserved_setting_prefixes() -> &'static [&'static str] {
    &RESERVED_SETTING_PREFIXES
}

/// Whether `key` falls under a reserved prefix.
pub fn is_reserved_setting(key: &str) -> bool {
    RESERVED_SETTING_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// Longest setting key (bytes).
pub const MAX_SETTING_KEY_BYTES: usize = 1_024;
/// Largest setting value (bytes).
pub const MAX_SETTING_VALUE_BYTES: usize = 1024 * 1024;

/// Checks a key: non-empty, at most 1 KiB.
pub fn validate_setting_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::invalid("setting key must not be empty"));
    }
    if key.len() > MAX_SETTING_KEY_BYTES {
        return Err(Error::invalid(format!(
            "setting key is {} bytes, over {MAX_SETTING_KEY_BYTES}",
            key.len()
        )));
    }
    Ok(())
}

/// Checks a value: at most 1 MiB.
pub fn validate_setting_value(key: &str, value: &str) -> Result<()> {
    if value.len() > MAX_SETTING_VALUE_BYTES {
        return Err(Error::invalid(format!(
            "value of setting {key} is {} bytes, over {MAX_SETTING_VALUE_BYTES}",
            value.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_prefixes() {
        assert!(is_reserved_setting("retention:default"));
        assert!(is_reserved_setting("flexiq.webhooks.x"));
        assert!(!is_reserved_setting("theme"));
        assert!(validate_setting_key("").is_err());
        assert!(validate_setting_key(&"k".repeat(2_000)).is_err());
    }
}
