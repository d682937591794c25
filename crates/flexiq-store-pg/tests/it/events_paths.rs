//! Which write paths write which events: batched claims (free and limited queues) and acks,
//! the enqueue paths that absorb a job, operator removals against archiving and retention, and
//! a namespace switched off on every path.

use std::collections::HashMap;

use flexiq_core::dedup::DedupOptions;
use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::store::{
    Ack, AckKind, AckRequest, Admin, ArchiveTerminalRequest, CleanRequest, DrainRequest, EnqueueRequest,
    Events, JobStore, Maintenance, ObliterateRequest, PublishEventRequest, PurgeCompletedRequest,
    QueueControl, RemoveJobRequest, RetentionRequest, SetRateLimitRequest,
};
use flexiq_core::{
    EnqueueOptions, ErrorKind, JobId, JobStatus, NewJob, RateLimit, RetentionTable, RetentionWindows,
};
use flexiq_store_pg::PgStore;

use crate::common::{admin, claim, completes, drop_schema, enqueue_n, fresh_schema, now_ms, open};
use crate::events_horizon::read_n;

fn job(queue: &str, opts: EnqueueOptions) -> NewJob {
    let opts = EnqueueOptions { queue: Some(queue.to_string()), ..opts };
    NewJob::build("t", b"{}".to_vec(), opts, now_ms()).unwrap()
}

async fn put(s: &PgStore, jobs: Vec<NewJob>) -> Vec<JobId> {
    let got = s.enqueue(EnqueueRequest { jobs, max_pending: None, now: now_ms() }).await.unwrap();
    got.into_iter().map(|e| e.id).collect()
}

/// Every event of `s`'s namespace so far: `n` of them, waited for.
async fn all(s: &PgStore, n: usize) -> Vec<QueueEvent> {
    let got = read_n(s, None, n).await;
    assert_eq!(got.len(), n, "{got:#?}");
    got
}

fn kinds_by_job(events: &[QueueEvent]) -> HashMap<String, Vec<EventKind>> {
    let mut by: HashMap<String, Vec<EventKind>> = HashMap::new();
    for e in events {
        if let Some(j) = &e.job_id {
            by.entry(j.clone()).or_default().push(e.kind);
        }
    }
    by
}

async fn stored_events(schema: &str, ns: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM \"{schema}\".events WHERE ns = $1");
    admin().await.query_one(&sql, &[&ns]).await.unwrap().get(0)
}

