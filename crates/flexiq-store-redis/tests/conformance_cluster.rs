//! The shared conformance suite against a private three-master Redis Cluster (started by this
//! binary, see `support/cluster.rs`), each case under its own key prefix, so its namespaces
//! land on different slots and nodes. Two more tests pin what the suite relies on: the scripts
//! touch keys they do not declare, which Redis Cluster accepts only inside the slot of a declared
//! key, and a case's namespaces really are spread over the masters.

#[path = "support/cluster.rs"]
#[allow(dead_code, unreachable_pub)]
mod cluster;
#[path = "support/harness.rs"]
#[allow(dead_code, unreachable_pub)]
mod harness;

use std::collections::BTreeSet;

use flexiq_core::store::{EnqueueRequest, Inspect, JobStore};
use flexiq_core::{EnqueueOptions, NewJob};
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};
use harness::RedisHarness;

async fn make_harness() -> RedisHarness {
    RedisHarness::on(cluster::cluster().url())
}

flexiq_conformance::conformance_suite!(make_harness);

async fn cluster_client() -> Client {
    let c = Builder::from_config(Config::from_url(&cluster::cluster().url()).unwrap()).build().unwrap();
    c.init().await.unwrap();
    c
}

/// `EVAL script 1 key`, sent to the master serving `key`.
async fn eval(c: &Client, script: &str, key: &str) -> Result<Value, fred::error::Error> {
    c.custom(CustomCommand::new_static("EVAL", ClusterHash::from(key), false), vec![script, "1", key]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_scripts_may_touch_undeclared_keys_only_in_the_declared_slot() {
    let c = cluster_client().await;
    let tag = harness::random_prefix("fxslot");
    let base = format!("{{{tag}:ns}}");
    // What every store script does: a key built from KEYS[1], never declared.
    let same_slot = "redis.call('SET', KEYS[1] .. ':j:x', '1'); return redis.call('GET', KEYS[1] .. ':j:x')";
    assert_eq!(eval(&c, same_slot, &base).await.unwrap().as_string().as_deref(), Some("1"));
    // The same with a key of another hash tag is refused, whichever node holds that slot.
    let other_slot = "return redis.call('SET', '{' .. KEYS[1] .. '-other}:x', '1')";
    let err = eval(&c, other_slot, &base).await.unwrap_err();
    assert!(
        err.details().contains("same slot") || err.details().contains("non local key"),
        "a cross-slot key is refused: {err:?}"
    );
    let _: i64 = c.del(format!("{base}:j:x")).await.unwrap();
    let _ = c.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_namespaces_spread_over_the_masters_and_each_works() {
    let h = RedisHarness::on(cluster::cluster().url());
    let c = cluster_client().await;
    let mut owners = BTreeSet::new();
    let now = 1_700_000_000_000;
    for i in 0..12 {
        let ns = format!("ns{i}");
        let s = h.store(&ns).await.unwrap();
        let job = NewJob::build("t", b"x".to_vec(), EnqueueOptions::default(), now).unwrap();
        s.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now }).await.unwrap();
        assert_eq!(s.count_pending("default").await.unwrap(), 1, "{ns}");
        let slot: i64 = c
            .custom(
                CustomCommand::new_static("CLUSTER", ClusterHash::Random, false),
                vec!["KEYSLOT".to_string(), format!("{{{}:{ns}}}", h.prefix)],
            )
            .await
            .unwrap();
        let slots: Value = c
            .custom(CustomCommand::new_static("CLUSTER", ClusterHash::Random, false), vec!["SLOTS"])
            .await
            .unwrap();
        let owner = slots.into_array().into_iter().find_map(|range| {
            let r = range.into_array();
            let (lo, hi) = (r[0].as_i64()?, r[1].as_i64()?);
            (lo..=hi).contains(&slot).then(|| r[2].clone().into_array()[1].as_i64())?
        });
        owners.insert(owner.expect("a master serves every slot"));
    }
    assert!(owners.len() > 1, "twelve namespaces all landed on one master: {owners:?}");
    let _ = c.quit().await;
    h.cleanup_now().await;
}
