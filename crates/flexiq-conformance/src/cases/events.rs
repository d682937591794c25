//! The events stream: each state change reported once, in order, in the same commit as the
//! change; reads that page, resume (also on a new handle), block until another handle commits
//! and return by their timeout; trimming; custom events; switching events off; bad input.

use std::time::{Duration, Instant};

use flexiq_core::events::{EventKind, QueueEvent, MAX_EVENTS_BLOCK_MS, MAX_EVENT_DATA_BYTES};
use flexiq_core::store::{
    AckKind, CancelRequest, PublishEventRequest, ReadEventsRequest, ReleaseStaleRequest, RemoveJobRequest,
    RequeueRequest, SetProgressRequest, TrimEventsRequest,
};
use flexiq_core::{ErrorKind, JobId, Store};
use serde_json::json;

use crate::fixtures::{
    ack, at, complete, fail, finish, fragile, job, job_after, job_in, now, open, put, put_all, start, take,
    unique,
};
use crate::Harness;

const PROMPT: Duration = Duration::from_secs(2);

/// Every event of the namespace, oldest first, read in pages of `page`.
async fn all(s: &dyn Store, page: u32) -> Vec<QueueEvent> {
    let mut out: Vec<QueueEvent> = Vec::new();
    loop {
        let after = out.last().map(|e| e.id.clone());
        let got = s.read_events(ReadEventsRequest { after, block_ms: 0, limit: page }).await.unwrap();
        if got.is_empty() {
            return out;
        }
        assert!(got.len() <= page as usize, "a read returned {} events over its limit {page}", got.len());
        out.extend(got);
    }
}

/// The kinds of the events about `id`, in order.
fn kinds_of(events: &[QueueEvent], id: &JobId) -> Vec<&'static str> {
    let id = id.to_string();
    events.iter().filter(|e| e.job_id.as_deref() == Some(id.as_str())).map(|e| e.kind.as_str()).collect()
}

fn one<'a>(events: &'a [QueueEvent], id: &JobId, kind: EventKind) -> &'a QueueEvent {
    let id = id.to_string();
    let found: Vec<_> =
        events.iter().filter(|e| e.job_id.as_deref() == Some(id.as_str()) && e.kind == kind).collect();
    assert_eq!(found.len(), 1, "one {kind} event for {id}: {events:#?}");
    found[0]
}

/// A job enqueued, failed once, retried and completed reports enqueued, active, retried,
/// active, completed, each with its queue, task, attempt and the data its kind carries.
pub async fn events_follow_a_job_through_its_life(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job_in("mail", "send"), now()).await;
    fail(&*s, &c, "smtp down", true, at(10)).await;
    let again = take(&*s, 1, at(600_000)).await.remove(0);
    complete(&*s, &again, Some(b"abc"), at(600_010)).await;
    let events = all(&*s, 100).await;
    let id = &c.job.id;
    assert_eq!(kinds_of(&events, id), vec!["enqueued", "active", "retried", "active", "completed"]);
    for e in events.iter().filter(|e| e.job_id.as_deref() == Some(id.as_str())) {
        assert_eq!((e.queue.as_deref(), e.task.as_deref()), (Some("mail"), Some("send")), "{e:?}");
        assert_eq!(e.name, e.kind.as_str());
        assert!(e.at_ms > 0);
    }
    let enq = one(&events, id, EventKind::Enqueued);
    assert_eq!(enq.data["status"], json!("pending"));
    assert!(enq.data["run_at"].is_i64(), "{enq:?}");
    let retried = one(&events, id, EventKind::Retried);
    assert_eq!((retried.attempt, &retried.data["error"]), (Some(1), &json!("smtp down")));
    assert!(retried.data["run_at"].as_i64().unwrap() > at(10), "{retried:?}");
    let done = one(&events, id, EventKind::Completed);
    assert_eq!((done.attempt, &done.data["result_size"]), (Some(2), &json!(3)));
    let active: Vec<_> = events.iter().filter(|e| e.kind == EventKind::Active).collect();
    assert_eq!(active.iter().map(|e| e.attempt).collect::<Vec<_>>(), vec![Some(1), Some(2)]);
    assert_eq!(active[0].data["worker_id"], json!("w1"));
    let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(unique, ids, "event ids are distinct");
}

