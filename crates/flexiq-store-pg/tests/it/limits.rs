//! Rate limits and concurrency caps hold across separate pools (as across processes).

use flexiq_core::store::{Inspect, QueueControl, SetConcurrencyRequest, SetRateLimitRequest};
use flexiq_core::{RateLimit, Store};

use crate::common::{claim, drop_schema, enqueue_n, fresh_schema, open};

/// Two stores on separate pools race `rounds` claims of `limit` each at `now`; returns the total.
async fn race(schema: &str, queue: &str, rounds: usize, limit: u32, now: i64) -> usize {
    let a = open(schema, 4).await;
    let b = open(schema, 4).await;
    let mut tasks = Vec::new();
    for (i, s) in [a.clone(), b.clone()].into_iter().enumerate() {
        for k in 0..2 {
            let (s, queue) = (s.clone(), queue.to_string());
            tasks.push(tokio::spawn(async move {
                let mut n = 0;
                for _ in 0..rounds {
                    n += claim(&s, &queue, limit, &format!("w{i}{k}"), now).await.unwrap().len();
                }
                n
            }));
        }
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    a.close().await.unwrap();
    b.close().await.unwrap();
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_cap_holds_across_pools() {
    let schema = fresh_schema("cap");
    let s = open(&schema, 2).await;
    enqueue_n(&s, "capped", 200, 1_000).await;
    enqueue_n(&s, "free", 50, 1_000).await;
    s.set_concurrency(SetConcurrencyRequest { queue: "capped".into(), max: Some(5) }).await.unwrap();
    assert_eq!(race(&schema, "capped", 15, 3, 2_000).await, 5);
    assert_eq!(s.stats(Some("capped")).await.unwrap().running, 5);
    // The cap is per queue: the uncapped queue drains freely.
    assert_eq!(race(&schema, "free", 10, 7, 2_000).await, 50);
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_holds_across_pools() {
    let schema = fresh_schema("rate");
    let s = open(&schema, 2).await;
    enqueue_n(&s, "rated", 100, 1_000).await;
    let limit = Some(RateLimit::parse("10/m").unwrap());
    s.set_rate_limit(SetRateLimitRequest { queue: "rated".into(), limit }).await.unwrap();
    let t = 10_000;
    assert_eq!(race(&schema, "rated", 10, 4, t).await, 10);
    // One token refills every 6 s, shared by every claimer.
    assert_eq!(race(&schema, "rated", 5, 4, t + 6_000).await, 1);
    assert_eq!(race(&schema, "rated", 5, 4, t + 6_000 + 30_000).await, 5);
    drop_schema(&schema).await;
}
