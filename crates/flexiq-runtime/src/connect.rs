//! The store registry: [`connect`] opens whichever backend a URL names.
//!
//! Backends are compiled in by cargo feature (`sqlite` by default, `postgres`, `redis`); a URL
//! whose backend was left out is `Unsupported`, naming the feature to turn on.

use std::sync::Arc;

use flexiq_core::options::{validate_name, DEFAULT_NAMESPACE};
use flexiq_core::{Retention, Store};

use crate::error::{Error, Result};
use crate::queue::Queue;
use crate::url::StoreUrl;

/// How hard SQLite works to keep a commit through a power loss.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=NORMAL` in WAL mode: a commit survives a process crash; the last
    /// transactions may be lost on power failure. The fast default.
    #[default]
    Normal,
    /// `synchronous=FULL`: every commit is on disk before it returns.
    Full,
}

/// Options for [`connect`].
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectOptions {
    /// The namespace every call of the queue is scoped to (default `"default"`).
    pub namespace: String,
    /// Apply pending schema migrations when opening (default true). With false, run
    /// [`Queue::migrate`] before using fresh storage.
    pub auto_migrate: bool,
    /// SQLite commit durability (ignored by other backends).
    pub durability: Durability,
    /// Admission cap passed into every enqueue: a queue holding this many pending jobs
    /// refuses more with `QueueFull`. `None`: no cap.
    pub max_pending: Option<u64>,
    /// Retention windows (seconds) this process would apply; used by
    /// [`Queue::dry_run_retention`] and by a worker's retention sweep. `None`: the
    /// recommended defaults.
    pub retention: Option<Retention>,
    /// SQLite read connections (`None`: the store's default).
    pub read_connections: Option<usize>,
    /// SQLite busy timeout (ms) (`None`: the store's default).
    pub busy_timeout_ms: Option<u64>,
    /// PostgreSQL pool size (`None`: the store's default).
    pub pool_size: Option<usize>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            namespace: DEFAULT_NAMESPACE.to_string(),
            auto_migrate: true,
            durability: Durability::Normal,
            max_pending: None,
            retention: None,
            read_connections: None,
            busy_timeout_ms: None,
            pool_size: None,
        }
    }
}

impl ConnectOptions {
    /// Options for `namespace`, everything else default.
    pub fn namespace(namespace: impl Into<String>) -> Self {
        ConnectOptions { namespace: namespace.into(), ..Default::default() }
    }

    /// Checks every field; `InvalidArgument` names the bad one.
    pub fn validate(&self) -> Result<()> {
        validate_name("namespace", &self.namespace)?;
        if self.max_pending == Some(0) {
            return Err(Error::invalid("max_pending must be at least 1"));
        }
        if let Some(r) = &self.retention {
            r.validate()?;
        }
        if self.read_connections == Some(0) {
            return Err(Error::invalid("read_connections must be at least 1"));
        }
        if self.pool_size == Some(0) {
            return Err(Error::invalid("pool_size must be at least 1"));
        }
        Ok(())
    }
}

/// Opens the store `url` names and returns a [`Queue`] on it.
///
/// `sqlite:///abs/path.db`, `sqlite://relative.db` or a bare path open an SQLite file
/// (created if missing); `postgres://` / `postgresql://` (optional `?schema=name`) need the
/// `postgres` feature; `redis://` / `rediss://` (optional `?prefix=name`) need `redis`.
pub async fn connect(url: &str, opts: ConnectOptions) -> Result<Queue> {
    opts.validate()?;
    let target = StoreUrl::parse(url)?;
    let store = open_store(&target, &opts).await?;
    Ok(Queue::from_store(store, &opts))
}

async fn open_store(target: &StoreUrl, opts: &ConnectOptions) -> Result<Arc<dyn Store>> {
    match target {
        StoreUrl::Sqlite { path } => open_sqlite(path, opts).await,
        StoreUrl::Postgres { url, schema } => open_postgres(url, schema.as_deref(), opts).await,
        StoreUrl::Redis { url, prefix } => open_redis(url, prefix.as_deref(), opts).await,
    }
}

