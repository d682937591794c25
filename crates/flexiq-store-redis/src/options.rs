//! Connection options: the key prefix and the namespace a handle is scoped to.

use flexiq_core::options::{validate_name, DEFAULT_NAMESPACE};
use flexiq_core::{Error, Result};

/// How a [`crate::RedisStore`] names its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisOptions {
    /// The namespace this handle is scoped to (default `"default"`).
    pub namespace: String,
    /// Prefix of every key (default `"flexiq"`): namespace keys live under
    /// `{prefix:namespace}`, deployment-wide ones under `{prefix}`.
    pub prefix: String,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions { namespace: DEFAULT_NAMESPACE.to_string(), prefix: "flexiq".to_string() }
    }
}

impl RedisOptions {
    /// Checks both names: non-empty, at most 255 bytes, no control characters, and no braces
    /// or colons in the prefix (they would break the hash tag).
    pub fn validate(&self) -> Result<()> {
        validate_name("namespace", &self.namespace)?;
        validate_namespace(&self.namespace)?;
        validate_name("key prefix", &self.prefix)?;
        if self.prefix.contains(['{', '}', ':']) {
            return Err(Error::invalid(format!(
                "key prefix {:?} must not contain braces or colons",
                self.prefix
            )));
        }
        Ok(())
    }
}

/// Namespaces become part of a hash tag, so they may not hold braces.
pub(crate) fn validate_namespace(ns: &str) -> Result<()> {
    validate_name("namespace", ns)?;
    if ns.contains(['{', '}']) {
        return Err(Error::invalid(format!("namespace {ns:?} must not contain braces")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_names_do_not() {
        assert!(RedisOptions::default().validate().is_ok());
        let bad = |namespace: &str, prefix: &str| {
            RedisOptions { namespace: namespace.into(), prefix: prefix.into() }.validate().unwrap_err().code()
        };
        assert_eq!(bad("", "flexiq"), "INVALID_ARGUMENT");
        assert_eq!(bad("a{b", "flexiq"), "INVALID_ARGUMENT");
        assert_eq!(bad("ns", "fl:x"), "INVALID_ARGUMENT");
        assert_eq!(bad("ns", ""), "INVALID_ARGUMENT");
    }
}
