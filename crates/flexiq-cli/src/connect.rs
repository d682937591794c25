//! Opening the store an operations command works on.
//!
//! The URL comes from `--url` or `FLEXIQ_URL`, the namespace from `--namespace` or
//! `FLEXIQ_NAMESPACE`. An SQLite file that does not exist is refused (exit 3) instead of
//! being created empty, so a mistyped path never reports an empty, healthy-looking queue;
//! only `flexiq migrate` creates one.

use flexiq::{connect, ConnectOptions, Queue, StoreUrl};

use crate::cli::GlobalArgs;
use crate::error::{CliError, CliResult};

/// Environment variable holding the store URL when `--url` is not given.
pub const URL_ENV: &str = "FLEXIQ_URL";
/// Environment variable holding the namespace when `--namespace` is not given.
pub const NAMESPACE_ENV: &str = "FLEXIQ_NAMESPACE";

/// How an operations command opens its store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Open existing storage, applying pending migrations.
    Existing,
    /// Open or create storage without migrating (`flexiq migrate` reports what it applies).
    ForMigrate,
    /// Open or create storage, migrating as it opens (for stores that refuse [`Open::ForMigrate`]
    /// on unmigrated storage).
    MigrateOnOpen,
}

/// The store URL: `--url`, else `FLEXIQ_URL`.
pub fn store_url(g: &GlobalArgs) -> CliResult<String> {
    if let Some(url) = &g.url {
        return Ok(url.clone());
    }
    match std::env::var(URL_ENV) {
        Ok(url) if !url.trim().is_empty() => Ok(url),
        _ => Err(CliError::invalid(format!("no store url: pass --url or set {URL_ENV}"))),
    }
}

/// The namespace: `--namespace`, else `FLEXIQ_NAMESPACE`, else `None` (the default one).
pub fn namespace(g: &GlobalArgs) -> Option<String> {
    g.namespace.clone().or_else(|| std::env::var(NAMESPACE_ENV).ok().filter(|n| !n.is_empty()))
}

/// Opens the store for an operations command.
pub async fn open(g: &GlobalArgs, mode: Open) -> CliResult<Queue> {
    let url = store_url(g)?;
    let target = StoreUrl::parse(&url)?;
    if let (StoreUrl::Sqlite { path }, Open::Existing) = (&target, mode) {
        if !path.exists() {
            return Err(CliError::not_found(format!(
                "sqlite database {} does not exist (flexiq migrate --url {url} creates it)",
                path.display()
            )));
        }
    }
    let mut opts = ConnectOptions { auto_migrate: mode != Open::ForMigrate, ..ConnectOptions::default() };
    if let Some(ns) = namespace(g) {
        opts.namespace = ns;
    }
    Ok(connect(&url, opts).await?)
}
