//! The CLI on Redis, under a key prefix of its own deleted afterwards (`redis_kit`).

use crate::stores::{demo_and_ops, unique};

pub(crate) use flexiq_conformance::redis_kit::redis_url;

#[tokio::test]
async fn demo_and_ops_on_redis() {
    let prefix = unique("fqcli");
    let url = format!("{}?prefix={prefix}", redis_url());
    let result = std::panic::catch_unwind(|| demo_and_ops(&url));
    flexiq_conformance::redis_kit::delete_prefix(&redis_url(), &prefix).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}
