//! Deduplication modes: simple, throttle, debounce (extend, replace) and keep-last-if-active,
//! the holder lookup and key deletion, a burst of concurrent duplicates, and bad options.

use std::collections::HashSet;
use std::sync::Arc;

use flexiq_core::dedup::{DedupMode, DedupOptions};
use flexiq_core::store::{
    DedupJobIdRequest, EnqueueRequest, Enqueued, ListJobsRequest, ObliterateRequest, RemoveJobRequest,
};
use flexiq_core::{EnqueueOptions, ErrorKind, JobFilter, JobId, JobStatus, NewJob, Store};

use crate::fixtures::{assert_kind, at, complete, enqueue, fail, get, job_with, open, status, take};
use crate::Harness;

const Q: &str = "dedup";

fn dedup(mode: DedupMode, ttl_ms: Option<u64>, extend: bool, replace: bool) -> DedupOptions {
    DedupOptions { id: "key".into(), mode, ttl_ms, extend, replace }
}

fn dup(payload: &str, d: &DedupOptions, delay_ms: Option<u64>, built_at: i64) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some(Q.into()),
        dedup: Some(d.clone()),
        delay_ms,
        max_retries: Some(0),
        ..Default::default()
    };
    NewJob::build("t", payload.as_bytes().to_vec(), opts, built_at).unwrap()
}

async fn add(s: &dyn Store, j: NewJob, t: i64) -> Enqueued {
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: at(t) }).await.unwrap().remove(0)
}

async fn holder(s: &dyn Store, t: i64) -> Option<JobId> {
    s.dedup_job_id(DedupJobIdRequest { key: "key".into(), now: at(t) }).await.unwrap()
}

async fn count(s: &dyn Store) -> usize {
    let req = ListJobsRequest { filter: JobFilter::default(), limit: 1_000, offset: 0 };
    s.list_jobs(req).await.unwrap().len()
}

/// `simple`: a duplicate returns the holder (not created) while it is unfinished; once it
/// completes the key is free.
pub async fn dedup_simple_holds_until_the_holder_finishes(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Simple, None, false, false);
    let first = add(&*s, dup("a", &d, None, at(0)), 0).await;
    assert!(first.created);
    let again = add(&*s, dup("b", &d, None, at(1)), 1).await;
    assert_eq!(again, Enqueued { id: first.id.clone(), created: false });
    assert_eq!(get(&*s, &first.id).await.payload, b"a", "simple never replaces");
    let c = take(&*s, 1, at(2)).await.remove(0);
    assert!(!add(&*s, dup("c", &d, None, at(3)), 3).await.created, "a running holder still holds");
    complete(&*s, &c, None, at(4)).await;
    assert_eq!(holder(&*s, 5).await, None);
    let next = add(&*s, dup("d", &d, None, at(5)), 5).await;
    assert!(next.created && next.id != first.id);
    assert_eq!(holder(&*s, 6).await, Some(next.id));
}

/// `throttle`: duplicates are ignored for the window even after the holder finished.
pub async fn dedup_throttle_holds_for_its_window(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Throttle, Some(1_000), false, false);
    let first = add(&*s, dup("a", &d, None, at(0)), 0).await;
    let c = take(&*s, 1, at(10)).await.remove(0);
    complete(&*s, &c, None, at(20)).await;
    let within = add(&*s, dup("b", &d, None, at(999)), 999).await;
    assert_eq!(within, Enqueued { id: first.id.clone(), created: false });
    assert_eq!(holder(&*s, 999).await, Some(first.id.clone()));
    assert_eq!(holder(&*s, 1_000).await, None, "the window is over");
    let after = add(&*s, dup("c", &d, None, at(1_000)), 1_000).await;
    assert!(after.created);
    assert_eq!(count(&*s).await, 2);
}

/// `debounce` with `extend` and `replace`: each duplicate restarts the window and gives the
/// not-yet-started holder its payload and delay; once the holder runs it is kept as it is.
pub async fn dedup_debounce_extends_and_replaces(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Debounce, Some(2_000), true, true);
    let first = add(&*s, dup("p1", &d, Some(1_000), at(0)), 0).await;
    let second = add(&*s, dup("p2", &d, Some(1_000), at(500)), 500).await;
    assert_eq!(second, Enqueued { id: first.id.clone(), created: false });
    let j = get(&*s, &first.id).await;
    assert_eq!((j.payload.as_slice(), j.run_at), (&b"p2"[..], at(1_500)));
    let third = add(&*s, dup("p3", &d, Some(1_000), at(1_400)), 1_400).await;
    assert!(!third.created);
    assert_eq!(get(&*s, &first.id).await.payload, b"p3");
    assert!(take(&*s, 1, at(2_399)).await.is_empty(), "the replaced delay holds");
    let c = take(&*s, 1, at(2_400)).await.remove(0);
    assert_eq!(c.job.payload, b"p3");
    let late = add(&*s, dup("p4", &d, Some(1_000), at(2_600)), 2_600).await;
    assert_eq!(late.id, first.id, "inside the window p3 extended to 3_400 (p2 had it end at 2_500)");
    assert_eq!(get(&*s, &first.id).await.payload, b"p3", "a running holder is not replaced");
    assert_eq!(count(&*s).await, 1);
}