/// Failing for good, dying into the dead letters, cancelling, requeueing, suspending,
/// stalling and releasing a dependent each have their own kind.
pub async fn events_name_each_way_a_job_moves(h: &dyn Harness) {
    let s = open(h, "default").await;
    let hard = start(&*s, job("a", ""), now()).await;
    fail(&*s, &hard, "bad input", false, at(1)).await;
    let doomed = start(&*s, fragile("b", ""), at(2)).await;
    fail(&*s, &doomed, "gave up", true, at(3)).await;
    let idle = put(&*s, job("c", ""), at(4)).await;
    assert!(s.cancel(CancelRequest { id: idle.clone(), now: at(5) }).await.unwrap());
    let back = start(&*s, job("d", ""), at(6)).await;
    assert!(s.requeue(RequeueRequest { id: back.job.id.clone(), now: at(7) }).await.unwrap());
    let parked = take(&*s, 1, at(8)).await.remove(0);
    assert_eq!(parked.job.id, back.job.id);
    ack(&*s, &parked, AckKind::Suspend { until: at(60_000) }, at(9)).await;
    let dep = put(&*s, job("e", ""), at(10)).await;
    let after = put(&*s, job_after("f", &[&dep]), at(11)).await;
    let first = take(&*s, 1, at(12)).await.remove(0);
    assert_eq!(first.job.id, dep);
    complete(&*s, &first, None, at(13)).await;
    let lapsed = take(&*s, 1, at(14)).await.remove(0);
    assert_eq!(lapsed.job.id, after);
    crate::fixtures::report_started(&*s, &lapsed, at(14)).await;
    let stale =
        s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at(50_000) }).await.unwrap();
    assert_eq!(stale, vec![after.clone()]);

    let events = all(&*s, 7).await;
    assert_eq!(kinds_of(&events, &hard.job.id), vec!["enqueued", "active", "failed"]);
    assert_eq!(one(&events, &hard.job.id, EventKind::Failed).data["error"], json!("bad input"));
    assert_eq!(kinds_of(&events, &doomed.job.id), vec!["enqueued", "active", "dead"]);
    assert_eq!(one(&events, &doomed.job.id, EventKind::Dead).data["error"], json!("gave up"));
    assert_eq!(kinds_of(&events, &idle), vec!["enqueued", "cancelled"]);
    assert_eq!(
        kinds_of(&events, &back.job.id),
        vec!["enqueued", "active", "requeued", "active", "suspended"]
    );
    let suspended = one(&events, &back.job.id, EventKind::Suspended);
    assert_eq!(suspended.data["run_at"], json!(at(60_000)));
    assert_eq!(kinds_of(&events, &dep), vec!["enqueued", "active", "completed"]);
    assert_eq!(kinds_of(&events, &after), vec!["enqueued", "released", "active", "stalled"]);
    assert_eq!(one(&events, &after, EventKind::Enqueued).data["status"], json!("waiting"));
    assert!(one(&events, &after, EventKind::Stalled).data["error"].is_string());
}

/// Progress, pausing and resuming a queue, an enqueue absorbed by a unique key and removing a
/// job are reported too; queue events carry the queue and no job.
pub async fn events_report_progress_controls_duplicates_and_removal(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, unique("t", "k1"), now()).await;
    let dup = s
        .enqueue(flexiq_core::store::EnqueueRequest {
            jobs: vec![unique("t", "k1")],
            max_pending: None,
            now: at(1),
        })
        .await
        .unwrap();
    assert_eq!((dup[0].created, &dup[0].id), (false, &c.job.id));
    let progress = SetProgressRequest { id: c.job.id.clone(), fence: c.fence, progress: 42.5 };
    s.set_progress(progress).await.unwrap();
    s.pause("mail").await.unwrap();
    s.resume("mail").await.unwrap();
    let gone = put(&*s, job("u", ""), at(2)).await;
    let removed = s.remove_job(RemoveJobRequest { job_id: gone.clone(), remove_children: false, now: at(3) });
    removed.await.unwrap();

    let events = all(&*s, 100).await;
    assert_eq!(kinds_of(&events, &c.job.id), vec!["enqueued", "active", "deduplicated", "progress"]);
    assert_eq!(one(&events, &c.job.id, EventKind::Deduplicated).data["key"], json!("k1"));
    assert_eq!(one(&events, &c.job.id, EventKind::Progress).data["progress"], json!(42.5));
    let queue_events: Vec<_> = events.iter().filter(|e| e.job_id.is_none()).collect();
    let named: Vec<_> = queue_events.iter().map(|e| (e.kind, e.queue.as_deref())).collect();
    assert_eq!(named, vec![(EventKind::Paused, Some("mail")), (EventKind::Resumed, Some("mail"))]);
    assert_eq!(kinds_of(&events, &gone), vec!["enqueued", "removed"]);
}

