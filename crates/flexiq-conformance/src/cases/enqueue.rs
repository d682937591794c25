//! Enqueue: ids, order, defaults, delayed jobs, payload fidelity and batch atomicity, and an
//! id the store already holds refused (a client re-sending a batch whose reply was lost).

use flexiq_core::store::{ReplayRequest, RetryDeadRequest};
use flexiq_core::{EnqueueOptions, ErrorKind, JobId, JobStatus, NewJob, Store};

use crate::fixtures::{
    assert_kind, at, dead, enqueue, finish, get, job, job_after, job_with, listed_ids, now, open, put, take,
    unique,
};
use crate::Harness;

/// A batch comes back with one id per job, in order, every job pending.
pub async fn enqueue_returns_ids_in_order(h: &dyn Harness) {
    let s = open(h, "default").await;
    let jobs: Vec<_> = (0..5).map(|i| job("t", &format!("{i}"))).collect();
    let expected: Vec<_> = jobs.iter().map(|j| j.id.clone()).collect();
    let out = enqueue(&*s, jobs, None, now()).await.unwrap();
    assert_eq!(out.iter().map(|e| e.id.clone()).collect::<Vec<_>>(), expected);
    for id in &expected {
        assert_eq!(get(&*s, id).await.status, JobStatus::Pending);
    }
}

/// Every freshly inserted job reports `created = true`.
pub async fn enqueue_reports_created_for_new_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let out = enqueue(&*s, vec![job("t", "a"), job("t", "b")], None, now()).await.unwrap();
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|e| e.created), "{out:?}");
}

/// A job enqueued with default options gets the documented defaults and the injected clock.
pub async fn enqueue_applies_defaults(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("send_email", "hello"), at(5)).await;
    let j = get(&*s, &id).await;
    assert_eq!(j.namespace, "default");
    assert_eq!(j.queue, "default");
    assert_eq!(j.task, "send_email");
    assert_eq!(j.payload, b"hello");
    assert_eq!(j.priority, 0);
    assert_eq!(j.attempt, 0);
    assert_eq!(j.max_retries, 3);
    assert_eq!(j.created_at, at(5));
    assert_eq!(j.started_at, None);
    assert_eq!(j.finished_at, None);
    assert_eq!(j.result, None);
    assert_eq!(j.last_error, None);
    assert!(!j.cancel_requested);
    assert!(j.depends_on.is_empty());
}

/// Every option a producer gives is stored and read back unchanged.
pub async fn enqueue_stores_every_option(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions {
        queue: Some("mail".into()),
        priority: Some(-7),
        max_retries: Some(9),
        backoff: Some(flexiq_core::Backoff { base_ms: 250, max_ms: 9_000 }),
        timeout_ms: Some(30_000),
        unique_key: Some("u-1".into()),
        metadata: Some(r#"{"tenant":"acme"}"#.into()),
        group_key: Some("g".into()),
        workflow_run_id: Some("run-1".into()),
        workflow_stage_id: Some("stage-1".into()),
        ..Default::default()
    };
    let id = put(&*s, job_with("t", "x", opts), now()).await;
    let j = get(&*s, &id).await;
    assert_eq!(j.queue, "mail");
    assert_eq!(j.priority, -7);
    assert_eq!(j.max_retries, 9);
    assert_eq!(j.backoff, flexiq_core::Backoff { base_ms: 250, max_ms: 9_000 });
    assert_eq!(j.timeout_ms, Some(30_000));
    assert_eq!(j.unique_key.as_deref(), Some("u-1"));
    assert_eq!(j.metadata.as_deref(), Some(r#"{"tenant":"acme"}"#));
    assert_eq!(j.group_key.as_deref(), Some("g"));
    assert_eq!(j.workflow_run_id.as_deref(), Some("run-1"));
    assert_eq!(j.workflow_stage_id.as_deref(), Some("stage-1"));
}

/// Payloads are opaque bytes: non-UTF-8 and NUL bytes round-trip exactly.
pub async fn enqueue_payload_bytes_round_trip(h: &dyn Harness) {
    let s = open(h, "default").await;
    let payload: Vec<u8> = (0..=255u8).chain([0, 0xff, 0xfe, 0]).collect();
    let j = flexiq_core::NewJob::build("t", payload.clone(), EnqueueOptions::default(), now()).unwrap();
    let id = put(&*s, j, now()).await;
    assert_eq!(get(&*s, &id).await.payload, payload);
}

/// An empty payload is stored as empty, not lost.
pub async fn enqueue_empty_payload_round_trips(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), now()).await;
    assert!(get(&*s, &id).await.payload.is_empty());
}

/// A delayed job is pending with its future `run_at` and is not claimable before it.
pub async fn enqueue_delayed_job_keeps_future_run_at(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { delay_ms: Some(60_000), ..Default::default() };
    let id = put(&*s, job_with("t", "", opts), now()).await;
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.run_at, at(60_000));
    assert!(take(&*s, 10, at(59_999)).await.is_empty());
    assert_eq!(take(&*s, 10, at(60_000)).await.len(), 1);
}

