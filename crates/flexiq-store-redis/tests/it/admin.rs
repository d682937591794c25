//! What the admin operations leave on the server, read off it: a removed job leaves the
//! namespace as it was before the job was enqueued, an obliterated queue leaves no key, record
//! or registry entry behind, and `remove_orphans` finds job hashes no status index holds,
//! index members and history keys whose job is gone, and nothing else.

use std::collections::BTreeMap;

use flexiq_conformance::fixtures::{at, complete, fail, put, start};
use flexiq_core::dedup::{DedupMode, DedupOptions};
use flexiq_core::store::{
    Admin, AppendLogRequest, ArchiveTerminalRequest, ClaimRequest, DedupJobIdRequest, Deduplication,
    EnqueueRequest, History, Inspect, JobStore, ListArchivedRequest, Maintenance, ObliterateRequest,
    PublishPartialRequest, QueueControl, RemoveJobRequest, SetConcurrencyRequest, SetRateLimitRequest,
};
use flexiq_core::{EnqueueOptions, JobId, JobStatus, NewJob, RateLimit};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

use crate::harness::RedisHarness;
use crate::workflow::{dump, raw};

const DOOMED: &str = "doomed";
const KEPT: &str = "kept";

fn job(queue: &str, opts: EnqueueOptions) -> NewJob {
    NewJob::build("t", b"p".to_vec(), EnqueueOptions { queue: Some(queue.into()), ..opts }, at(0)).unwrap()
}

async fn cmd(c: &Client, name: &'static str, args: Vec<String>) -> Value {
    c.custom(CustomCommand::new_static(name, ClusterHash::FirstKey, false), args).await.unwrap()
}

/// Every key under the namespace base of `ns`.
async fn keys(c: &Client, h: &RedisHarness, ns: &str) -> Vec<String> {
    let pattern = format!("{{{}:{ns}}}:*", h.prefix);
    let (mut cursor, mut out) = ("0".to_string(), Vec::new());
    loop {
        let args = vec![cursor.clone(), "MATCH".into(), pattern.clone(), "COUNT".into(), "1000".into()];
        let mut reply = cmd(c, "SCAN", args).await.into_array().into_iter();
        cursor = reply.next().and_then(|v| v.as_string()).unwrap();
        out.extend(reply.next().unwrap().into_array().into_iter().filter_map(|k| k.as_string()));
        if cursor == "0" {
            out.sort();
            out.dedup();
            return out;
        }
    }
}

