//! What the Redis store keeps for workflow stages, read off the server: a fair claim writes
//! exactly what a claim writes and a fair batch exactly what single claims in a row write,
//! deleting a stage leaves nothing of its job behind, archiving and
//! purging take a job out of its run (freeing its pair), a replaced stage that changes task
//! moves its task indexes, an enqueue conflict writes nothing, and a job hash from before the
//! version field reads no version.

use std::collections::BTreeMap;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, AppendLogRequest, ArchiveTerminalRequest, ClaimFairRequest, ClaimRequest,
    DeleteStagesRequest, EnqueueRequest, History, Inspect, JobStore, ListJobsRequest, Maintenance,
    PublishPartialRequest, PurgeCompletedRequest, QueueControl, UpsertStagesRequest, Workflows,
};
use flexiq_core::{Backoff, ClaimedJob, EnqueueOptions, ErrorKind, JobFilter, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

use crate::harness::RedisHarness;

const NOW: i64 = 1_700_000_000_000;

pub(crate) async fn raw(h: &RedisHarness) -> Client {
    let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    c
}

async fn cmd(c: &Client, name: &'static str, args: Vec<String>) -> Value {
    c.custom(CustomCommand::new_static(name, ClusterHash::FirstKey, false), args).await.unwrap()
}

fn texts(v: Value) -> Vec<String> {
    v.into_array().into_iter().map(|x| x.as_string().unwrap_or_default()).collect()
}

/// Every key of namespace `ns` (its name after the namespace base) with its content as text:
/// members with scores, fields with values, sorted, every occurrence of `id` written `<id>`. A
/// stream (the events stream) lists its entries' fields in order, without the entry ids, which
/// carry the server's clock.
pub(crate) async fn dump(c: &Client, h: &RedisHarness, ns: &str, id: &str) -> BTreeMap<String, Vec<String>> {
    let base = format!("{{{}:{ns}}}", h.prefix);
    let scan = vec!["0".into(), "MATCH".into(), format!("{base}:*"), "COUNT".into(), "100000".into()];
    let found = cmd(c, "SCAN", scan).await.into_array();
    let keys = texts(found.into_iter().nth(1).unwrap());
    let mut out = BTreeMap::new();
    for key in keys {
        let kind = cmd(c, "TYPE", vec![key.clone()]).await.as_string().unwrap_or_default();
        let mut items = match kind.as_str() {
            "zset" => {
                texts(cmd(c, "ZRANGE", vec![key.clone(), "0".into(), "-1".into(), "WITHSCORES".into()]).await)
                    .chunks(2)
                    .map(|p| format!("{}={}", p[0], p[1]))
                    .collect()
            }
            "hash" => texts(cmd(c, "HGETALL", vec![key.clone()]).await)
                .chunks(2)
                .map(|p| format!("{}={}", p[0], p[1]))
                .collect(),
            "set" => texts(cmd(c, "SMEMBERS", vec![key.clone()]).await),
            "list" => texts(cmd(c, "LRANGE", vec![key.clone(), "0".into(), "-1".into()]).await),
            "stream" => stream_entries(cmd(c, "XRANGE", vec![key.clone(), "-".into(), "+".into()]).await),
            _ => vec![cmd(c, "GET", vec![key.clone()]).await.as_string().unwrap_or_default()],
        };
        items.sort();
        let items = items.into_iter().map(|i| i.replace(id, "<id>")).collect();
        out.insert(key[base.len()..].replace(id, "<id>"), items);
    }
    out
}

/// An `XRANGE` reply as one line per entry, `<position>:field=value ...`, ids left out.
fn stream_entries(v: Value) -> Vec<String> {
    v.into_array()
        .into_iter()
        .enumerate()
        .map(|(k, e)| {
            let fields = texts(e.into_array().into_iter().nth(1).unwrap_or(Value::Null));
            let pairs: Vec<String> = fields.chunks(2).map(|p| format!("{}={}", p[0], p[1])).collect();
            format!("{k:06}:{}", pairs.join(" "))
        })
        .collect()
}

pub(crate) fn stage(run: &str, stage: &str, task: &str, opts: EnqueueOptions) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some("workflow".into()),
        workflow_run_id: Some(run.into()),
        workflow_stage_id: Some(stage.into()),
        ..opts
    };
    NewJob::build(task, b"{}".to_vec(), opts, NOW).unwrap()
}

pub(crate) async fn upsert(s: &RedisStore, jobs: Vec<NewJob>, now: i64) -> Vec<JobId> {
    s.upsert_stages(UpsertStagesRequest { jobs, now }).await.unwrap()
}

