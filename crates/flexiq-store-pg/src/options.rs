//! Connection options for [`crate::PgStore`]: which namespace, which PostgreSQL schema, whether
//! to migrate on connect and how many pooled connections to keep.

use flexiq_core::{Error, Result};

/// Schema used when none is given.
pub const DEFAULT_SCHEMA: &str = "flexiq";

/// How [`crate::PgStore::connect`] opens the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Namespace the handle is scoped to (default `"default"`).
    pub namespace: String,
    /// PostgreSQL schema holding flexiq's tables (default `"flexiq"`); a plain identifier.
    pub schema: String,
    /// Apply pending migrations on connect (default true). Deployments whose runtime role
    /// cannot issue DDL set this to false and run `migrate()` with an owner role beforehand.
    pub auto_migrate: bool,
    /// Pooled connections (default 16), not counting the one dedicated LISTEN connection.
    pub pool_size: usize,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            namespace: flexiq_core::options::DEFAULT_NAMESPACE.to_string(),
            schema: DEFAULT_SCHEMA.to_string(),
            auto_migrate: true,
            pool_size: 16,
        }
    }
}

impl PgOptions {
    /// Checks the options: a valid namespace, a plain identifier for the schema (ASCII letter or
    /// underscore first, then letters, digits or underscores, at most 63 bytes) and a pool of
    /// 1 to 1,000 connections.
    pub fn validate(&self) -> Result<()> {
        flexiq_core::options::validate_name("namespace", &self.namespace)?;
        validate_schema(&self.schema)?;
        if !(1..=1_000).contains(&self.pool_size) {
            return Err(Error::invalid(format!("pool size {} must be between 1 and 1000", self.pool_size)));
        }
        Ok(())
    }
}

/// Checks that `schema` is a plain identifier that needs no quoting tricks.
pub(crate) fn validate_schema(schema: &str) -> Result<()> {
    let mut chars = schema.chars();
    let plain_start = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let plain_rest = chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain_start || !plain_rest || schema.len() > 63 {
        return Err(Error::invalid(format!(
            "schema {schema:?} must be a plain identifier: a letter or underscore, then letters, digits or underscores, at most 63 bytes"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate() {
        let o = PgOptions::default();
        assert_eq!(o.schema, "flexiq");
        assert!(o.auto_migrate);
        o.validate().unwrap();
    }

    #[test]
    fn bad_schema_names_and_pool_sizes_are_refused() {
        for bad in ["", "1abc", "a-b", "a b", "x\"; drop", &"s".repeat(64), "é"] {
            let o = PgOptions { schema: bad.to_string(), ..Default::default() };
            assert_eq!(o.validate().unwrap_err().code(), "INVALID_ARGUMENT", "{bad}");
        }
        for ok in ["flexiq", "_x1", "Tenant_2"] {
            PgOptions { schema: ok.to_string(), ..Default::default() }.validate().unwrap();
        }
        let o = PgOptions { pool_size: 0, ..Default::default() };
        assert!(o.validate().is_err());
        let o = PgOptions { namespace: String::new(), ..Default::default() };
        assert!(o.validate().is_err());
    }
}