/// A namespace dump without what legitimately moves on: wake-up tokens, the log sequence and
/// counters at zero.
fn settled(mut d: BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<String>> {
    d.remove(":wake");
    d.remove(":seq");
    // The events stream is the namespace's history: it reports the job and its removal.
    d.remove(":ev");
    for (k, items) in d.iter_mut() {
        if k.starts_with(":cnt:") {
            items.retain(|i| !i.ends_with("=0"));
        }
    }
    d.retain(|_, items| !items.is_empty());
    d
}

#[tokio::test]
async fn a_removed_job_leaves_the_namespace_as_before_it_was_enqueued() {
    let h = RedisHarness::new();
    let c = raw(&h).await;
    let s = h.store("rm").await.unwrap();
    let dep = start(&s, job(KEPT, EnqueueOptions::default()), at(0)).await;
    complete(&s, &dep, None, at(1)).await;
    let before = settled(dump(&c, &h, "rm", "(no id)").await);
    let opts = EnqueueOptions {
        depends_on: vec![dep.job.id.to_string()],
        unique_key: Some("u".into()),
        metadata: Some("{}".into()),
        max_retries: Some(0),
        ..Default::default()
    };
    let x = start(&s, job(KEPT, opts), at(2)).await;
    let log =
        AppendLogRequest { id: x.job.id.clone(), level: "info".into(), message: "m".into(), now: at(2) };
    s.append_log(log).await.unwrap();
    s.publish_partial(PublishPartialRequest { id: x.job.id.clone(), data: b"d".to_vec(), now: at(2) })
        .await
        .unwrap();
    fail(&s, &x, "boom", true, at(3)).await;
    assert_eq!(s.get(&x.job.id).await.unwrap().unwrap().status, JobStatus::Dead);
    let removed =
        s.remove_job(RemoveJobRequest { job_id: x.job.id.clone(), remove_children: false, now: at(4) });
    assert_eq!(removed.await.unwrap().jobs, vec![x.job.id.clone()]);
    assert_eq!(settled(dump(&c, &h, "rm", "(no id)").await), before, "nothing of the removed job is left");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

/// A queue holding every kind of job and record, another queue's job waiting on one of them.
async fn doomed_queue(s: &RedisStore) -> (Vec<JobId>, JobId) {
    let mut ids = Vec::new();
    let limit = Some(RateLimit::parse("100/s").unwrap());
    s.set_rate_limit(SetRateLimitRequest { queue: DOOMED.into(), limit }).await.unwrap();
    s.set_concurrency(SetConcurrencyRequest { queue: DOOMED.into(), max: Some(50) }).await.unwrap();
    let fragile = || EnqueueOptions { max_retries: Some(0), ..Default::default() };
    for (t, archived) in [(0, true), (1, false)] {
        let done = start(s, job(DOOMED, EnqueueOptions::default()), at(t)).await;
        complete(s, &done, Some(b"r"), at(t)).await;
        let died = start(s, job(DOOMED, fragile()), at(t)).await;
        let log = AppendLogRequest {
            id: died.job.id.clone(),
            level: "info".into(),
            message: "m".into(),
            now: at(t),
        };
        s.append_log(log).await.unwrap();
        fail(s, &died, "boom", true, at(t)).await;
        ids.extend([done.job.id, died.job.id]);
        if archived {
            let req = ArchiveTerminalRequest { cutoff_ms: at(1), limit: 10, now: at(1) };
            assert_eq!(s.archive_terminal(req).await.unwrap(), 2);
        }
    }
    let running = start(s, job(DOOMED, EnqueueOptions::default()), at(2)).await;
    s.publish_partial(PublishPartialRequest { id: running.job.id.clone(), data: b"d".to_vec(), now: at(2) })
        .await
        .unwrap();
    ids.push(running.job.id);
    let unique = EnqueueOptions { unique_key: Some("u".into()), ..Default::default() };
    let stage = EnqueueOptions {
        workflow_run_id: Some("run".into()),
        workflow_stage_id: Some("a".into()),
        ..Default::default()
    };
    // A throttle record outlives its holder's run: obliterating the queue must still drop it.
    let throttled = DedupOptions {
        id: format!("{DOOMED}-key"),
        mode: DedupMode::Throttle,
        ttl_ms: Some(3_600_000),
        extend: false,
        replace: false,
    };
    let delayed = EnqueueOptions { run_at: Some(at(60_000)), dedup: Some(throttled), ..Default::default() };
    let jobs = vec![job(DOOMED, unique), job(DOOMED, stage), job(DOOMED, delayed)];
    let first = jobs[0].id.clone();
    ids.extend(jobs.iter().map(|j| j.id.clone()));
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now: at(3) }).await.unwrap();
    let waits = EnqueueOptions { depends_on: vec![first.to_string()], ..Default::default() };
    let waiter = put(s, job(KEPT, waits), at(3)).await;
    s.pause(DOOMED).await.unwrap();
    s.resume(DOOMED).await.unwrap();
    s.pause(DOOMED).await.unwrap();
    (ids, waiter)
}

