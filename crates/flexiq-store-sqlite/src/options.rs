//! How a SQLite store is opened: namespace, migrations, durability and the reader pool.

use flexiq_core::options::validate_name;
use flexiq_core::{Error, Result};

/// How hard a commit is pushed to disk (`PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous = NORMAL`: in WAL mode a commit survives a process crash; the last commits
    /// may be lost on power failure or an OS crash. The default and by far the fastest.
    #[default]
    Normal,
    /// `synchronous = FULL`: every commit is fsynced before it is acknowledged.
    Full,
}

impl Durability {
    /// The `PRAGMA synchronous` value.
    pub fn pragma_value(self) -> &'static str {
        match self {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        }
    }
}

/// Options for [`crate::SqliteStore::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Namespace the handle is scoped to (default `"default"`).
    pub namespace: String,
    /// Apply pending migrations on open (default true). When false, an unmigrated or outdated
    /// file is refused instead.
    pub auto_migrate: bool,
    /// Commit durability (default [`Durability::Normal`]).
    pub durability: Durability,
    /// Read connections (and threads) serving listings and stats (default 4, 1 to 64).
    pub read_connections: usize,
    /// How long a connection waits for another process's lock before failing (ms, default
    /// 10,000).
    pub busy_timeout_ms: u64,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            namespace: flexiq_core::options::DEFAULT_NAMESPACE.to_string(),
            auto_migrate: true,
            durability: Durability::Normal,
            read_connections: 4,
            busy_timeout_ms: 10_000,
        }
    }
}

impl SqliteOptions {
    /// Checks the options: a valid namespace, 1 to 64 readers, a busy timeout of at most one
    /// hour.
    pub fn validate(&self) -> Result<()> {
        validate_name("namespace", &self.namespace)?;
        if !(1..=64).contains(&self.read_connections) {
            return Err(Error::invalid(format!(
                "read_connections {} must be between 1 and 64",
                self.read_connections
            )));
        }
        if self.busy_timeout_ms > 3_600_000 {
            return Err(Error::invalid(format!("busy_timeout_ms {} is over one hour", self.busy_timeout_ms)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_refused() {
        let d = SqliteOptions::default();
        assert_eq!((d.namespace.as_str(), d.auto_migrate, d.read_connections), ("default", true, 4));
        assert_eq!(d.durability, Durability::Normal);
        d.validate().unwrap();
        let bad = |o: SqliteOptions| o.validate().unwrap_err().code();
        assert_eq!(bad(SqliteOptions { read_connections: 0, ..d.clone() }), "INVALID_ARGUMENT");
        assert_eq!(bad(SqliteOptions { namespace: String::new(), ..d.clone() }), "INVALID_ARGUMENT");
        assert_eq!(bad(SqliteOptions { busy_timeout_ms: u64::MAX, ..d }), "INVALID_ARGUMENT");
        assert_eq!(Durability::Full.pragma_value(), "FULL");
    }
}