#[tokio::test]
async fn batched_claims_and_acks_write_one_active_and_one_completed_event_per_job() {
    let schema = fresh_schema("evbatch");
    let s = open(&schema, 4).await;
    let now = now_ms();
    // 300 jobs go through COPY, 50 through one INSERT; the limited queue claims under its lock.
    enqueue_n(&s, "free", 300, now).await;
    enqueue_n(&s, "limited", 50, now).await;
    let limit =
        SetRateLimitRequest { queue: "limited".into(), limit: Some(RateLimit::parse("1000/s").unwrap()) };
    s.set_rate_limit(limit).await.unwrap();
    let mut claimed = Vec::new();
    for _ in 0..3 {
        claimed.extend(claim(&s, "free", 100, "w", now).await.unwrap());
    }
    claimed.extend(claim(&s, "limited", 50, "w", now).await.unwrap());
    assert_eq!(claimed.len(), 350);
    for batch in claimed.chunks(100) {
        s.ack(AckRequest { acks: completes(batch), now }).await.unwrap();
    }
    let events = all(&s, 3 * 350).await;
    let by = kinds_by_job(&events);
    assert_eq!(by.len(), 350);
    for (job, kinds) in &by {
        assert_eq!(kinds, &[EventKind::Enqueued, EventKind::Active, EventKind::Completed], "job {job}");
    }
    assert!(events.iter().filter(|e| e.kind == EventKind::Active).all(|e| e.data["worker_id"] == "w"));
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn an_absorbed_enqueue_reports_the_kept_job_on_every_path() {
    let schema = fresh_schema("evdedup");
    let s = open(&schema, 4).await;
    let keyed = |key: &str| EnqueueOptions {
        dedup: Some(DedupOptions { id: key.into(), ..Default::default() }),
        ..Default::default()
    };
    // One job with only a dedup key takes the one-flight path; a batch takes the general one.
    let kept = put(&s, vec![job("q", keyed("k1"))]).await.remove(0);
    assert_eq!(put(&s, vec![job("q", keyed("k1"))]).await, vec![kept.clone()]);
    let batch = put(&s, vec![job("q", keyed("k2")), job("q", keyed("k2"))]).await;
    assert_eq!(batch[0], batch[1]);
    let events = all(&s, 4).await;
    let shape: Vec<_> = events.iter().map(|e| (e.kind, e.job_id.clone().unwrap(), e.data.clone())).collect();
    let key = |k: &str| serde_json::json!({ "key": k });
    assert_eq!(shape[1], (EventKind::Deduplicated, kept.to_string(), key("k1")));
    assert_eq!(shape[3], (EventKind::Deduplicated, batch[0].to_string(), key("k2")));
    assert_eq!((shape[0].0, shape[2].0), (EventKind::Enqueued, EventKind::Enqueued));
    assert!(events.iter().all(|e| e.queue.as_deref() == Some("q") && e.task.as_deref() == Some("t")));
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn operator_removals_write_removed_events_and_archiving_writes_none() {
    let schema = fresh_schema("evremove");
    let s = open(&schema, 4).await;
    let now = now_ms();
    let child = put(&s, vec![job("r", EnqueueOptions::default())]).await.remove(0);
    let opts = EnqueueOptions { depends_on: vec![child.to_string()], ..Default::default() };
    let parent = put(&s, vec![job("r", opts)]).await.remove(0);
    let req = RemoveJobRequest { job_id: parent.clone(), remove_children: true, now };
    assert_eq!(s.remove_job(req).await.unwrap().jobs.len(), 2);
    enqueue_n(&s, "d", 3, now).await;
    assert_eq!(s.drain(DrainRequest { queue: "d".into(), include_delayed: true, now }).await.unwrap(), 3);
    enqueue_n(&s, "c", 3, now).await;
    let done = claim(&s, "c", 3, "w", now).await.unwrap();
    s.ack(AckRequest { acks: completes(&done), now }).await.unwrap();
    let clean =
        CleanRequest { queue: "c".into(), status: JobStatus::Completed, grace_ms: 0, limit: 1, now: now + 1 };
    assert_eq!(s.clean(clean).await.unwrap().len(), 1);
    let archive = ArchiveTerminalRequest { cutoff_ms: now + 1, limit: 1, now: now + 1 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: now + 1 }).await.unwrap(), 1);
    let windows = RetentionWindows(RetentionTable::ALL.iter().map(|t| (*t, Some(0))).collect());
    s.retention_purge(RetentionRequest { windows, now: now + 10 }).await.unwrap();
    enqueue_n(&s, "o", 4, now).await;
    let obliterate = ObliterateRequest { queue: "o".into(), force: false, count: 100, now };
    assert_eq!(s.obliterate(obliterate).await.unwrap(), 0);

    // 2 + 3 + 3 + 4 enqueued, 3 active, 3 completed, 2 + 3 + 1 + 1 removed, 1 queue event.
    let events = all(&s, 12 + 6 + 7 + 1).await;
    let removed: Vec<_> = events.iter().filter(|e| e.kind == EventKind::Removed).collect();
    let per_job: Vec<_> = removed.iter().filter(|e| e.job_id.is_some()).collect();
    assert_eq!(per_job.len(), 7);
    assert!(per_job.iter().all(|e| e.queue.is_some() && e.task.as_deref() == Some("t")));
    let by = kinds_by_job(&events);
    assert_eq!(by[&parent.to_string()], vec![EventKind::Enqueued, EventKind::Removed]);
    assert_eq!(by[&child.to_string()], vec![EventKind::Enqueued, EventKind::Removed]);
    let queue_level: Vec<_> = removed.iter().filter(|e| e.job_id.is_none()).collect();
    assert_eq!(queue_level.len(), 1);
    assert_eq!(
        (queue_level[0].queue.as_deref(), &queue_level[0].data),
        (Some("o"), &serde_json::json!({"count": 4}))
    );
    assert!(by.values().all(|k| k.iter().filter(|k| **k == EventKind::Removed).count() <= 1));
    assert_eq!(
        stored_events(&schema, "default").await,
        events.len() as i64,
        "archiving and retention wrote none"
    );
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn a_namespace_switched_off_writes_no_event_on_any_path() {
    let schema = fresh_schema("evoff");
    let loud = open(&schema, 4).await;
    let s = loud.with_namespace("quiet").unwrap();
    s.set_events_enabled(false).await.unwrap();
    assert!(!s.events_enabled().await.unwrap() && loud.events_enabled().await.unwrap());
    let now = now_ms();
    enqueue_n(&s, "q", 300, now).await;
    let unique = || EnqueueOptions { unique_key: Some("u".into()), ..Default::default() };
    put(&s, vec![job("q", unique()), job("q", unique())]).await;
    let keyed = || EnqueueOptions {
        dedup: Some(DedupOptions { id: "k".into(), ..Default::default() }),
        ..Default::default()
    };
    put(&s, vec![job("q", keyed())]).await;
    put(&s, vec![job("q", keyed())]).await;
    let got = claim(&s, "q", 10, "w", now).await.unwrap();
    s.ack(AckRequest { acks: completes(&got[..5]), now }).await.unwrap();
    let fail = |c: &flexiq_core::ClaimedJob| Ack {
        job_id: c.job.id.clone(),
        fence: c.fence,
        kind: AckKind::Fail { error: "boom".into(), retryable: true },
    };
    s.ack(AckRequest { acks: got[5..].iter().map(fail).collect(), now }).await.unwrap();
    s.pause("q").await.unwrap();
    s.resume("q").await.unwrap();
    s.remove_job(RemoveJobRequest { job_id: got[0].job.id.clone(), remove_children: false, now })
        .await
        .unwrap();
    let clean =
        CleanRequest { queue: "q".into(), status: JobStatus::Completed, grace_ms: 0, limit: 1, now: now + 1 };
    s.clean(clean).await.unwrap();
    s.purge_completed(PurgeCompletedRequest { cutoff_ms: now + 1 }).await.unwrap();
    s.drain(DrainRequest { queue: "q".into(), include_delayed: false, now }).await.unwrap();
    s.obliterate(ObliterateRequest { queue: "q".into(), force: true, count: 1_000, now }).await.unwrap();
    let publish = PublishEventRequest {
        name: "note".into(),
        data: serde_json::json!({}),
        job_id: None,
        queue: None,
        now,
    };
    let refused = s.publish_event(publish.clone()).await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Conflict);
    assert!(refused.to_string().contains("quiet"), "{refused}");
    assert_eq!(stored_events(&schema, "quiet").await, 0);
    assert_eq!(s.last_event_id().await.unwrap(), None);

    // The other namespace writes as usual, and switching back on writes again.
    loud.publish_event(publish.clone()).await.unwrap();
    assert_eq!(stored_events(&schema, "default").await, 1);
    s.set_events_enabled(true).await.unwrap();
    s.publish_event(publish).await.unwrap();
    assert_eq!(stored_events(&schema, "quiet").await, 1);
    flexiq_core::Store::close(&loud).await.unwrap();
    drop_schema(&schema).await;
}
