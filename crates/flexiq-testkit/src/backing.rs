//! Where a campaign's seeds run: one isolated backing per campaign (a temp SQLite file, a
//! PostgreSQL schema, a Redis key prefix), a fresh namespace of it per seed, everything removed
//! afterwards. PostgreSQL and Redis are found at `FLEXIQ_PG_URL` and `FLEXIQ_REDIS_URL`, as
//! every other suite finds them.

use std::sync::Arc;

use flexiq_core::{Result, Store};

/// One campaign's storage.
#[async_trait::async_trait]
pub trait Backing: Send + Sync {
    /// The backend's name (`"sqlite"`, `"postgres"`, `"redis"`).
    fn name(&self) -> &'static str;

    /// A store handle scoped to `namespace`, sharing the backing's connections.
    fn namespace(&self, namespace: &str) -> Result<Arc<dyn Store>>;

    /// Closes the backing and removes everything written to it.
    async fn cleanup(&self);
}

/// A campaign's namespaces in one SQLite file of a temp directory.
#[cfg(feature = "sqlite")]
pub struct SqliteBacking {
    root: flexiq_store_sqlite::SqliteStore,
    dir: parking_lot::Mutex<Option<tempfile::TempDir>>,
}

#[cfg(feature = "sqlite")]
impl SqliteBacking {
    /// Creates the file.
    pub fn open() -> Result<Self> {
        use flexiq_store_sqlite::{SqliteOptions, SqliteStore};
        let dir = tempfile::tempdir().map_err(|e| flexiq_core::Error::backend(format!("temp dir: {e}")))?;
        let opts = SqliteOptions { read_connections: 2, ..Default::default() };
        let root = SqliteStore::open(dir.path().join("campaign.db"), opts)?;
        Ok(SqliteBacking { root, dir: parking_lot::Mutex::new(Some(dir)) })
    }
}

#[cfg(feature = "sqlite")]
#[async_trait::async_trait]
impl Backing for SqliteBacking {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn namespace(&self, namespace: &str) -> Result<Arc<dyn Store>> {
        Ok(Arc::new(self.root.with_namespace(namespace)?))
    }

    async fn cleanup(&self) {
        let _ = self.root.close().await;
        if let Some(dir) = self.dir.lock().take() {
            let _ = dir.close();
        }
    }
}

/// The PostgreSQL server under test: `FLEXIQ_PG_URL`, default the local `test` database.
#[cfg(feature = "postgres")]
pub fn pg_url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// A campaign's namespaces in a PostgreSQL schema of its own, dropped afterwards.
#[cfg(feature = "postgres")]
pub struct PgBacking {
    root: flexiq_store_pg::PgStore,
    schema: String,
}

#[cfg(feature = "postgres")]
impl PgBacking {
    /// Creates and migrates a fresh schema.
    pub async fn open() -> Result<Self> {
        use flexiq_store_pg::{PgOptions, PgStore};
        let schema = format!("fq_tk_{}", uuid::Uuid::new_v4().simple());
        let opts = PgOptions { schema: schema.clone(), pool_size: 4, ..Default::default() };
        let root = PgStore::connect(&pg_url(), opts).await?;
        Ok(PgBacking { root, schema })
    }
}

#[cfg(feature = "postgres")]
#[async_trait::async_trait]
impl Backing for PgBacking {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn namespace(&self, namespace: &str) -> Result<Arc<dyn Store>> {
        Ok(Arc::new(self.root.with_namespace(namespace)?))
    }

    async fn cleanup(&self) {
        let _ = self.root.close().await;
        match tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await {
            Ok((client, conn)) => {
                let conn = tokio::spawn(conn);
                let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.schema);
                if let Err(e) = client.batch_execute(&sql).await {
                    eprintln!("could not drop schema {}: {e}", self.schema);
                }
                drop(client);
                let _ = conn.await;
            }
            Err(e) => eprintln!("could not connect to drop schema {}: {e}", self.schema),
        }
    }
}

/// A campaign's namespaces under a Redis key prefix of its own, deleted afterwards with
/// `SCAN` + `UNLINK` (never `FLUSHALL`).
#[cfg(feature = "redis")]
pub struct RedisBacking {
    root: flexiq_store_redis::RedisStore,
    prefix: String,
}

#[cfg(feature = "redis")]
impl RedisBacking {
    /// Connects under a fresh prefix.
    pub async fn open() -> Result<Self> {
        use flexiq_store_redis::{RedisOptions, RedisStore};
        let prefix = format!("fqtk{}", uuid::Uuid::new_v4().simple());
        let opts = RedisOptions { prefix: prefix.clone(), ..Default::default() };
        let root = RedisStore::connect(&flexiq_conformance::redis_kit::redis_url(), opts).await?;
        Ok(RedisBacking { root, prefix })
    }
}

#[cfg(feature = "redis")]
#[async_trait::async_trait]
impl Backing for RedisBacking {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn namespace(&self, namespace: &str) -> Result<Arc<dyn Store>> {
        Ok(Arc::new(self.root.with_namespace(namespace)?))
    }

    async fn cleanup(&self) {
        let _ = self.root.close().await;
        flexiq_conformance::redis_kit::delete_prefix(
            &flexiq_conformance::redis_kit::redis_url(),
            &self.prefix,
        )
        .await;
    }
}
