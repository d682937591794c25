//! The plain enqueue path (`enqueue_plain.lua`, writes laid out by the client) and the general
//! one (`enqueue.lua`) must leave identical keys: the same batch (LIFO jobs among them, whose
//! ready-set members each path encodes on its own) goes through each into its own namespace,
//! and every key of the two namespaces is compared, the events each wrote among them.

use std::collections::BTreeMap;

use flexiq_core::store::{EnqueueRequest, JobStore};
use flexiq_core::{EnqueueOptions, NewJob};
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

use crate::harness::RedisHarness;
use crate::workflow::raw;

const NOW: i64 = 1_700_000_000_000;

fn batch() -> Vec<NewJob> {
    (0..1_500)
        .map(|i| {
            let opts = EnqueueOptions {
                queue: Some(["q1", "q2", "q3"][i % 3].to_string()),
                priority: Some((i % 4) as i32 - 1),
                delay_ms: (i % 5 == 0).then_some(60_000),
                timeout_ms: (i % 7 == 0).then_some(5_000),
                metadata: (i % 11 == 0).then(|| format!("{{\"n\":{i}}}")),
                lifo: i % 5 != 0 && i % 13 == 0,
                ..Default::default()
            };
            NewJob::build(["a", "b"][i % 2], format!("{i}").into_bytes(), opts, NOW).unwrap()
        })
        .collect()
}

async fn call(c: &Client, name: &'static str, args: Vec<String>) -> Value {
    c.custom(CustomCommand::new_static(name, ClusterHash::FirstKey, false), args).await.unwrap()
}

fn texts(v: Value) -> Vec<String> {
    v.into_array().into_iter().map(|x| x.as_string().unwrap_or_default()).collect()
}

/// Every key of namespace `ns` (its base replaced by `B`) with its type and contents.
pub(crate) async fn dump(c: &Client, prefix: &str, ns: &str) -> BTreeMap<String, Vec<String>> {
    let base = format!("{{{prefix}:{ns}}}");
    let mut out = BTreeMap::new();
    let mut cursor = "0".to_string();
    loop {
        let (next, keys): (String, Vec<String>) = c
            .custom(
                CustomCommand::new_static("SCAN", ClusterHash::Random, false),
                vec![cursor, "MATCH".into(), format!("{base}*"), "COUNT".into(), "1000".into()],
            )
            .await
            .unwrap();
        for k in keys {
            let kind = call(c, "TYPE", vec![k.clone()]).await.as_string().unwrap_or_default();
            let mut body = match kind.as_str() {
                "hash" => {
                    let f = texts(call(c, "HGETALL", vec![k.clone()]).await);
                    let mut pairs: Vec<String> = f.chunks(2).map(|p| format!("{}={}", p[0], p[1])).collect();
                    pairs.sort();
                    pairs
                }
                "zset" => texts(
                    call(c, "ZRANGE", vec![k.clone(), "0".into(), "-1".into(), "WITHSCORES".into()]).await,
                ),
                "set" => {
                    let mut m = texts(call(c, "SMEMBERS", vec![k.clone()]).await);
                    m.sort();
                    m
                }
                // The events stream: each entry's fields in order, without its id (the clock's).
                "stream" => call(c, "XRANGE", vec![k.clone(), "-".into(), "+".into()])
                    .await
                    .into_array()
                    .into_iter()
                    .map(|e| texts(e.into_array().into_iter().nth(1).unwrap_or(Value::Null)).join(" "))
                    .collect(),
                other => vec![format!("unexpected type {other}")],
            };
            body.insert(0, kind);
            out.insert(k.replacen(&base, "B", 1), body);
        }
        if next == "0" {
            break;
        }
        cursor = next;
    }
    out
}

/// Enqueues each batch of `calls` through the general script in namespace `general` and
/// through the plain one in `plain`, and checks both leave the same keys with the same contents.
async fn same_keys_either_way(calls: Vec<Vec<NewJob>>) -> usize {
    let h = RedisHarness::new();
    let general = h.store("general").await.unwrap();
    let plain = h.store("plain").await.unwrap();
    for jobs in calls {
        // An admission cap sends a batch through the general script; without one it is plain.
        let capped = EnqueueRequest { jobs: jobs.clone(), max_pending: Some(1_000_000), now: NOW };
        let a = general.enqueue(capped).await.unwrap();
        let b =
            plain.enqueue(EnqueueRequest { jobs: jobs.clone(), max_pending: None, now: NOW }).await.unwrap();
        assert_eq!(a.len(), jobs.len());
        assert_eq!(
            a.iter().map(|e| (&e.id, e.created)).collect::<Vec<_>>(),
            b.iter().map(|e| (&e.id, e.created)).collect::<Vec<_>>()
        );
    }
    let c = raw(&h).await;
    let (left, right) = (dump(&c, &h.prefix, "general").await, dump(&c, &h.prefix, "plain").await);
    assert_eq!(left.keys().collect::<Vec<_>>(), right.keys().collect::<Vec<_>>());
    for (k, v) in &left {
        assert_eq!(Some(v), right.get(k), "key {k}");
    }
    let _ = c.quit().await;
    h.cleanup_now().await;
    left.len()
}

#[tokio::test]
async fn plain_and_general_enqueues_write_the_same_keys() {
    let keys = same_keys_either_way(vec![batch()]).await;
    assert!(keys > 1_500, "{keys} keys");
}

/// One job per call takes the plain script's single-member paths (each index written without
/// a member list, the hash without a field list when the job has no optional field).
#[tokio::test]
async fn one_job_enqueues_write_the_same_keys_either_way() {
    let calls: Vec<Vec<NewJob>> = batch().into_iter().take(40).map(|j| vec![j]).collect();
    assert!(calls.iter().any(|c| c[0].timeout_ms.is_some()), "a job with an optional field");
    assert!(calls.iter().any(|c| c[0].timeout_ms.is_none() && c[0].metadata.is_none()), "a job without");
    let keys = same_keys_either_way(calls).await;
    assert!(keys > 40, "{keys} keys");
}
