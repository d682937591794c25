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
        schema: String,
    },
    #[cfg(feature = "redis")]
    Redis {
        queue: Queue,
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

    /// Closes the queue and removes everything it wrote.
    pub(crate) async fn cleanup(self) {
        let _ = self.queue().close().await;
        match self {
            Backend::Sqlite(_) => {}
            #[cfg(feature = "postgres")]
            Backend::Postgres { schema, .. } => drop_schema(&schema).await,
            #[cfg(feature = "redis")]
            Backend::Redis { prefix, .. } => delete_prefix(&prefix).await,
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
    Backend::Postgres { queue, schema }
}

#[cfg(feature = "postgres")]
async fn drop_schema(schema: &str) {
    let (client, conn) =
        tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await.expect("connect to postgres");
    tokio::spawn(conn);
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.expect("drop schema");
}

#[cfg(feature = "redis")]
fn redis_url() -> String {
    std::env::var("FLEXIQ_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string())
}

#[cfg(feature = "redis")]
pub(crate) async fn redis() -> Backend {
    let prefix = format!("fqrt{}", uuid::Uuid::new_v4().simple());
    let url = format!("{}?prefix={prefix}", redis_url());
    let queue = connect(&url, ConnectOptions::default()).await.expect("connect to redis");
    Backend::Redis { queue, prefix }
}

#[cfg(feature = "redis")]
async fn delete_prefix(prefix: &str) {
    use fred::prelude::*;
    use fred::types::{ClusterHash, CustomCommand};
    let client =
        Builder::from_config(Config::from_url(&redis_url()).expect("redis url")).build().expect("client");
    client.init().await.expect("connect for cleanup");
    for pattern in [format!("{{{prefix}:*"), format!("{{{prefix}}}*")] {
        let mut cursor = "0".to_string();
        loop {
            let (next, keys): (String, Vec<String>) = client
                .custom(
                    CustomCommand::new_static("SCAN", ClusterHash::Random, false),
                    vec![cursor.clone(), "MATCH".into(), pattern.clone(), "COUNT".into(), "1000".into()],
                )
                .await
                .expect("scan");
            if !keys.is_empty() {
                let _: i64 = client.unlink(keys).await.expect("unlink");
            }
            if next == "0" {
                break;
            }
            cursor = next;
        }
    }
    let _ = client.quit().await;
}
