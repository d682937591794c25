//! The events stream as the Redis store writes it: the claim and plain-completion scripts write
//! one event per job each; the operator's removals, an absorbed enqueue and an obliterated page
//! write theirs; switched off, no script writes one (the stream is not even created); and a
//! blocked reader waits on a connection of its own, woken by another client's commit and by
//! the store closing; trimming by age reads the ids' server clock.

use std::time::{Duration, Instant};

use flexiq_conformance::fixtures::{at, complete, job, job_in, put, put_all, start, take};
use flexiq_core::dedup::DedupOptions;
use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::store::{
    Ack, AckKind, AckRequest, Admin, CleanRequest, DrainRequest, EnqueueRequest, Events, History, Inspect,
    JobStore, ObliterateRequest, PublishEventRequest, PurgeCompletedRequest, QueueControl, ReadEventsRequest,
    RemoveJobRequest, SetProgressRequest, TrimEventsRequest,
};
use flexiq_core::{EnqueueOptions, ErrorKind, JobId, JobStatus, NewJob, Store};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};
use serde_json::json;

use crate::harness::RedisHarness;
use crate::workflow::raw;

/// Every event of `s`, oldest first.
async fn all(s: &RedisStore) -> Vec<QueueEvent> {
    s.read_events(ReadEventsRequest { after: None, block_ms: 0, limit: 10_000 }).await.unwrap()
}

fn about<'a>(events: &'a [QueueEvent], id: &JobId) -> Vec<&'a QueueEvent> {
    events.iter().filter(|e| e.job_id.as_deref() == Some(id.as_str())).collect()
}

async fn cmd(c: &Client, name: &'static str, key: String) -> Value {
    c.custom(CustomCommand::new_static(name, ClusterHash::FirstKey, false), vec![key]).await.unwrap()
}

#[tokio::test]
async fn batched_claims_and_plain_completions_write_one_event_per_job_each() {
    let h = RedisHarness::new();
    let s = h.store("fast").await.unwrap();
    let ids = put_all(&s, (0..40).map(|n| job("t", &n.to_string())).collect(), at(0)).await;
    let claim =
        flexiq_core::store::ClaimRequest { queues: vec![], limit: 40, worker_id: "w9".into(), now: at(1) };
    let claimed = s.claim(claim).await.unwrap();
    assert_eq!(claimed.len(), 40);
    let acks: Vec<Ack> = claimed
        .iter()
        .enumerate()
        .map(|(k, c)| Ack {
            job_id: c.job.id.clone(),
            fence: c.fence,
            kind: AckKind::Complete { result: (k % 2 == 0).then(|| vec![b'r'; k]) },
        })
        .collect();
    s.ack(AckRequest { acks, now: at(2) }).await.unwrap();
    let events = all(&s).await;
    assert_eq!(events.len(), 120, "{events:#?}");
    for (k, c) in claimed.iter().enumerate() {
        let mine = about(&events, &c.job.id);
        let kinds: Vec<EventKind> = mine.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec![EventKind::Enqueued, EventKind::Active, EventKind::Completed], "job {k}");
        assert_eq!(
            (mine[1].attempt, mine[1].at_ms, &mine[1].data),
            (Some(1), at(1), &json!({"worker_id": "w9"}))
        );
        let size = if k % 2 == 0 { k } else { 0 };
        assert_eq!(
            (mine[2].attempt, mine[2].at_ms, &mine[2].data),
            (Some(1), at(2), &json!({"result_size": size}))
        );
        assert_eq!((mine[2].queue.as_deref(), mine[2].task.as_deref()), (Some("default"), Some("t")));
    }
    let claimed_ids: Vec<&JobId> = claimed.iter().map(|c| &c.job.id).collect();
    assert!(ids.iter().all(|id| claimed_ids.contains(&id)));
    h.cleanup_now().await;
}

