//! Queues on every store for the tests that must hold on each: SQLite on a fresh file,
//! PostgreSQL in a schema of its own (dropped afterwards), Redis under a key prefix of its own
//! (deleted with SCAN + UNLINK afterwards, never FLUSHALL).

use flexiq_runtime::{connect, ConnectOptions, Queue};

use crate::common::{open, TestQueue};

/// A queue on one store, and what removes its data afterwards.
pub(crate) enum Backend {
    Sqlite(TestQueue),
    #[cfg(feature = "postgres")]
    Postgres {
        queue: Queue,
        url: String,
        schema: String,
    },
    #[cfg(feature = "redis")]
    Redis {
        queue: Queue,
        url: String,
        prefix: String,
    },
}

impl Backend {
    pub(crate) fn queue(&self) -> &Queue {
        match self {
            Backend::Sqlite(t) => &t.queue,
            #[cfg(feature = "postgres")]
            Backend::Postgres { queue, .. } => queue,
            #[cfg(feature = "redis")]
            Backend::Redis { queue, .. } => queue,
        }
    }

    /// The store URL the queue was opened with (for another process to open the same data).
    pub(crate) fn url(&self) -> &str {
        match self {
            Backend::Sqlite(t) => &t.url,
            #[cfg(feature = "postgres")]
            Backend::Postgres { url, .. } => url,
            #[cfg(feature = "redis")]
            Backend::Redis { url, .. } => url,
        }
    }

    /// Closes the queue and removes everything it wrote.
    pub(crate) async fn cleanup(self) {
        let _ = self.queue().close().await;
        match self {
            Backend::Sqlite(_) => {}
            #[cfg(feature = "postgres")]
            Backend::Postgres { schema, .. } => drop_schema(&schema).await,
            #[cfg(feature = "redis")]
            Backend::Redis { prefix, .. } => {
                flexiq_conformance::redis_kit::delete_prefix(&redis_url(), &prefix).await
            }
        }
    }
}

pub(crate) async fn sqlite() -> Backend {
    Backend::Sqlite(open().await)
}

#[cfg(feature = "postgres")]
fn pg_url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

#[cfg(feature = "postgres")]
pub(crate) async fn postgres() -> Backend {
    let schema = format!("fq_rt_{}", uuid::Uuid::new_v4().simple());
    let url = format!("{}?schema={schema}", pg_url());
    let queue = connect(&url, ConnectOptions::default()).await.expect("connect to postgres");
    Backend::Postgres { queue, url, schema }
}

#[cfg(feature = "postgres")]
async fn drop_schema(schema: &str) {
    let (client, conn) =
        tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await.expect("connect to postgres");
    tokio::spawn(conn);
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.expect("drop schema");
}

#[cfg(feature = "redis")]
use flexiq_conformance::redis_kit::redis_url;

#[cfg(feature = "redis")]
pub(crate) async fn redis() -> Backend {
    let prefix = format!("fqrt{}", uuid::Uuid::new_v4().simple());
    let url = format!("{}?prefix={prefix}", redis_url());
    let queue = connect(&url, ConnectOptions::default()).await.expect("connect to redis");
    Backend::Redis { queue, url, prefix }
}