/// An absolute `run_at` is kept as given.
pub async fn enqueue_absolute_run_at_is_kept(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { run_at: Some(at(3_600_000)), ..Default::default() };
    let id = put(&*s, job_with("t", "", opts), now()).await;
    assert_eq!(get(&*s, &id).await.run_at, at(3_600_000));
}

/// A batch with an unknown dependency is rejected as a whole: nothing is written.
pub async fn enqueue_batch_with_bad_dependency_writes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let good = job("t", "good");
    let good_id = good.id.clone();
    let bad = job_after("t", &[&JobId::new()]);
    assert_kind(enqueue(&*s, vec![good, bad], None, now()).await, ErrorKind::InvalidArgument);
    assert!(s.get(&good_id).await.unwrap().is_none(), "first job of a rejected batch was written");
    assert!(listed_ids(&*s).await.is_empty());
    assert_eq!(s.count_pending("default").await.unwrap(), 0);
}

/// A rejected batch leaves earlier jobs alone and later batches work normally.
pub async fn enqueue_after_rejected_batch_still_works(h: &dyn Harness) {
    let s = open(h, "default").await;
    let before = put(&*s, job("t", "before"), now()).await;
    let bad = job_after("t", &[&JobId::new()]);
    assert_kind(enqueue(&*s, vec![job("t", "x"), bad], None, now()).await, ErrorKind::InvalidArgument);
    let after = put(&*s, job("t", "after"), now()).await;
    let mut listed = listed_ids(&*s).await;
    listed.sort();
    let mut expected = vec![before, after];
    expected.sort();
    assert_eq!(listed, expected);
}

/// A large batch is inserted whole: every job is readable and counted.
pub async fn enqueue_large_batch_is_complete(h: &dyn Harness) {
    let s = open(h, "default").await;
    let jobs: Vec<_> = (0..1_000).map(|i| job("t", &i.to_string())).collect();
    let out = enqueue(&*s, jobs, None, now()).await.unwrap();
    assert_eq!(out.len(), 1_000);
    assert_eq!(s.count_pending("default").await.unwrap(), 1_000);
    assert_eq!(get(&*s, &out[999].id).await.payload, b"999");
}

/// The store keeps the id the caller pre-assigned to a new job.
pub async fn enqueue_keeps_pre_assigned_ids(h: &dyn Harness) {
    let s = open(h, "default").await;
    let j = job("t", "");
    let id = j.id.clone();
    assert_eq!(put(&*s, j, now()).await, id);
    assert_eq!(get(&*s, &id).await.id, id);
}

/// Ids carry the injected clock: a job's id, and the ids of its replay and of a dead letter's
/// retry, hold the same millisecond as the `created_at` the store records.
pub async fn enqueue_ids_carry_the_injected_clock(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), now()).await;
    let j = get(&*s, &id).await;
    assert_eq!(id.unix_ms(), Some(j.created_at), "job id of {id}");
    let c = crate::fixtures::claim_id(&*s, &id, now()).await;
    crate::fixtures::complete(&*s, &c, None, now()).await;
    let replayed = s.replay(ReplayRequest { id: id.clone(), now: at(7_000) }).await.unwrap();
    assert_eq!(replayed.unix_ms(), Some(at(7_000)), "replay id {replayed}");
    assert_eq!(get(&*s, &replayed).await.created_at, at(7_000));
    crate::fixtures::kill(&*s, "t", "boom", at(8_000)).await;
    let entry = dead(&*s).await.remove(0);
    let retried = s.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(9_000) }).await.unwrap();
    assert_eq!(retried.unix_ms(), Some(at(9_000)), "dead-letter retry id {retried}");
}

