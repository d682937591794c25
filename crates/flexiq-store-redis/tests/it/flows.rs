//! Edge policies as the Redis store keeps them (`d` with `dp` in the dependent's hash): a hash
//! written before edges had policies reads every edge as plain, and the removal paths of
//! `admin.lua` (which settle dependents in Lua, not through a Rust plan) apply each edge's
//! policy the way a plan does.

use flexiq_conformance::fixtures::{at, fail, get, put, put_all, status, take};
use flexiq_core::store::{Admin, RemoveJobRequest};
use flexiq_core::{EdgePolicy, EnqueueOptions, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use crate::harness::RedisHarness;

async fn raw(h: &RedisHarness) -> Client {
    let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    c
}

fn key(h: &RedisHarness, ns: &str, suffix: &str) -> String {
    format!("{{{}:{ns}}}:{suffix}", h.prefix)
}

/// A job of `task` that may not retry, depending on `deps` with `policies` (empty: plain).
fn node(task: &str, deps: &[&JobId], policies: &[EdgePolicy]) -> NewJob {
    let opts = EnqueueOptions {
        max_retries: Some(0),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..Default::default()
    };
    let mut j = NewJob::build(task, b"p".to_vec(), opts, at(0)).unwrap();
    j.dep_policies = policies.to_vec();
    j
}

/// Claims `id` (the only claimable job) and fails it for good with `error`.
async fn kill(s: &RedisStore, id: &JobId, error: &str, t: i64) {
    let c = take(s, 1, at(t)).await.pop().expect("a job to claim");
    assert_eq!(&c.job.id, id);
    fail(s, &c, error, true, at(t)).await;
}

async fn remove(s: &RedisStore, id: &JobId, t: i64) {
    let req = RemoveJobRequest { job_id: id.clone(), remove_children: false, now: at(t) };
    assert_eq!(s.remove_job(req).await.unwrap().jobs, vec![id.clone()]);
}

#[tokio::test]
async fn a_hash_without_edge_policies_reads_every_edge_as_plain() {
    let h = RedisHarness::new();
    let s = h.store("legacy-edges").await.unwrap();
    let c = raw(&h).await;
    let child = node("child", &[], &[]);
    let legacy = node("legacy", &[&child.id], &[EdgePolicy::IgnoreDependency]);
    let current = node("current", &[&child.id], &[EdgePolicy::IgnoreDependency]);
    let ids = put_all(&s, vec![child, legacy, current], at(0)).await;
    let dp = key(&h, "legacy-edges", &format!("j:{}", ids[1]));
    let stored: Option<String> = c.hget(&dp, "dp").await.unwrap();
    assert_eq!(stored.as_deref(), Some("3"), "a policy edge stores its code");
    let _: i64 = c.hdel(&dp, "dp").await.unwrap();
    kill(&s, &ids[0], "boom", 1).await;
    let old = get(&s, &ids[1]).await;
    assert_eq!(old.status, JobStatus::Cancelled, "an edge without a code is plain");
    assert_eq!(old.last_error, Some(format!("dependency {} did not complete", ids[0])));
    assert_eq!(status(&s, &ids[2]).await, JobStatus::Pending, "the edge with its code is ignored");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn removing_the_open_child_releases_a_parent_whose_failed_child_is_ignored() {
    let h = RedisHarness::new();
    let s = h.store("settle").await.unwrap();
    let bad = node("bad", &[], &[]);
    let mut open = node("open", &[], &[]);
    open.run_at = at(60_000);
    let parent =
        node("parent", &[&bad.id, &open.id], &[EdgePolicy::IgnoreDependency, EdgePolicy::FailParent]);
    let ids = put_all(&s, vec![bad, open, parent], at(0)).await;
    kill(&s, &ids[0], "boom", 1).await;
    assert_eq!(status(&s, &ids[2]).await, JobStatus::Waiting, "the open child holds it");
    remove(&s, &ids[1], 2).await;
    let p = get(&s, &ids[2]).await;
    assert_eq!(p.status, JobStatus::Pending, "the ignored failure is settled: {:?}", p.last_error);
    assert_eq!(p.depends_on, vec![ids[0].clone()], "only the removed child's edge went");
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_removal_that_cancels_a_dependent_walks_its_edges_by_policy() {
    let h = RedisHarness::new();
    let ns = "chain";
    let s = h.store(ns).await.unwrap();
    let c = raw(&h).await;
    let dead = put(&s, node("dead", &[], &[]), at(0)).await;
    kill(&s, &dead, "boom", 1).await;
    let gone = put(&s, node("gone", &[], &[]), at(2)).await;
    let other = put(&s, node("other", &[], &[]), at(2)).await;
    let mid = node("mid", &[&gone], &[]);
    let ignores = node("ignores", &[&mid.id], &[EdgePolicy::IgnoreDependency]);
    let fails = node("fails", &[&mid.id], &[EdgePolicy::FailParent]);
    let continues =
        node("continues", &[&mid.id, &other], &[EdgePolicy::ContinueParent, EdgePolicy::CancelDependent]);
    let cuts = node("cuts", &[&mid.id, &other], &[EdgePolicy::RemoveDependency, EdgePolicy::CancelDependent]);
    let ids = put_all(&s, vec![mid, ignores, fails, continues, cuts], at(3)).await;
    let (mid, ignores, fails, continues, cuts) = (&ids[0], &ids[1], &ids[2], &ids[3], &ids[4]);
    // An edge to a job that already died, as no enqueue writes one: removing `gone` then
    // leaves `mid` waiting on a plain edge to a dead job, which cancels it in the same script.
    let mid_key = key(&h, ns, &format!("j:{mid}"));
    let _: i64 = c.hset(&mid_key, ("d", format!("{gone},{dead}"))).await.unwrap();
    let _: i64 = c.sadd(key(&h, ns, &format!("dep:{dead}")), mid.as_str()).await.unwrap();
    remove(&s, &gone, 4).await;
    let m = get(&s, mid).await;
    assert_eq!(m.status, JobStatus::Cancelled);
    assert_eq!(m.last_error, Some(format!("dependency {dead} did not complete")));
    assert_eq!(status(&s, ignores).await, JobStatus::Pending, "ignore_dependency settles the edge");
    let f = get(&s, fails).await;
    assert_eq!(f.status, JobStatus::Failed);
    assert_eq!(f.last_error, Some(format!("child {mid} failed: dependency {dead} did not complete")));
    assert_eq!(status(&s, continues).await, JobStatus::Pending, "continue_parent releases at once");
    let x = get(&s, cuts).await;
    assert_eq!(x.status, JobStatus::Waiting, "remove_dependency waits for the rest");
    assert_eq!(x.depends_on, vec![other.clone()]);
    let dependents: Vec<String> = c.smembers(key(&h, ns, &format!("dep:{mid}"))).await.unwrap();
    assert!(!dependents.contains(&cuts.to_string()), "the cut edge left the dependents set");
    let _ = c.quit().await;
    h.cleanup_now().await;
}
