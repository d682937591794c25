//! Redis helpers for tests and benchmarks: the test server's URL and the removal of a test's
//! key prefix. Every suite that touches Redis isolates itself under a random prefix and removes
//! it afterwards with `SCAN` + `UNLINK` on every server holding keys (never `FLUSHALL`), so one
//! shared server serves many test processes at once; this is the one copy of that removal.

use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

/// The server under test: `FLEXIQ_REDIS_URL`, default `redis://127.0.0.1:6379`.
pub fn redis_url() -> String {
    std::env::var("FLEXIQ_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string())
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