pub(crate) async fn fair(s: &RedisStore, cap: Option<u32>, now: i64) -> Option<ClaimedJob> {
    let mut got = fair_batch(s, vec!["w".into()], cap, now).await;
    assert!(got.len() <= 1, "one worker, one job at most");
    got.pop()
}

async fn fair_batch(s: &RedisStore, workers: Vec<String>, cap: Option<u32>, now: i64) -> Vec<ClaimedJob> {
    let req = ClaimFairRequest {
        queues: vec!["workflow".into()],
        serves: Vec::new(),
        workers,
        group_cap: cap,
        now,
    };
    s.claim_fair(req).await.unwrap()
}

pub(crate) async fn ack(s: &RedisStore, c: &ClaimedJob, kind: AckKind, now: i64) {
    let acks = vec![Ack { job_id: c.job.id.clone(), fence: c.fence, kind }];
    s.ack(AckRequest { acks, now }).await.unwrap();
}

#[tokio::test]
async fn a_fair_claim_writes_exactly_what_a_claim_writes() {
    let h = RedisHarness::new();
    let c = raw(&h).await;
    let mut dumps = Vec::new();
    for (ns, fairly) in [("plain", false), ("fair", true)] {
        let s = h.store(ns).await.unwrap();
        s.set_concurrency(flexiq_core::store::SetConcurrencyRequest {
            queue: "workflow".into(),
            max: Some(5),
        })
        .await
        .unwrap();
        let opts = EnqueueOptions { group_key: Some("g".into()), ..Default::default() };
        let id = upsert(&s, vec![stage("r", "a", "wf", opts)], NOW).await.remove(0);
        let claimed = if fairly {
            fair(&s, Some(2), NOW + 5).await.unwrap()
        } else {
            let req = ClaimRequest {
                queues: vec!["workflow".into()],
                limit: 1,
                worker_id: "w".into(),
                now: NOW + 5,
            };
            s.claim(req).await.unwrap().remove(0)
        };
        assert_eq!(claimed.job.id, id);
        assert_eq!(s.get(&id).await.unwrap().unwrap(), claimed.job, "the claim returns the job as stored");
        let mut d = dump(&c, &h, ns, id.as_str()).await;
        // What only a fair claim keeps: the fairness cursor; and the wake-up tokens carry id digits.
        assert_eq!(d.remove(":wfcur").is_some(), fairly);
        d.remove(":wake");
        dumps.push(d);
    }
    assert_eq!(dumps[0], dumps[1]);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

/// A stage of group `g` in `queue` with priority `pr`.
fn grouped(stage_id: &str, g: &str, queue: &str, pr: i32) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some(queue.into()),
        group_key: Some(g.into()),
        priority: Some(pr),
        workflow_run_id: Some("r".into()),
        workflow_stage_id: Some(stage_id.into()),
        ..Default::default()
    };
    NewJob::build("wf", b"{}".to_vec(), opts, NOW).unwrap()
}

