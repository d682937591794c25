//! Job schedulers on Redis: the keys they keep (`docs/redis.md`), a revoked slot skipped
//! without being counted, and upserts racing fires without a slot fired twice or a count lost.

use std::collections::BTreeSet;

use flexiq_core::schedule::{CatchUp, JobTemplate, RepeatRule};
use flexiq_core::store::{FireSchedulersRequest, Inspect, QueueControl, Schedulers, UpsertSchedulerRequest};
use flexiq_core::EnqueueOptions;
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use crate::harness::RedisHarness;
use crate::plain::dump;

const T0: i64 = 1_774_612_800_000;

fn rule(every_ms: u64, limit: Option<u64>) -> RepeatRule {
    RepeatRule { limit, catch_up: CatchUp::All { max: 100 }, ..RepeatRule::every(every_ms) }
}

fn template() -> JobTemplate {
    let options = EnqueueOptions { queue: Some("cron".into()), ..Default::default() };
    JobTemplate { task: "tick".into(), payload: b"x".to_vec(), options }
}

async fn upsert(s: &RedisStore, id: &str, rule: RepeatRule, now: i64) {
    let req = UpsertSchedulerRequest { id: id.into(), rule, template: template(), now };
    s.upsert_job_scheduler(req).await.unwrap();
}

async fn fire(s: &RedisStore, now: i64) -> Vec<i64> {
    let fired = s.fire_due_schedulers(FireSchedulersRequest { limit: 100, now }).await.unwrap();
    fired.into_iter().map(|f| f.slot_ms).collect()
}

async fn client(h: &RedisHarness) -> Client {
    let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    c
}

#[tokio::test]
async fn a_scheduler_is_a_hash_and_two_sorted_sets_under_the_namespace_tag() {
    let h = RedisHarness::new();
    let s = h.store("ns").await.unwrap();
    upsert(&s, "beat", rule(1_000, Some(1)), T0).await;
    let c = client(&h).await;
    let keys = dump(&c, &h.prefix, "ns").await;
    let hash = &keys["B:js:beat"];
    assert_eq!(hash[0], "hash");
    let fields: Vec<&str> = hash[1..].iter().map(|f| f.split('=').next().unwrap()).collect();
    assert_eq!(fields, vec!["created_at", "iterations", "next_run_ms", "spec", "updated_at"]);
    assert_eq!(keys["B:jsn"], vec!["zset".to_string(), "beat".into(), (T0 + 1_000).to_string()]);
    assert_eq!(keys["B:jsi"], vec!["zset".to_string(), "beat".into(), "0".into()]);
    assert_eq!(fire(&s, T0 + 1_000).await, vec![T0 + 1_000]);
    let keys = dump(&c, &h.prefix, "ns").await;
    assert!(!keys.contains_key("B:jsn"), "a scheduler with no slot left leaves the due set");
    assert!(keys["B:js:beat"].contains(&format!("last_run_ms={}", T0 + 1_000)));
    assert!(!keys["B:js:beat"].iter().any(|f| f.starts_with("next_run_ms=")));
    assert!(s.remove_job_scheduler("beat").await.unwrap());
    let keys = dump(&c, &h.prefix, "ns").await;
    assert!(keys.keys().all(|k| !k.starts_with("B:js")), "{:?}", keys.keys().collect::<Vec<_>>());
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_revoked_slot_moves_the_scheduler_on_without_counting_it() {
    let h = RedisHarness::new();
    let s = h.store("ns").await.unwrap();
    s.revoke_task("tick").await.unwrap();
    upsert(&s, "beat", rule(1_000, None), T0).await;
    assert!(fire(&s, T0 + 3_000).await.is_empty());
    let after = s.get_job_scheduler("beat").await.unwrap().unwrap();
    assert_eq!((after.next_run_ms, after.last_run_ms, after.iterations), (Some(T0 + 4_000), None, 0));
    let c = client(&h).await;
    let keys = dump(&c, &h.prefix, "ns").await;
    assert!(keys.keys().all(|k| !k.starts_with("B:j:")), "no job written");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upserts_racing_fires_neither_refire_a_slot_nor_lose_a_count() {
    let h = RedisHarness::new();
    let a = h.store("ns").await.unwrap();
    let b = h.store("ns").await.unwrap();
    upsert(&a, "beat", rule(100, None), T0).await;
    let mut fired = Vec::new();
    let mut rounds_firing = 0;
    for round in 1..=40 {
        let now = T0 + round * 250;
        // The upsert decides as of a little earlier, so a fire still finds slots due after it.
        let replace = upsert(&b, "beat", rule(100, None), now - 125);
        let (x, y, _) = tokio::join!(fire(&a, now), fire(&b, now), replace);
        rounds_firing += usize::from(!x.is_empty() || !y.is_empty());
        fired.extend(x);
        fired.extend(y);
    }
    let unique: BTreeSet<i64> = fired.iter().copied().collect();
    assert_eq!(unique.len(), fired.len(), "a slot fired twice: {fired:?}");
    let after = a.get_job_scheduler("beat").await.unwrap().unwrap();
    assert_eq!(after.iterations, fired.len() as u64, "every fired slot counted once");
    assert_eq!(after.last_run_ms, unique.last().copied());
    // Which of the three calls wins a round is up to the scheduler, so a round may fire nothing;
    // the race is only exercised if most rounds fire something.
    assert!(rounds_firing >= 20, "slots fired in {rounds_firing} of 40 rounds: {fired:?}");
    let pending = a.stats(Some("cron")).await.unwrap().pending;
    assert_eq!(pending, fired.len() as u64, "one job per fired slot");
    h.cleanup_now().await;
}