/// A batch enqueued, claimed and completed in single calls reports one enqueued, one active
/// and one completed event per job, each job's in that order.
pub async fn events_report_every_job_of_a_batch_once(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = put_all(&*s, (0..30).map(|n| job("t", &n.to_string())).collect(), now()).await;
    let claimed = take(&*s, 30, at(1)).await;
    assert_eq!(claimed.len(), 30);
    let acks = claimed
        .iter()
        .map(|c| flexiq_core::store::Ack {
            job_id: c.job.id.clone(),
            fence: c.fence,
            kind: AckKind::Complete { result: None },
        })
        .collect();
    s.ack(flexiq_core::store::AckRequest { acks, now: at(2) }).await.unwrap();
    let events = all(&*s, 1_000).await;
    assert_eq!(events.len(), 90, "{events:#?}");
    for id in &ids {
        assert_eq!(kinds_of(&events, id), vec!["enqueued", "active", "completed"], "job {id}");
    }
}

/// Reading in pages from each page's last id returns every event once, in order, then
/// nothing; the newest id is `last_event_id`.
pub async fn read_events_pages_resume_without_loss_or_repeat(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(s.last_event_id().await.unwrap(), None);
    put_all(&*s, (0..11).map(|n| job("t", &n.to_string())).collect(), now()).await;
    let whole = all(&*s, 100).await;
    assert_eq!(whole.len(), 11);
    let paged = all(&*s, 4).await;
    assert_eq!(paged, whole);
    let last = whole.last().unwrap().id.clone();
    assert_eq!(s.last_event_id().await.unwrap(), Some(last.clone()));
    let read = ReadEventsRequest { after: Some(last), block_ms: 0, limit: 10 };
    assert!(s.read_events(read).await.unwrap().is_empty());
}

/// A reader on a new handle resumes after a saved id with exactly the events after it.
pub async fn read_events_resume_on_a_reopened_store(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, (0..6).map(|n| job("t", &n.to_string())).collect(), now()).await;
    let first = s.read_events(ReadEventsRequest { after: None, block_ms: 0, limit: 3 }).await.unwrap();
    let saved = first.last().unwrap().id.clone();
    s.close().await.unwrap();
    let reopened = open(h, "default").await;
    put(&*reopened, job("t", "late"), at(1)).await;
    let rest = reopened
        .read_events(ReadEventsRequest { after: Some(saved), block_ms: 0, limit: 100 })
        .await
        .unwrap();
    assert_eq!(rest.len(), 4, "{rest:#?}");
    let seen: Vec<_> = first.iter().chain(rest.iter()).map(|e| e.id.clone()).collect();
    let whole: Vec<_> = all(&*reopened, 100).await.into_iter().map(|e| e.id).collect();
    assert_eq!(seen, whole);
}

/// A reader blocked on an empty tail wakes when another handle commits, long before its
/// timeout, with the new event.
pub async fn read_events_blocked_reader_wakes_on_another_handles_commit(h: &dyn Harness) {
    let reader = open(h, "default").await;
    let writer = open(h, "default").await;
    put(&*writer, job("t", "before"), now()).await;
    let tail = reader.last_event_id().await.unwrap();
    let started = Instant::now();
    let (read, id) = tokio::join!(
        reader.read_events(ReadEventsRequest { after: tail, block_ms: 20_000, limit: 10 }),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            put(&*writer, job("t", "after"), at(1)).await
        }
    );
    let read = read.unwrap();
    assert!(started.elapsed() < PROMPT, "woke after {:?}", started.elapsed());
    assert_eq!(read.len(), 1, "{read:#?}");
    assert_eq!((read[0].kind, read[0].job_id.clone()), (EventKind::Enqueued, Some(id.to_string())));
}

