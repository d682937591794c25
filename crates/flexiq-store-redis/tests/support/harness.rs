//! The Redis conformance harness: every case gets its own random key prefix, deleted with
//! SCAN + UNLINK afterwards on every server holding keys (never FLUSHALL). Shared by the
//! conformance suites (one server and a Redis Cluster), the integration tests and the
//! benchmarks.

use std::sync::{Arc, Mutex};

use flexiq_conformance::Harness;
use flexiq_core::{Result, Store};
use flexiq_store_redis::{RedisOptions, RedisStore};
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

/// The server under test: `FLEXIQ_REDIS_URL`, default `redis://127.0.0.1:6379`.
pub fn redis_url() -> String {
    std::env::var("FLEXIQ_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string())
}

/// A random prefix such as `fxt3f9a...`.
pub fn random_prefix(tag: &str) -> String {
    format!("{tag}{:016x}", rand::random::<u64>())
}

async fn connect(config: Config) -> Client {
    let client = Builder::from_config(config).build().expect("client");
    client.init().await.expect("connect for cleanup");
    client
}

/// One client per server holding keys: the server itself, or each primary of a cluster (read
/// from `CLUSTER NODES` on the first node the URL names), since `SCAN` walks one node.
async fn key_holders(url: &str) -> Vec<Client> {
    let config = Config::from_url(url).expect("redis url");
    let ServerConfig::Clustered { hosts, .. } = &config.server else {
        return vec![connect(config).await];
    };
    let node = |host: &str, port: u16| Config {
        server: ServerConfig::new_centralized(host, port),
        username: config.username.clone(),
        password: config.password.clone(),
        ..Default::default()
    };
    let seed = connect(node(&hosts[0].host, hosts[0].port)).await;
    let nodes: String = seed
        .custom(CustomCommand::new_static("CLUSTER", ClusterHash::Random, false), vec!["NODES"])
        .await
        .expect("cluster nodes");
    let _ = seed.quit().await;
    let mut out = Vec::new();
    for line in nodes.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 3 || !f[2].split(',').any(|flag| flag == "master") {
            continue;
        }
        let addr = f[1].split('@').next().unwrap_or_default();
        let (host, port) = addr.rsplit_once(':').expect("node address host:port");
        out.push(connect(node(host, port.parse().expect("node port"))).await);
    }
    out
}

/// Deletes every key of `prefix` (both `{prefix}` and `{prefix:namespace}` keys) on every
/// server holding keys, one `UNLINK` per key (keys of different namespaces are in different
/// cluster slots).
pub async fn delete_prefix(url: &str, prefix: &str) {
    for client in key_holders(url).await {
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
                    let p = client.pipeline();
                    for k in keys {
                        let _: () = p.unlink(k).await.expect("queue unlink");
                    }
                    let _: Vec<Value> = p.all().await.expect("unlink");
                }
                if next == "0" {
                    break;
                }
                cursor = next;
            }
        }
        let _ = client.quit().await;
    }
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