#[tokio::test]
async fn a_fair_batch_writes_exactly_what_single_claims_in_a_row_write() {
    let h = RedisHarness::new();
    let c = raw(&h).await;
    // The same jobs (same ids) in both namespaces, over two queues: one with a concurrency
    // cap, one with a rate limit, so the batch runs into both limits and the group cap, which
    // group a meets in both queues.
    let mut jobs = Vec::new();
    let groups =
        [("a", 5, "workflow"), ("a", 2, "other"), ("b", 3, "other"), ("c", 2, "workflow"), ("d", 4, "other")];
    for (g, count, queue) in groups {
        jobs.extend((0..count).map(|i| grouped(&format!("{g}{i}-{queue}"), g, queue, i % 3)));
    }
    let workers: Vec<String> = (0..8).map(|i| format!("host-{i}")).collect();
    let queues = vec!["workflow".to_string(), "other".to_string()];
    let claim = |workers: Vec<String>, now: i64| ClaimFairRequest {
        queues: queues.clone(),
        serves: Vec::new(),
        workers,
        group_cap: Some(2),
        now,
    };
    let mut dumps = Vec::new();
    let mut taken = Vec::new();
    for (ns, batched) in [("single", false), ("batched", true)] {
        let s = h.store(ns).await.unwrap();
        let conc = flexiq_core::store::SetConcurrencyRequest { queue: "workflow".into(), max: Some(5) };
        s.set_concurrency(conc).await.unwrap();
        let limit = Some(flexiq_core::RateLimit { count: 5, per_ms: 1_000 });
        s.set_rate_limit(flexiq_core::store::SetRateLimitRequest { queue: "other".into(), limit })
            .await
            .unwrap();
        upsert(&s, jobs.clone(), NOW).await;
        // One job already running in group a, and a cursor to start after.
        let pre = s.claim_fair(claim(vec!["pre".into()], NOW + 1)).await.unwrap();
        assert_eq!(pre.iter().map(|c| c.job.group_key.as_deref()).collect::<Vec<_>>(), vec![Some("a")]);
        let got = if batched {
            s.claim_fair(claim(workers.clone(), NOW + 5)).await.unwrap()
        } else {
            let mut got = Vec::new();
            for w in &workers {
                got.extend(s.claim_fair(claim(vec![w.clone()], NOW + 5)).await.unwrap());
            }
            got
        };
        let got: Vec<(JobId, Option<String>, Option<String>)> =
            got.into_iter().map(|c| (c.job.id, c.job.worker_id, c.job.group_key)).collect();
        taken.push(got);
        dumps.push(dump(&c, &h, ns, "no id").await);
    }
    // Group a has one free slot, the others two (seven jobs, fewer than the workers); the
    // queue `workflow` four free slots and `other` five tokens, so a's second queue could
    // still give it a job were the batch not counting its own.
    let batch = &taken[1];
    assert_eq!(batch.len(), 7, "{batch:?}");
    for (k, (_, w, _)) in batch.iter().enumerate() {
        assert_eq!(w.as_deref(), Some(workers[k].as_str()), "the n-th job goes to the n-th worker");
    }
    for (g, free) in [("a", 1), ("b", 2), ("c", 2), ("d", 2)] {
        let n = batch.iter().filter(|(_, _, group)| group.as_deref() == Some(g)).count();
        assert!(n <= free, "group {g} past its cap: {batch:?}");
    }
    assert_eq!(taken[0], taken[1], "the same jobs for the same workers");
    assert_eq!(dumps[0], dumps[1], "the same keys, counters, leases, rate bucket and cursor");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn deleting_a_stage_leaves_nothing_of_its_job_behind() {
    let h = RedisHarness::new();
    let s = h.store("del").await.unwrap();
    let c = raw(&h).await;
    let opts = EnqueueOptions {
        priority: Some(1),
        backoff: Some(Backoff::NONE),
        metadata: Some(r#"{"k":1}"#.into()),
        ..Default::default()
    };
    let ids =
        upsert(&s, vec![stage("r", "a", "wf", opts), stage("r", "b", "wf", Default::default())], NOW).await;
    let first = fair(&s, None, NOW).await.unwrap();
    assert_eq!(first.job.id, ids[0]);
    ack(&s, &first, AckKind::Fail { error: "once".into(), retryable: true }, NOW + 1).await;
    let again = fair(&s, None, NOW + 2).await.unwrap();
    assert_eq!(again.job.id, ids[0]);
    let log =
        AppendLogRequest { id: ids[0].clone(), level: "info".into(), message: "m".into(), now: NOW + 2 };
    s.append_log(log).await.unwrap();
    s.publish_partial(PublishPartialRequest { id: ids[0].clone(), data: b"p".to_vec(), now: NOW + 2 })
        .await
        .unwrap();
    let del = DeleteStagesRequest { run_id: "r".into(), stage_ids: vec!["a".into()] };
    assert_eq!(s.delete_stages(del).await.unwrap(), 1);
    let d = dump(&c, &h, "del", ids[0].as_str()).await;
    for (key, items) in &d {
        // Metric rows and events are the namespace's history, kept like a dead letter.
        if key == ":metrics" || key == ":ev" {
            continue;
        }
        assert!(!key.contains("<id>"), "a key of the deleted job is left: {key}");
        assert!(!items.iter().any(|i| i.contains("<id>")), "{key} still names the deleted job: {items:?}");
    }
    assert_eq!(s.count_pending("workflow").await.unwrap(), 1);
    let st = s.stats(Some("workflow")).await.unwrap();
    assert_eq!((st.pending, st.running, st.total()), (1, 0, 1), "{st:?}");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn archiving_and_purging_take_a_job_out_of_its_run() {
    let h = RedisHarness::new();
    let s = h.store("arch").await.unwrap();
    let finish = |s: RedisStore, now: i64| async move {
        let c = fair(&s, None, now).await.unwrap();
        ack(&s, &c, AckKind::Complete { result: None }, now).await;
        c.job.id
    };
    let first = upsert(&s, vec![stage("r", "a", "wf", Default::default())], NOW).await.remove(0);
    assert_eq!(finish(s.clone(), NOW + 1).await, first);
    let archive = ArchiveTerminalRequest { cutoff_ms: NOW + 10, limit: 10, now: NOW + 10 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    assert!(s.jobs_of_run("r").await.unwrap().is_empty(), "an archived job left its run");
    let job = stage("r", "a", "wf", Default::default());
    let out = s.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now: NOW + 20 }).await.unwrap();
    let second = out[0].id.clone();
    assert_ne!(second, first, "the archived job freed its pair");
    assert_eq!(finish(s.clone(), NOW + 21).await, second);
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: NOW + 30 }).await.unwrap(), 1);
    assert!(s.jobs_of_run("r").await.unwrap().is_empty(), "a purged job left its run");
    let third = upsert(&s, vec![stage("r", "a", "wf", Default::default())], NOW + 40).await.remove(0);
    assert!(third != first && third != second, "the upsert inserted a new row");
    assert_eq!(s.jobs_of_run("r").await.unwrap().len(), 1);
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_replaced_stage_of_another_task_moves_its_task_indexes() {
    let h = RedisHarness::new();
    let s = h.store("task").await.unwrap();
    let id = upsert(&s, vec![stage("r", "a", "wf-1", Default::default())], NOW).await.remove(0);
    let c = fair(&s, None, NOW + 1).await.unwrap();
    ack(&s, &c, AckKind::Complete { result: None }, NOW + 2).await;
    assert_eq!(
        upsert(&s, vec![stage("r", "a", "wf-2", Default::default())], NOW + 3).await,
        vec![id.clone()]
    );
    let listed = |task: &str, status: Option<JobStatus>| {
        let filter = JobFilter { task: Some(task.into()), status, ..Default::default() };
        let s = s.clone();
        async move {
            let jobs = s.list_jobs(ListJobsRequest { filter, limit: 10, offset: 0 }).await.unwrap();
            jobs.into_iter().map(|j| j.id).collect::<Vec<_>>()
        }
    };
    assert!(listed("wf-1", None).await.is_empty());
    assert!(listed("wf-1", Some(JobStatus::Completed)).await.is_empty());
    assert!(listed("wf-1", Some(JobStatus::Pending)).await.is_empty());
    assert_eq!(listed("wf-2", None).await, vec![id.clone()]);
    assert_eq!(listed("wf-2", Some(JobStatus::Pending)).await, vec![id.clone()]);
    let job = s.get(&id).await.unwrap().unwrap();
    assert_eq!(
        (job.task.as_str(), job.status, job.attempt, job.finished_at),
        ("wf-2", JobStatus::Pending, 0, None)
    );
    h.cleanup_now().await;
}