/// `debounce` without `extend`: the window ends where the first enqueue put it.
pub async fn dedup_debounce_without_extend_lapses(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Debounce, Some(1_000), false, false);
    let first = add(&*s, dup("a", &d, Some(5_000), at(0)), 0).await;
    assert!(!add(&*s, dup("b", &d, Some(5_000), at(900)), 900).await.created);
    assert_eq!(get(&*s, &first.id).await.payload, b"a", "no replace without replace");
    let next = add(&*s, dup("c", &d, Some(5_000), at(1_000)), 1_000).await;
    assert!(next.created);
}

/// `keep_last_if_active`: a duplicate replaces a waiting holder; behind a running holder it
/// queues one job that later duplicates replace; that job runs however the running one ends.
pub async fn dedup_keep_last_if_active_keeps_one_running_and_one_waiting(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::KeepLastIfActive, None, false, false);
    let a = add(&*s, dup("p1", &d, None, at(0)), 0).await;
    assert!(!add(&*s, dup("p2", &d, None, at(1)), 1).await.created);
    assert_eq!(get(&*s, &a.id).await.payload, b"p2");
    let ca = take(&*s, 1, at(2)).await.remove(0);
    assert_eq!(ca.job.payload, b"p2");
    let b = add(&*s, dup("p3", &d, None, at(3)), 3).await;
    assert!(b.created && b.id != a.id);
    assert_eq!(status(&*s, &b.id).await, JobStatus::Waiting, "it waits for the running one");
    let again = add(&*s, dup("p4", &d, None, at(4)), 4).await;
    assert_eq!(again, Enqueued { id: b.id.clone(), created: false });
    assert_eq!(get(&*s, &b.id).await.payload, b"p4");
    assert!(take(&*s, 1, at(5)).await.is_empty(), "at most one runs");
    fail(&*s, &ca, "boom", true, at(6)).await;
    assert_eq!(status(&*s, &a.id).await, JobStatus::Dead);
    let cb = take(&*s, 1, at(7)).await.remove(0);
    assert_eq!((cb.job.id, cb.job.payload), (b.id, b"p4".to_vec()));
    assert_eq!(count(&*s).await, 2);
}

/// `dedup_job_id` names the holder; `delete_dedup_key` frees the key so the next enqueue
/// inserts; removing the holder frees it too.
pub async fn dedup_job_id_and_delete_key(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Simple, None, false, false);
    let a = add(&*s, dup("a", &d, None, at(0)), 0).await;
    assert_eq!(holder(&*s, 1).await, Some(a.id.clone()));
    assert!(s.delete_dedup_key("key").await.unwrap());
    assert!(!s.delete_dedup_key("key").await.unwrap(), "already gone");
    assert_eq!(holder(&*s, 2).await, None);
    let b = add(&*s, dup("b", &d, None, at(3)), 3).await;
    assert!(b.created);
    assert_eq!(status(&*s, &a.id).await, JobStatus::Pending, "the old holder is untouched");
    s.remove_job(RemoveJobRequest { job_id: b.id.clone(), remove_children: false, now: at(4) })
        .await
        .unwrap();
    assert_eq!(holder(&*s, 5).await, None, "a removed holder frees its key");
    assert!(add(&*s, dup("c", &d, None, at(6)), 6).await.created);
    assert_kind(
        s.dedup_job_id(DedupJobIdRequest { key: String::new(), now: at(7) }).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(s.delete_dedup_key("").await, ErrorKind::InvalidArgument);
    assert!(!s.delete_dedup_key("never-used").await.unwrap());
}

/// Keys are per namespace, and two jobs with one key in one batch dedupe against each other.
pub async fn dedup_keys_are_per_namespace_and_work_within_a_batch(h: &dyn Harness) {
    let a = open(h, "default").await;
    let b = open(h, "other").await;
    let d = dedup(DedupMode::Simple, None, false, false);
    let out =
        enqueue(&*a, vec![dup("x", &d, None, at(0)), dup("y", &d, None, at(0))], None, at(0)).await.unwrap();
    assert!(out[0].created && !out[1].created);
    assert_eq!(out[1].id, out[0].id);
    assert!(add(&*b, dup("z", &d, None, at(1)), 1).await.created, "another namespace has its own keys");
    assert_eq!(count(&*a).await, 1);
}

/// Obliterating the holder's queue leaves no dedup record behind.
pub async fn dedup_obliterate_frees_the_queue_keys(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Throttle, Some(60_000), false, false);
    add(&*s, dup("a", &d, None, at(0)), 0).await;
    let left = s
        .obliterate(ObliterateRequest { queue: Q.into(), force: false, count: 100, now: at(1) })
        .await
        .unwrap();
    assert_eq!(left, 0);
    assert_eq!(holder(&*s, 2).await, None);
    assert!(add(&*s, dup("b", &d, None, at(3)), 3).await.created);
}