#[tokio::test]
async fn switched_off_no_script_writes_an_event() {
    let h = RedisHarness::new();
    let s = h.store("quiet").await.unwrap();
    let c = raw(&h).await;
    s.set_events_enabled(false).await.unwrap();
    assert!(!s.events_enabled().await.unwrap());
    // The plain enqueue script, the general one (a unique key) and its absorbed duplicate.
    let plain = put(&s, job("t", "plain"), at(0)).await;
    let keyed = || {
        NewJob::build(
            "t",
            b"k".to_vec(),
            EnqueueOptions { unique_key: Some("k".into()), ..Default::default() },
            at(0),
        )
        .unwrap()
    };
    let kept = put(&s, keyed(), at(0)).await;
    assert_eq!(put(&s, keyed(), at(0)).await, kept);
    let claimed = take(&s, 2, at(1)).await;
    let progress =
        SetProgressRequest { id: claimed[0].job.id.clone(), fence: claimed[0].fence, progress: 5.0 };
    s.set_progress(progress).await.unwrap();
    complete(&s, &claimed[0], Some(b"r"), at(2)).await;
    let fail = AckKind::Fail { error: "x".into(), retryable: false };
    let acks = vec![Ack { job_id: claimed[1].job.id.clone(), fence: claimed[1].fence, kind: fail }];
    s.ack(AckRequest { acks, now: at(3) }).await.unwrap();
    s.pause("q").await.unwrap();
    s.resume("q").await.unwrap();
    s.remove_job(RemoveJobRequest { job_id: plain.clone(), remove_children: false, now: at(4) })
        .await
        .unwrap();
    let refused =
        PublishEventRequest { name: "x".into(), data: json!(1), job_id: None, queue: None, now: at(5) };
    let e = s.publish_event(refused).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains("quiet"), "the refusal names the namespace: {e}");
    let stream = format!("{{{}:quiet}}:ev", h.prefix);
    assert_eq!(cmd(&c, "EXISTS", stream.clone()).await.as_i64(), Some(0), "no script wrote an event");
    assert_eq!(s.last_event_id().await.unwrap(), None);
    s.set_events_enabled(true).await.unwrap();
    let loud = put(&s, job("t", "loud"), at(6)).await;
    let events = all(&s).await;
    assert_eq!(events.iter().map(|e| e.job_id.clone()).collect::<Vec<_>>(), vec![Some(loud.to_string())]);
    assert_eq!(cmd(&c, "TYPE", stream).await.as_string().as_deref(), Some("stream"));
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn operator_removals_and_absorbed_enqueues_write_their_events() {
    let h = RedisHarness::new();
    let s = h.store("ops").await.unwrap();
    let done = start(&s, job_in("a", "t"), at(0)).await;
    complete(&s, &done, None, at(1)).await;
    let cleaned = s.clean(CleanRequest {
        queue: "a".into(),
        status: JobStatus::Completed,
        grace_ms: 0,
        limit: 10,
        now: at(2),
    });
    assert_eq!(cleaned.await.unwrap(), vec![done.job.id.clone()]);
    let drained = put(&s, job_in("b", "t"), at(3)).await;
    assert_eq!(
        s.drain(DrainRequest { queue: "b".into(), include_delayed: true, now: at(4) }).await.unwrap(),
        1
    );
    let purged = start(&s, job_in("c", "t"), at(5)).await;
    complete(&s, &purged, None, at(6)).await;
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: at(7) }).await.unwrap(), 1);
    put_all(&s, (0..3).map(|_| job_in("d", "t")).collect(), at(8)).await;
    let page = ObliterateRequest { queue: "d".into(), force: false, count: 2, now: at(9) };
    assert_eq!(s.obliterate(page.clone()).await.unwrap(), 1);
    assert_eq!(s.obliterate(page).await.unwrap(), 0);
    let dedup = || {
        let opts = EnqueueOptions {
            dedup: Some(DedupOptions { id: "dk".into(), ..Default::default() }),
            ..Default::default()
        };
        NewJob::build("t", b"d".to_vec(), opts, at(10)).unwrap()
    };
    let batch = s
        .enqueue(EnqueueRequest { jobs: vec![dedup(), dedup()], max_pending: None, now: at(10) })
        .await
        .unwrap();
    assert_eq!((batch[1].created, &batch[1].id), (false, &batch[0].id));

    let events = all(&s).await;
    let kinds = |id: &JobId| about(&events, id).iter().map(|e| e.kind.as_str()).collect::<Vec<_>>();
    assert_eq!(kinds(&done.job.id), vec!["enqueued", "active", "completed", "removed"]);
    assert_eq!(kinds(&drained), vec!["enqueued", "removed"]);
    assert_eq!(kinds(&purged.job.id), vec!["enqueued", "active", "completed", "removed"]);
    let removed = about(&events, &drained)[1];
    assert_eq!((removed.queue.as_deref(), removed.at_ms, &removed.data), (Some("b"), at(4), &json!({})));
    let pages: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::Removed && e.job_id.is_none())
        .map(|e| (e.queue.as_deref(), e.data.clone()))
        .collect();
    let want = vec![(Some("d"), json!({"count": 2})), (Some("d"), json!({"count": 1}))];
    assert_eq!(pages, want, "one event per obliterate page, counting its jobs");
    assert_eq!(kinds(&batch[0].id), vec!["enqueued", "deduplicated"]);
    assert_eq!(about(&events, &batch[0].id)[1].data, json!({"key": "dk"}));
    h.cleanup_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_reader_holds_its_own_connection_and_wakes_on_another_clients_commit() {
    let h = RedisHarness::new();
    let reader = h.store("blocked").await.unwrap();
    // A second connect: its commits reach the reader only through the server.
    let writer = h.store("blocked").await.unwrap();
    put(&reader, job("t", "first"), at(0)).await;
    let tail = reader.last_event_id().await.unwrap();
    let started = Instant::now();
    let blocked = tokio::spawn({
        let reader = reader.clone();
        async move { reader.read_events(ReadEventsRequest { after: tail, block_ms: 20_000, limit: 10 }).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!blocked.is_finished(), "the read blocks while nothing is new");
    // The reader's own handle still answers at once: the block holds no connection of its pool.
    let quick = Instant::now();
    for _ in 0..20 {
        assert_eq!(reader.count_pending("default").await.unwrap(), 1);
    }
    assert!(quick.elapsed() < Duration::from_secs(2), "the pool waited: {:?}", quick.elapsed());
    let id = put(&writer, job("t", "second"), at(1)).await;
    let got = blocked.await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "woke after {:?}", started.elapsed());
    assert_eq!(
        got.iter().map(|e| (e.kind, e.job_id.clone())).collect::<Vec<_>>(),
        vec![(EventKind::Enqueued, Some(id.to_string()))]
    );
    h.cleanup_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_store_wakes_a_blocked_reader_with_closed() {
    let h = RedisHarness::new();
    let s = h.store("closing").await.unwrap();
    let blocked = tokio::spawn({
        let s = s.clone();
        async move { s.read_events(ReadEventsRequest { after: None, block_ms: 60_000, limit: 10 }).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    s.close().await.unwrap();
    let e = blocked.await.unwrap().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "woke after {:?}", started.elapsed());
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    assert!(e.to_string().contains("closing"), "{e}");
    h.cleanup_now().await;
}

#[tokio::test]
async fn trimming_by_age_reads_the_server_clock_in_the_ids() {
    let h = RedisHarness::new();
    let s = h.store("aged").await.unwrap();
    put_all(&s, (0..5).map(|n| job("t", &n.to_string())).collect(), at(0)).await;
    let server_now = s.server_now_ms().await.unwrap();
    let keep_all = TrimEventsRequest { max_len: 100, max_age_ms: Some(60_000), now: server_now };
    assert_eq!(s.trim_events(keep_all).await.unwrap(), 0, "a minute old at most: all kept");
    assert_eq!(all(&s).await.len(), 5);
    let later = TrimEventsRequest { max_len: 100, max_age_ms: Some(1_000), now: server_now + 60_000 };
    assert_eq!(s.trim_events(later).await.unwrap(), 5, "a minute later, past a second old: all go");
    assert_eq!(s.last_event_id().await.unwrap(), None);
    h.cleanup_now().await;
}