#[tokio::test]
async fn an_obliterated_queue_leaves_no_key_or_record() {
    let h = RedisHarness::new();
    let c = raw(&h).await;
    let s = h.store("obl").await.unwrap();
    let (ids, waiter) = doomed_queue(&s).await;
    let mut left = Vec::new();
    loop {
        let req = ObliterateRequest { queue: DOOMED.into(), force: true, count: 2, now: at(4) };
        let n = s.obliterate(req).await.unwrap();
        left.push(n);
        if n == 0 {
            break;
        }
    }
    assert_eq!(left, vec![4, 2, 0], "six live jobs, two a page (the archived ones are not live)");
    let held = DedupJobIdRequest { key: format!("{DOOMED}-key"), now: at(5) };
    assert_eq!(s.dedup_job_id(held).await.unwrap(), None, "the queue's dedup record went");
    let base = format!("{{{}:obl}}", h.prefix);
    for key in keys(&c, &h, "obl").await {
        assert!(!key.contains(DOOMED), "a key of the queue is left: {key}");
        for id in &ids {
            assert!(!key.contains(id.as_str()), "a key of job {id} is left: {key}");
        }
        if key.starts_with(&format!("{base}:j:")) || key.starts_with(&format!("{base}:a:")) {
            let q = cmd(&c, "HGET", vec![key.clone(), "q".into()]).await.as_string();
            assert_ne!(q.as_deref(), Some(DOOMED), "a job of the queue is left: {key}");
        }
        let kind = cmd(&c, "TYPE", vec![key.clone()]).await.as_string().unwrap_or_default();
        let items: Vec<String> = match kind.as_str() {
            "set" => cmd(&c, "SMEMBERS", vec![key.clone()]).await.into_array(),
            "zset" => cmd(&c, "ZRANGE", vec![key.clone(), "0".into(), "-1".into()]).await.into_array(),
            "hash" => cmd(&c, "HGETALL", vec![key.clone()]).await.into_array(),
            _ => Vec::new(),
        }
        .into_iter()
        .filter_map(|v| v.as_string())
        .collect();
        for item in items {
            assert!(!item.contains(DOOMED), "{key} still names the queue: {item}");
            for id in &ids {
                assert!(!item.contains(id.as_str()), "{key} still names job {id}: {item}");
            }
        }
    }
    assert_eq!(s.get(&waiter).await.unwrap().unwrap().status, JobStatus::Pending, "its dependency is gone");
    assert!(!s.stats_all_queues().await.unwrap().contains_key(DOOMED));
    assert_eq!(s.stats(Some(KEPT)).await.unwrap().total(), 1);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn remove_orphans_takes_planted_orphans_only() {
    let h = RedisHarness::new();
    let c = raw(&h).await;
    let s = h.store("orph").await.unwrap();
    let kept = DedupOptions {
        id: "kept".into(),
        mode: DedupMode::Throttle,
        ttl_ms: Some(60_000),
        ..Default::default()
    };
    let done = start(&s, job(KEPT, EnqueueOptions { dedup: Some(kept), ..Default::default() }), at(0)).await;
    let log =
        AppendLogRequest { id: done.job.id.clone(), level: "info".into(), message: "m".into(), now: at(0) };
    s.append_log(log).await.unwrap();
    complete(&s, &done, None, at(1)).await;
    let pending =
        put(&s, job(KEPT, EnqueueOptions { unique_key: Some("u".into()), ..Default::default() }), at(1))
            .await;
    s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(2), limit: 10, now: at(2) }).await.unwrap();
    assert_eq!(s.remove_orphans().await.unwrap(), 0, "nothing is orphaned yet");
    let before = dump(&c, &h, "orph", "(no id)").await;
    let base = format!("{{{}:orph}}", h.prefix);
    let code = JobStatus::Pending.code();
    let member = format!("{:016}|ghost", at(1));
    let plant: Vec<(&'static str, Vec<String>)> = vec![
        // A job hash in no index, with a log of its own.
        (
            "HSET",
            vec![
                format!("{base}:j:stray"),
                "st".into(),
                code.to_string(),
                "q".into(),
                KEPT.into(),
                "t".into(),
                "t".into(),
                "c".into(),
                at(1).to_string(),
                "r".into(),
                at(1).to_string(),
                "v".into(),
                "1".into(),
            ],
        ),
        ("ZADD", vec![format!("{base}:log:stray"), "0".into(), "line".into()]),
        // Index members and a history key of a job that is gone.
        ("ZADD", vec![format!("{base}:ix:s:{code}"), "0".into(), member.clone()]),
        ("ZADD", vec![format!("{base}:ix:q:{KEPT}"), "0".into(), member.clone()]),
        ("ZADD", vec![format!("{base}:rd:{KEPT}"), "0".into(), member]),
        ("ZADD", vec![format!("{base}:fin"), "0".into(), "ghost".into()]),
        ("HSET", vec![format!("{base}:uniq"), "v".into(), "ghost".into()]),
        ("ZADD", vec![format!("{base}:err:ghost"), "0".into(), "e".into()]),
        ("SADD", vec![format!("{base}:dep:{pending}"), "ghost".into()]),
        // A dedup record naming a job that is gone.
        ("HSET", vec![format!("{base}:dd:lost"), "jid".into(), "ghost".into(), "q".into(), KEPT.into()]),
    ];
    for (name, args) in plant {
        cmd(&c, name, args).await;
    }
    // The stray hash (its log goes with it), six index members, one history key and the
    // dedup record; the record of the archived job stays.
    assert_eq!(s.remove_orphans().await.unwrap(), 9);
    assert_eq!(dump(&c, &h, "orph", "(no id)").await, before, "exactly the planted keys went");
    assert_eq!(s.remove_orphans().await.unwrap(), 0);
    assert_eq!(s.get(&pending).await.unwrap().unwrap().status, JobStatus::Pending);
    let archived = s.list_archived(ListArchivedRequest { limit: 10, offset: 0 }).await.unwrap();
    assert_eq!(archived.len(), 1, "an archived job is no orphan");
    let held = DedupJobIdRequest { key: "kept".into(), now: at(3) };
    assert_eq!(s.dedup_job_id(held).await.unwrap(), Some(done.job.id.clone()), "an archived holder holds");
    let claimed = s
        .claim(ClaimRequest { queues: vec![KEPT.into()], limit: 5, worker_id: "w".into(), now: at(3) })
        .await
        .unwrap();
    assert_eq!(claimed.iter().map(|c| c.job.id.clone()).collect::<Vec<_>>(), vec![pending]);
    let _ = c.quit().await;
    h.cleanup_now().await;
}
