//! The shared conformance suite against a private three-master Redis Cluster (started by this
//! binary, see `support/cluster.rs`), each case under its own key prefix, so its namespaces
//! land on different slots and nodes. Two more tests pin what the suite relies on: the scripts
//! touch keys they do not declare, which Redis Cluster accepts only for slots the node running
//! the script serves (they stay in the slot of the declared key), and a case's namespaces really
//! are spread over the masters. A third pins the events stream's blocked reads on the cluster:
//! they wait on a connection of their own, routed to the stream's master.

#[path = "support/cluster.rs"]
#[allow(dead_code, unreachable_pub)]
mod cluster;
#[path = "support/harness.rs"]
#[allow(dead_code, unreachable_pub)]
mod harness;

use std::collections::BTreeSet;

use flexiq_core::events::EventKind;
use flexiq_core::store::{EnqueueRequest, Events, Inspect, JobStore, ReadEventsRequest};
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

/// The port of the master serving `key`'s slot.
async fn owner_of(c: &Client, key: &str) -> i64 {
    let slot: i64 = c
        .custom(CustomCommand::new_static("CLUSTER", ClusterHash::Random, false), vec!["KEYSLOT", key])
        .await
        .unwrap();
    let slots: Value = c
        .custom(CustomCommand::new_static("CLUSTER", ClusterHash::Random, false), vec!["SLOTS"])
        .await
        .unwrap();
    slots
        .into_array()
        .into_iter()
        .find_map(|range| {
            let r = range.into_array();
            let (lo, hi) = (r[0].as_i64()?, r[1].as_i64()?);
            (lo..=hi).contains(&slot).then(|| r[2].clone().into_array()[1].as_i64())?
        })
        .expect("a master serves every slot")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_scripts_may_touch_undeclared_keys_of_their_node_only() {
    let c = cluster_client().await;
    let tag = harness::random_prefix("fxslot");
    let base = format!("{{{tag}:ns}}");
    // What every store script does: a key built from KEYS[1], never declared.
    let same_slot = "redis.call('SET', KEYS[1] .. ':j:x', '1'); return redis.call('GET', KEYS[1] .. ':j:x')";
    assert_eq!(eval(&c, same_slot, &base).await.unwrap().as_string().as_deref(), Some("1"));
    // A key whose slot another master serves is refused.
    let home = owner_of(&c, &base).await;
    let mut foreign = None;
    for i in 0..64 {
        let key = format!("{{{tag}-other{i}}}:x");
        if owner_of(&c, &key).await != home {
            foreign = Some(key);
            break;
        }
    }
    let foreign = foreign.expect("some hash tag lands on another master");
    let other_node = format!("return redis.call('SET', '{foreign}', '1')");
    let err = eval(&c, &other_node, &base).await.unwrap_err();
    assert!(
        err.details().contains("same slot") || err.details().contains("non local key"),
        "a key of another node is refused: {err:?}"
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
        owners.insert(owner_of(&c, &format!("{{{}:{ns}}}", h.prefix)).await);
    }
    assert!(owners.len() > 1, "twelve namespaces all landed on one master: {owners:?}");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_blocked_event_readers_wait_on_their_own_connection() {
    let h = RedisHarness::on(cluster::cluster().url());
    let reader = h.store("events").await.unwrap();
    let writer = h.store("events").await.unwrap();
    let now = 1_700_000_000_000;
    let job = || NewJob::build("t", b"x".to_vec(), EnqueueOptions::default(), now).unwrap();
    let blocked = tokio::spawn({
        let reader = reader.clone();
        async move { reader.read_events(ReadEventsRequest { after: None, block_ms: 20_000, limit: 10 }).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!blocked.is_finished(), "an empty stream blocks the read");
    let started = std::time::Instant::now();
    assert_eq!(reader.count_pending("default").await.unwrap(), 0, "the reader's pool still answers");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "{:?}", started.elapsed());
    let id = writer.enqueue(EnqueueRequest { jobs: vec![job()], max_pending: None, now }).await.unwrap();
    let got = blocked.await.unwrap().unwrap();
    let got: Vec<_> = got.into_iter().map(|e| (e.kind, e.job_id)).collect();
    assert_eq!(got, vec![(EventKind::Enqueued, Some(id[0].id.to_string()))]);
    h.cleanup_now().await;
}