/// A thousand concurrent debounced duplicates leave exactly one job, all told its id, and the
/// enqueue after them wins with its payload.
pub async fn dedup_concurrent_debounce_leaves_one_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Debounce, Some(600_000), true, true);
    let tasks: Vec<_> = (0..1_000)
        .map(|i| {
            let s: Arc<dyn Store> = s.clone();
            let j = dup(&format!("p{i}"), &d, Some(60_000), at(0));
            tokio::spawn(async move { add(&*s, j, 0).await })
        })
        .collect();
    let mut ids = HashSet::new();
    let mut created = 0;
    for t in tasks {
        let e = t.await.unwrap();
        created += usize::from(e.created);
        ids.insert(e.id);
    }
    assert_eq!((ids.len(), created), (1, 1), "one job, created once");
    let id = ids.into_iter().next().unwrap();
    let payload = String::from_utf8(get(&*s, &id).await.payload).unwrap();
    assert!(payload.starts_with('p'), "{payload}");
    let last = add(&*s, dup("last", &d, Some(60_000), at(1)), 1).await;
    assert_eq!(last, Enqueued { id: id.clone(), created: false });
    assert_eq!(get(&*s, &id).await.payload, b"last");
    assert_eq!(count(&*s).await, 1);
}

/// A mode without its TTL, a TTL of 0, dedup beside a unique key: `InvalidArgument`, and the
/// whole batch is unwritten.
pub async fn dedup_bad_options_write_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ok = job_with("t", "ok", EnqueueOptions::default());
    let mut bad = job_with("t", "bad", EnqueueOptions::default());
    for d in [
        dedup(DedupMode::Throttle, None, false, false),
        dedup(DedupMode::Debounce, Some(0), false, false),
        dedup(DedupMode::Simple, Some(10), false, false),
        dedup(DedupMode::Simple, None, true, false),
    ] {
        bad.dedup = Some(d);
        assert_kind(
            enqueue(&*s, vec![ok.clone(), bad.clone()], None, at(0)).await,
            ErrorKind::InvalidArgument,
        );
    }
    bad.dedup = Some(dedup(DedupMode::Simple, None, false, false));
    bad.unique_key = Some("u".into());
    assert_kind(enqueue(&*s, vec![ok.clone(), bad], None, at(0)).await, ErrorKind::InvalidArgument);
    assert_eq!(count(&*s).await, 0);
    assert_eq!(holder(&*s, 1).await, None);
}

/// A job of a revoked task under a dedup key is `TaskRevoked` whether the key is free or held,
/// and writes nothing: the key is not taken, the holder keeps its payload and hold.
pub async fn dedup_revoked_task_takes_no_key(h: &dyn Harness) {
    let s = open(h, "default").await;
    let d = dedup(DedupMode::Debounce, Some(10_000), true, true);
    s.revoke_task("t").await.unwrap();
    let first = dup("1", &d, Some(5_000), at(0));
    let err = s.enqueue(EnqueueRequest { jobs: vec![first.clone()], max_pending: None, now: at(0) }).await;
    assert_kind(err, ErrorKind::TaskRevoked);
    assert!(s.get(&first.id).await.unwrap().is_none());
    assert_eq!(holder(&*s, 1).await, None, "a refused enqueue takes no key");
    assert!(s.unrevoke_task("t").await.unwrap());
    let held = add(&*s, dup("2", &d, Some(5_000), at(2)), 2).await;
    assert!(held.created);
    s.revoke_task("t").await.unwrap();
    let late = dup("3", &d, Some(5_000), at(3));
    let err = s.enqueue(EnqueueRequest { jobs: vec![late], max_pending: None, now: at(3) }).await;
    assert_kind(err, ErrorKind::TaskRevoked);
    assert_eq!(holder(&*s, 4).await, Some(held.id.clone()));
    assert_eq!(get(&*s, &held.id).await.payload, b"2".to_vec(), "the holder is not replaced");
    assert_eq!(count(&*s).await, 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_dedup {
    ($callback:path, $make:path) => {
        $callback!($make;
            dedup::dedup_simple_holds_until_the_holder_finishes,
            dedup::dedup_throttle_holds_for_its_window,
            dedup::dedup_debounce_extends_and_replaces,
            dedup::dedup_debounce_without_extend_lapses,
            dedup::dedup_keep_last_if_active_keeps_one_running_and_one_waiting,
            dedup::dedup_job_id_and_delete_key,
            dedup::dedup_keys_are_per_namespace_and_work_within_a_batch,
            dedup::dedup_obliterate_frees_the_queue_keys,
            dedup::dedup_concurrent_debounce_leaves_one_job,
            dedup::dedup_bad_options_write_nothing,
            dedup::dedup_revoked_task_takes_no_key,
        );
    };
}