#[tokio::test]
async fn an_enqueue_naming_a_taken_pair_writes_nothing() {
    let h = RedisHarness::new();
    let s = h.store("conflict").await.unwrap();
    let c = raw(&h).await;
    let id = upsert(&s, vec![stage("r", "a", "wf", Default::default())], NOW).await.remove(0);
    let before = dump(&c, &h, "conflict", id.as_str()).await;
    let other = NewJob::build("t", b"x".to_vec(), EnqueueOptions::default(), NOW).unwrap();
    let jobs = vec![other, stage("r", "a", "wf", Default::default())];
    let e = s.enqueue(EnqueueRequest { jobs, max_pending: None, now: NOW + 1 }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    for part in ["stage a", "run r", id.as_str()] {
        assert!(e.to_string().contains(part), "the conflict names {part}: {e}");
    }
    assert_eq!(dump(&c, &h, "conflict", id.as_str()).await, before, "the refused batch wrote nothing");
    let twice = vec![stage("r", "b", "wf", Default::default()), stage("r", "b", "wf", Default::default())];
    let e = s.enqueue(EnqueueRequest { jobs: twice, max_pending: None, now: NOW + 1 }).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "one pair twice in a batch: {e}");
    assert_eq!(dump(&c, &h, "conflict", id.as_str()).await, before);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_job_hash_without_a_version_reads_none() {
    let h = RedisHarness::new();
    let s = h.store("legacy").await.unwrap();
    let c = raw(&h).await;
    let opts = EnqueueOptions { workflow_version: Some("v1".into()), ..Default::default() };
    let id = upsert(&s, vec![stage("r", "a", "wf", opts)], NOW).await.remove(0);
    assert_eq!(s.get(&id).await.unwrap().unwrap().workflow_version.as_deref(), Some("v1"));
    let key = format!("{{{}:legacy}}:j:{id}", h.prefix);
    let _: i64 = c.hdel(&key, "wv").await.unwrap();
    assert_eq!(s.get(&id).await.unwrap().unwrap().workflow_version, None);
    let claimed = fair(&s, None, NOW).await.unwrap();
    assert_eq!(claimed.job.workflow_version, None);
    let _ = c.quit().await;
    h.cleanup_now().await;
}