#[cfg(feature = "sqlite")]
async fn open_sqlite(path: &std::path::Path, opts: &ConnectOptions) -> Result<Arc<dyn Store>> {
    use flexiq_store_sqlite::{Durability as SqliteDurability, SqliteOptions, SqliteStore};
    let mut o = SqliteOptions {
        namespace: opts.namespace.clone(),
        auto_migrate: opts.auto_migrate,
        durability: match opts.durability {
            Durability::Normal => SqliteDurability::Normal,
            Durability::Full => SqliteDurability::Full,
        },
        ..Default::default()
    };
    if let Some(n) = opts.read_connections {
        o.read_connections = n;
    }
    if let Some(ms) = opts.busy_timeout_ms {
        o.busy_timeout_ms = ms;
    }
    let path = path.to_path_buf();
    // Opening may create the file and run migrations: keep that off the async threads.
    let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path, o))
        .await
        .map_err(|e| Error::Core(flexiq_core::Error::backend(format!("sqlite open task failed: {e}"))))??;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "sqlite"))]
async fn open_sqlite(_path: &std::path::Path, _opts: &ConnectOptions) -> Result<Arc<dyn Store>> {
    Err(unsupported("sqlite"))
}

#[cfg(feature = "postgres")]
async fn open_postgres(url: &str, schema: Option<&str>, opts: &ConnectOptions) -> Result<Arc<dyn Store>> {
    use flexiq_store_pg::{PgOptions, PgStore};
    let mut o = PgOptions {
        namespace: opts.namespace.clone(),
        auto_migrate: opts.auto_migrate,
        ..Default::default()
    };
    if let Some(s) = schema {
        o.schema = s.to_string();
    }
    if let Some(n) = opts.pool_size {
        o.pool_size = n;
    }
    Ok(Arc::new(PgStore::connect(url, o).await?))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_url: &str, _schema: Option<&str>, _opts: &ConnectOptions) -> Result<Arc<dyn Store>> {
    Err(unsupported("postgres"))
}

#[cfg(feature = "redis")]
async fn open_redis(url: &str, prefix: Option<&str>, opts: &ConnectOptions) -> Result<Arc<dyn Store>> {
    use flexiq_store_redis::{RedisOptions, RedisStore};
    let mut o = RedisOptions { namespace: opts.namespace.clone(), ..Default::default() };
    if let Some(p) = prefix {
        o.prefix = p.to_string();
    }
    Ok(Arc::new(RedisStore::connect(url, o).await?))
}

#[cfg(not(feature = "redis"))]
async fn open_redis(_url: &str, _prefix: Option<&str>, _opts: &ConnectOptions) -> Result<Arc<dyn Store>> {
    Err(unsupported("redis"))
}

#[allow(dead_code)]
fn unsupported(feature: &str) -> Error {
    Error::Core(flexiq_core::Error::Unsupported(format!(
        "the {feature} store is not compiled into this build: enable the `{feature}` cargo feature of flexiq"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_validate_each_field() {
        assert!(ConnectOptions::default().validate().is_ok());
        let bad = |o: ConnectOptions| o.validate().unwrap_err().code();
        assert_eq!(bad(ConnectOptions::namespace("")), "INVALID_ARGUMENT");
        assert_eq!(bad(ConnectOptions { max_pending: Some(0), ..Default::default() }), "INVALID_ARGUMENT");
        assert_eq!(
            bad(ConnectOptions { read_connections: Some(0), ..Default::default() }),
            "INVALID_ARGUMENT"
        );
        assert_eq!(bad(ConnectOptions { pool_size: Some(0), ..Default::default() }), "INVALID_ARGUMENT");
        let retention = Retention { task_logs: Some(0), ..Default::default() };
        assert_eq!(
            bad(ConnectOptions { retention: Some(retention), ..Default::default() }),
            "INVALID_ARGUMENT"
        );
    }

    #[cfg(not(feature = "postgres"))]
    #[tokio::test]
    async fn postgres_without_its_feature_is_unsupported() {
        let e = connect("postgres://127.0.0.1/test", ConnectOptions::default()).await.unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED");
        assert!(e.to_string().contains("`postgres`"));
    }

    #[cfg(not(feature = "redis"))]
    #[tokio::test]
    async fn redis_without_its_feature_is_unsupported() {
        let e = connect("redis://127.0.0.1", ConnectOptions::default()).await.unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED");
        assert!(e.to_string().contains("`redis`"));
    }

    #[tokio::test]
    async fn unknown_scheme_and_memory_are_invalid() {
        for url in ["mysql://h/db", ":memory:", "sqlite::memory:"] {
            assert_eq!(connect(url, ConnectOptions::default()).await.unwrap_err().code(), "INVALID_ARGUMENT");
        }
    }
}