/// With nothing new, a blocking read returns empty by its timeout.
pub async fn read_events_return_empty_by_their_timeout(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job("t", ""), now()).await;
    let tail = s.last_event_id().await.unwrap();
    let started = Instant::now();
    let read = ReadEventsRequest { after: tail, block_ms: 200, limit: 10 };
    let got = tokio::time::timeout(Duration::from_secs(10), s.read_events(read)).await.expect("returned");
    assert!(got.unwrap().is_empty());
    assert!(started.elapsed() >= Duration::from_millis(150), "returned after {:?}", started.elapsed());
}

/// Trimming keeps the newest events; a reader whose id was trimmed away resumes at the oldest
/// one kept.
pub async fn trim_events_keeps_the_newest(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, (0..20).map(|n| job("t", &n.to_string())).collect(), now()).await;
    let before = all(&*s, 100).await;
    let removed =
        s.trim_events(TrimEventsRequest { max_len: 5, max_age_ms: None, now: at(1) }).await.unwrap();
    assert_eq!(removed, 15);
    let after = all(&*s, 100).await;
    assert_eq!(after, before[15..].to_vec());
    let from_trimmed = ReadEventsRequest { after: Some(before[2].id.clone()), block_ms: 0, limit: 100 };
    assert_eq!(s.read_events(from_trimmed).await.unwrap(), after);
    let again = s.trim_events(TrimEventsRequest { max_len: 5, max_age_ms: None, now: at(2) }).await.unwrap();
    assert_eq!(again, 0);
}

/// A custom event reads back with its name, data, job and queue; a built-in name, an empty
/// name or oversized data is refused and writes nothing.
pub async fn publish_event_reads_back_and_refuses_bad_input(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), now()).await;
    let req = |name: &str, data: serde_json::Value| PublishEventRequest {
        name: name.into(),
        data,
        job_id: Some(id.clone()),
        queue: Some("default".into()),
        now: at(5),
    };
    let published = s.publish_event(req("invoice.sent", json!({"n": 1, "to": "ops"}))).await.unwrap();
    assert_eq!(s.last_event_id().await.unwrap(), Some(published.clone()));
    let big = json!("x".repeat(MAX_EVENT_DATA_BYTES));
    for (name, data) in [("completed", json!(1)), ("", json!(1)), ("custom", json!(1)), ("big", big)] {
        let e = s.publish_event(req(name, data)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name:?}: {e}");
    }
    assert_eq!(s.last_event_id().await.unwrap(), Some(published.clone()), "nothing written");
    let events = all(&*s, 10).await;
    let custom = events.last().unwrap();
    assert_eq!((custom.kind, custom.name.as_str()), (EventKind::Custom, "invoice.sent"));
    assert_eq!(custom.data, json!({"n": 1, "to": "ops"}));
    assert_eq!((custom.job_id.clone(), custom.queue.as_deref()), (Some(id.to_string()), Some("default")));
    assert_eq!(custom.id, published);
}

/// Switched off, a namespace writes no events and refuses custom ones; switched back on, it
/// writes them again. Reading still works throughout.
pub async fn events_switched_off_write_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s.events_enabled().await.unwrap());
    finish(&*s, job("t", ""), now()).await;
    let tail = s.last_event_id().await.unwrap();
    s.set_events_enabled(false).await.unwrap();
    assert!(!open(h, "default").await.events_enabled().await.unwrap(), "the switch is stored");
    let c = start(&*s, job("t", "quiet"), at(1)).await;
    complete(&*s, &c, None, at(2)).await;
    s.pause("q").await.unwrap();
    let refused =
        PublishEventRequest { name: "x".into(), data: json!(1), job_id: None, queue: None, now: at(3) };
    assert_eq!(s.publish_event(refused).await.unwrap_err().kind(), ErrorKind::Conflict);
    assert_eq!(s.last_event_id().await.unwrap(), tail);
    s.set_events_enabled(true).await.unwrap();
    assert!(s.events_enabled().await.unwrap());
    let loud = put(&*s, job("t", "loud"), at(4)).await;
    let read = s.read_events(ReadEventsRequest { after: tail, block_ms: 0, limit: 10 }).await.unwrap();
    assert_eq!(read.len(), 1, "{read:#?}");
    assert_eq!(read[0].job_id, Some(loud.to_string()));
}