/// `j` under the id `id`.
fn with_id(mut j: NewJob, id: &JobId) -> NewJob {
    j.id = id.clone();
    j
}

/// The first of `held` that is not `id`.
fn other_than<'a>(held: &'a [JobId], id: &JobId) -> &'a JobId {
    held.iter().find(|h| *h != id).expect("more than one held job")
}

/// A held job in each of pending, waiting, completed and dead (the pending one first).
async fn held_jobs(s: &dyn Store) -> Vec<JobId> {
    let completed = finish(s, job("t", "done"), at(0)).await;
    let died = crate::fixtures::kill(s, "t", "boom", at(1)).await;
    let pending = put(s, job("t", "pending"), at(2)).await;
    let waiting = put(s, job_after("t", &[&pending]), at(2)).await;
    vec![pending, waiting, completed, died]
}

/// Re-sending a job whose id the store holds (any status, plain or with a unique key) is
/// `Conflict` naming the id, and the held job, its status and the counts stay as they were.
pub async fn enqueue_of_a_held_id_is_a_conflict(h: &dyn Harness) {
    let s = open(h, "default").await;
    let held = held_jobs(&*s).await;
    let stats = s.stats(None).await.unwrap();
    for (n, id) in held.iter().enumerate() {
        let before = get(&*s, id).await;
        let other = other_than(&held, id);
        for again in [job("t", "again"), unique("t", &format!("again-{n}")), job_after("t", &[other])] {
            let e = enqueue(&*s, vec![with_id(again, id)], None, at(10)).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Conflict, "re-sent {id}: {e}");
            assert!(e.to_string().contains(id.as_str()), "the conflict names {id}: {e}");
        }
        let after = get(&*s, id).await;
        assert_eq!(
            (after.status, &after.task, &after.payload),
            (before.status, &before.task, &before.payload)
        );
    }
    assert_eq!(s.stats(None).await.unwrap(), stats, "counts after the re-sends");
    assert!(take(&*s, 10, at(20)).await.iter().all(|c| c.job.id == held[0]), "only the pending job is due");
}

/// A batch holding one id the store holds writes none of its jobs, on the plain path and on the
/// checked one (unique keys, dependencies).
pub async fn enqueue_batch_with_a_held_id_writes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let held = held_jobs(&*s).await;
    let stats = s.stats(None).await.unwrap();
    let listed = listed_ids(&*s).await;
    for id in &held {
        let plain = vec![job("t", "a"), with_id(job("t", "dup"), id), job("t", "b")];
        let after = job_after("t", &[other_than(&held, id)]);
        let checked = vec![unique("t", "fresh"), after, with_id(job("t", "dup"), id)];
        for batch in [plain, checked] {
            let e = enqueue(&*s, batch, None, at(10)).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Conflict, "batch re-sending {id}: {e}");
            assert!(e.to_string().contains(id.as_str()), "the conflict names {id}: {e}");
        }
    }
    assert_eq!(listed_ids(&*s).await, listed, "a refused batch wrote jobs");
    assert_eq!(s.stats(None).await.unwrap(), stats, "counts after the refused batches");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_enqueue {
    ($callback:path, $make:path) => {
        $callback!($make;
            enqueue::enqueue_returns_ids_in_order,
            enqueue::enqueue_reports_created_for_new_jobs,
            enqueue::enqueue_applies_defaults,
            enqueue::enqueue_stores_every_option,
            enqueue::enqueue_payload_bytes_round_trip,
            enqueue::enqueue_empty_payload_round_trips,
            enqueue::enqueue_delayed_job_keeps_future_run_at,
            enqueue::enqueue_absolute_run_at_is_kept,
            enqueue::enqueue_batch_with_bad_dependency_writes_nothing,
            enqueue::enqueue_after_rejected_batch_still_works,
            enqueue::enqueue_large_batch_is_complete,
            enqueue::enqueue_keeps_pre_assigned_ids,
            enqueue::enqueue_ids_carry_the_injected_clock,
            enqueue::enqueue_of_a_held_id_is_a_conflict,
            enqueue::enqueue_batch_with_a_held_id_writes_nothing,
        );
    };
}
