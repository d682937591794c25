//! The Redis conformance harness: every case gets its own random key prefix, deleted with
//! SCAN + UNLINK afterwards on every server holding keys (never FLUSHALL). Shared by the
//! conformance suites (one server and a Redis Cluster), the integration tests and the
//! benchmarks.

use std::sync::{Arc, Mutex};

use flexiq_conformance::Harness;
use flexiq_core::{Result, Store};
use flexiq_store_redis::{RedisOptions, RedisStore};
use fred::prelude::*;

pub use flexiq_conformance::redis_kit::{delete_prefix, redis_url};

/// A random prefix such as `fxt3f9a...`.
pub fn random_prefix(tag: &str) -> String {
    format!("{tag}{:016x}", rand::random::<u64>())
}

/// One isolated backing: a URL and a key prefix of its own.
pub struct RedisHarness {
    pub url: String,
    pub prefix: String,
    opened: Mutex<Vec<RedisStore>>,
}

impl RedisHarness {
    /// A harness on the default server with a fresh prefix.
    pub fn new() -> Self {
        Self::on(redis_url())
    }

    /// A harness on `url` with a fresh prefix.
    pub fn on(url: String) -> Self {
        RedisHarness { url, prefix: random_prefix("fxt"), opened: Mutex::new(Vec::new()) }
    }

    /// Closes every handle and deletes the prefix (for tests outside `run_case`).
    pub async fn cleanup_now(&self) {
        Harness::cleanup(self).await;
    }

    /// Opens a concrete store on namespace `ns`.
    pub async fn store(&self, ns: &str) -> Result<RedisStore> {
        let s = RedisStore::connect(
            &self.url,
            RedisOptions { namespace: ns.into(), prefix: self.prefix.clone() },
        )
        .await?;
        self.opened.lock().unwrap().push(s.clone());
        Ok(s)
    }
}

#[async_trait::async_trait]
impl Harness for RedisHarness {
    async fn open(&self, namespace: &str) -> Result<Arc<dyn Store>> {
        Ok(Arc::new(self.store(namespace).await?))
    }

    async fn force_contract_floor(&self, level: u32) -> Result<()> {
        let client = Builder::from_config(Config::from_url(&self.url).expect("url")).build().expect("client");
        client.init().await.expect("connect");
        let _: i64 = client
            .hset(format!("{{{}}}:meta", self.prefix), ("min_contract", i64::from(level)))
            .await
            .expect("hset floor");
        let _ = client.quit().await;
        Ok(())
    }

    async fn cleanup(&self) {
        let stores: Vec<RedisStore> = self.opened.lock().unwrap().drain(..).collect();
        for s in stores {
            let _ = s.close().await;
        }
        delete_prefix(&self.url, &self.prefix).await;
    }
}

/// What `conformance_suite!` calls once per case.
pub async fn make_harness() -> RedisHarness {
    RedisHarness::new()
}