/// Garbage ids, a zero or oversized limit and a too-long wait are `InvalidArgument`.
pub async fn read_events_refuse_bad_input(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job("t", ""), now()).await;
    let read = |after: Option<&str>, block_ms: u64, limit: u32| ReadEventsRequest {
        after: after.map(str::to_string),
        block_ms,
        limit,
    };
    for bad in ["garbage", "", "-1", "1-2-3-4", "ünïcode", "99999999999999999999999999999999999"] {
        let e = s.read_events(read(Some(bad), 0, 10)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad:?}: {e}");
    }
    for (block_ms, limit) in [(0, 0), (0, 1_000_000), (MAX_EVENTS_BLOCK_MS + 1, 10)] {
        let e = s.read_events(read(None, block_ms, limit)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "block {block_ms} limit {limit}: {e}");
    }
}

/// Each namespace has its own stream.
pub async fn events_stay_in_their_namespace(h: &dyn Harness) {
    let a = open(h, "alpha").await;
    let b = open(h, "beta").await;
    let id = put(&*a, job("t", ""), now()).await;
    assert_eq!(b.last_event_id().await.unwrap(), None);
    assert!(all(&*b, 10).await.is_empty());
    assert_eq!(kinds_of(&all(&*a, 10).await, &id), vec!["enqueued"]);
    let c = start(&*b, job("t", ""), at(1)).await;
    assert_eq!(kinds_of(&all(&*a, 10).await, &c.job.id), Vec::<&str>::new());
}

/// A job enqueued after one of its dependencies already failed reports `enqueued` (status
/// waiting, as the waiting job it stands for) and then `cancelled` naming the dependency, so a
/// reader waiting for a terminal event sees one; a batch's job behind it the same.
pub async fn events_report_a_job_ended_at_its_enqueue(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, fragile("t", "p"), now()).await;
    fail(&*s, &c, "boom", false, at(1)).await;
    let dep = c.job.id.clone();
    let cancelled = put(&*s, job_after("t", &[&dep]), at(2)).await;
    let first = job_after("t", &[&dep]);
    let behind = job_after("t", &[&first.id]);
    let batch = put_all(&*s, vec![first, behind], at(3)).await;
    let events = all(&*s, 100).await;
    for id in [&cancelled, &batch[0], &batch[1]] {
        assert_eq!(kinds_of(&events, id), vec!["enqueued", "cancelled"], "events of {id}");
        let enq = one(&events, id, EventKind::Enqueued);
        assert_eq!(enq.data["status"], json!("waiting"), "{enq:?}");
        let ended = one(&events, id, EventKind::Cancelled);
        assert!(ended.data["error"].as_str().is_some_and(|e| e.contains("did not complete")), "{ended:?}");
    }
    let named =
        |id: &JobId| one(&events, id, EventKind::Cancelled).data["error"].as_str().unwrap().to_string();
    assert!(named(&cancelled).contains(dep.as_str()) && named(&batch[1]).contains(batch[0].as_str()));
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_events {
    ($callback:path, $make:path) => {
        $callback!($make;
            events::events_follow_a_job_through_its_life,
            events::events_name_each_way_a_job_moves,
            events::events_report_progress_controls_duplicates_and_removal,
            events::events_report_every_job_of_a_batch_once,
            events::read_events_pages_resume_without_loss_or_repeat,
            events::read_events_resume_on_a_reopened_store,
            events::read_events_blocked_reader_wakes_on_another_handles_commit,
            events::read_events_return_empty_by_their_timeout,
            events::trim_events_keeps_the_newest,
            events::publish_event_reads_back_and_refuses_bad_input,
            events::events_switched_off_write_nothing,
            events::read_events_refuse_bad_input,
            events::events_stay_in_their_namespace,
            events::events_report_a_job_ended_at_its_enqueue,
        );
    };
}
