//! The CLI on Redis, under a key prefix of its own deleted afterwards with SCAN + UNLINK.

use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

use crate::stores::{demo_and_ops, unique};

pub(crate) fn redis_url() -> String {
    std::env::var("FLEXIQ_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string())
}

/// Deletes every key whose name contains `prefix` with SCAN + UNLINK.
pub(crate) async fn delete_prefix(prefix: &str) {
    let client =
        Builder::from_config(Config::from_url(&redis_url()).expect("redis url")).build().expect("client");
    client.init().await.expect("connect to redis");
    let mut cursor = "0".to_string();
    loop {
        let (next, keys): (String, Vec<String>) = client
            .custom(
                CustomCommand::new_static("SCAN", ClusterHash::Random, false),
                vec![cursor.clone(), "MATCH".into(), format!("*{prefix}*"), "COUNT".into(), "1000".into()],
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
    let _ = client.quit().await;
}

#[tokio::test]
async fn demo_and_ops_on_redis() {
    let prefix = unique("fqcli");
    let url = format!("{}?prefix={prefix}", redis_url());
    let result = std::panic::catch_unwind(|| demo_and_ops(&url));
    delete_prefix(&prefix).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
