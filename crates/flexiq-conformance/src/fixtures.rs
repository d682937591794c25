//! Small helpers the cases share.
//!
//! Every helper panics with a message naming what it was doing, so a failing case points at
//! the step that broke. Time is always injected: `T0` plus offsets in milliseconds.

use std::fmt::Debug;
use std::sync::Arc;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, AcquireLeaseRequest, ClaimRequest, DeadLettersRequest, EnqueueRequest,
    Enqueued, HeartbeatRequest, LeaseRequest, ListJobsRequest,
};
use flexiq_core::{
    AckOutcome, ClaimedJob, DeadJob, EnqueueOptions, ErrorKind, Job, JobFilter, JobId, JobStatus, Lease,
    NewJob, Result, Store,
};

use crate::Harness;

/// A fixed base clock (Unix ms) so cases control time explicitly.
pub const T0: i64 = 1_700_000_000_000;

/// The base clock.
pub fn now() -> i64 {
    T0
}

/// `T0` plus `offset_ms` (Unix ms).
pub fn at(offset_ms: i64) -> i64 {
    T0 + offset_ms
}

/// Opens a namespace, failing the case on error.
pub async fn open(h: &dyn Harness, ns: &str) -> Arc<dyn Store> {
    h.open(ns).await.unwrap_or_else(|e| panic!("open namespace {ns}: {e}"))
}

/// A valid job of `task` with `payload` text and default options.
pub fn job(task: &str, payload: &str) -> NewJob {
    NewJob::build(task, payload.as_bytes().to_vec(), EnqueueOptions::default(), T0).unwrap()
}

/// A valid job with options, built at `T0`.
pub fn job_with(task: &str, payload: &str, opts: EnqueueOptions) -> NewJob {
    NewJob::build(task, payload.as_bytes().to_vec(), opts, T0).unwrap()
}

/// A job of `task` on `queue`.
pub fn job_in(queue: &str, task: &str) -> NewJob {
    job_with(task, "", EnqueueOptions { queue: Some(queue.into()), ..Default::default() })
}

/// A job of `task` that may not retry (`max_retries` 0), so one retryable failure kills it.
pub fn fragile(task: &str, payload: &str) -> NewJob {
    job_with(task, payload, EnqueueOptions { max_retries: Some(0), ..Default::default() })
}

/// A job of `task` depending on `deps`.
pub fn job_after(task: &str, deps: &[&JobId]) -> NewJob {
    job_with(
        task,
        "",
        EnqueueOptions { depends_on: deps.iter().map(|d| d.to_string()).collect(), ..Default::default() },
    )
}

/// A job of `task` with a unique key.
pub fn unique(task: &str, key: &str) -> NewJob {
    job_with(task, "", EnqueueOptions { unique_key: Some(key.into()), ..Default::default() })
}

/// Enqueues a batch at `at` with an optional admission cap.
pub async fn enqueue(
    s: &dyn Store,
    jobs: Vec<NewJob>,
    max_pending: Option<u64>,
    at: i64,
) -> Result<Vec<Enqueued>> {
    s.enqueue(EnqueueRequest { jobs, max_pending, now: at }).await
}

/// Enqueues one job at `at` and returns its id.
pub async fn put(s: &dyn Store, j: NewJob, at: i64) -> JobId {
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: at }).await.unwrap().remove(0).id
}

/// Enqueues a batch at `at` and returns the ids, failing the case on error.
pub async fn put_all(s: &dyn Store, jobs: Vec<NewJob>, at: i64) -> Vec<JobId> {
    let out = enqueue(s, jobs, None, at).await.unwrap_or_else(|e| panic!("enqueue batch: {e}"));
    out.into_iter().map(|e| e.id).collect()
}

/// Claims up to `limit` from any queue at `at`.
pub async fn take(s: &dyn Store, limit: u32, at: i64) -> Vec<ClaimedJob> {
    s.claim(ClaimRequest { queues: vec![], limit, worker_id: "w1".into(), now: at }).await.unwrap()
}

/// Claims up to `limit` from `queues` at `at`.
pub async fn take_from(s: &dyn Store, queues: &[&str], limit: u32, at: i64) -> Vec<ClaimedJob> {
    let queues = queues.iter().map(|q| q.to_string()).collect();
    s.claim(ClaimRequest { queues, limit, worker_id: "w1".into(), now: at }).await.unwrap()
}

/// Ids of claimed jobs, in claim order.
pub fn ids(claimed: &[ClaimedJob]) -> Vec<JobId> {
    claimed.iter().map(|c| c.job.id.clone()).collect()
}

/// Enqueues `j` at `at` and claims it at the same instant, checking the claim returned it.
/// Meant for a store with no other claimable job of higher priority.
pub async fn start(s: &dyn Store, j: NewJob, at: i64) -> ClaimedJob {
    let id = put(s, j, at).await;
    claim_id(s, &id, at).await
}

/// Claims at `at` and returns the claim of `id`, failing when it is not among the jobs claimed.
/// The attempt's start is reported at the same instant ([`report_started`]), as a worker's
/// heartbeat would once its handler runs, so a lapsed lease of it is a stall.
pub async fn claim_id(s: &dyn Store, id: &JobId, at: i64) -> ClaimedJob {
    let claimed = take(s, 1, at).await;
    let c = match claimed.into_iter().next() {
        Some(c) if &c.job.id == id => c,
        other => panic!("expected to claim {id}, got {:?}", other.map(|c| c.job.id)),
    };
    report_started(s, &c, at).await;
    c
}

/// Reports at `at` that the handler of claim `c` started (a heartbeat), failing unless the
/// claim still holds the lease.
pub async fn report_started(s: &dyn Store, c: &ClaimedJob, at: i64) {
    let req = HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now: at };
    let replies = s.heartbeat(req).await.unwrap_or_else(|e| panic!("heartbeat {}: {e}", c.job.id));
    assert_eq!(replies[0].outcome, AckOutcome::Acknowledged, "start of {} reported", c.job.id);
}

/// Applies one ack at `at` and returns its outcome.
pub async fn ack(s: &dyn Store, c: &ClaimedJob, kind: AckKind, at: i64) -> AckOutcome {
    let out = s
        .ack(AckRequest { acks: vec![Ack { job_id: c.job.id.clone(), fence: c.fence, kind }], now: at })
        .await
        .unwrap_or_else(|e| panic!("ack {}: {e}", c.job.id));
    assert_eq!(out.len(), 1, "one outcome per ack");
    out[0]
}

/// Completes a claimed job with `result` at `at`, asserting it was acknowledged.
pub async fn complete(s: &dyn Store, c: &ClaimedJob, result: Option<&[u8]>, at: i64) {
    let kind = AckKind::Complete { result: result.map(<[u8]>::to_vec) };
    assert_eq!(ack(s, c, kind, at).await, AckOutcome::Acknowledged, "complete {}", c.job.id);
}

/// Fails a claimed job at `at`, asserting it was acknowledged.
pub async fn fail(s: &dyn Store, c: &ClaimedJob, error: &str, retryable: bool, at: i64) {
    let kind = AckKind::Fail { error: error.into(), retryable };
    assert_eq!(ack(s, c, kind, at).await, AckOutcome::Acknowledged, "fail {}", c.job.id);
}

/// Enqueues, claims and completes a job at `at`; returns its id.
pub async fn finish(s: &dyn Store, j: NewJob, at: i64) -> JobId {
    let c = start(s, j, at).await;
    complete(s, &c, None, at).await;
    c.job.id
}

/// Enqueues a job of `task` with no retries, claims it and fails it retryably at `at`, so it
/// dies into the dead-letter queue; returns its id.
pub async fn kill(s: &dyn Store, task: &str, error: &str, at: i64) -> JobId {
    let c = start(s, fragile(task, "p"), at).await;
    fail(s, &c, error, true, at).await;
    c.job.id
}

/// Reads a job that must exist.
pub async fn get(s: &dyn Store, id: &JobId) -> Job {
    s.get(id).await.unwrap_or_else(|e| panic!("get {id}: {e}")).unwrap_or_else(|| panic!("job {id} missing"))
}

/// The status of a job that must exist.
pub async fn status(s: &dyn Store, id: &JobId) -> JobStatus {
    get(s, id).await.status
}

/// Every job the namespace lists under `filter` (one page of up to 10,000).
pub async fn list(s: &dyn Store, filter: &JobFilter) -> Vec<Job> {
    s.list_jobs(ListJobsRequest { filter: filter.clone(), limit: 10_000, offset: 0 })
        .await
        .unwrap_or_else(|e| panic!("list jobs: {e}"))
}

/// Ids of every job the namespace lists under the default filter, newest first.
pub async fn listed_ids(s: &dyn Store) -> Vec<JobId> {
    list(s, &JobFilter::default()).await.into_iter().map(|j| j.id).collect()
}

/// The first page of dead letters (up to 10, every task), newest first.
pub async fn dead(s: &dyn Store) -> Vec<DeadJob> {
    s.dead_letters(DeadLettersRequest { task: None, limit: 10, offset: 0 })
        .await
        .unwrap_or_else(|e| panic!("list dead letters: {e}"))
}

/// Tries to take (or renew) lease `name` for `holder` for `ttl_ms` at `at`; false when someone
/// else holds it.
pub async fn acquire(s: &dyn Store, name: &str, holder: &str, ttl_ms: u64, at: i64) -> bool {
    let req = AcquireLeaseRequest { name: name.into(), holder: holder.into(), ttl_ms, now: at };
    s.acquire_lease(req).await.unwrap_or_else(|e| panic!("acquire lease {name} for {holder}: {e}"))
}

/// The unlapsed holder of lease `name` at `at`.
pub async fn current_lease(s: &dyn Store, name: &str, at: i64) -> Option<Lease> {
    s.lease(LeaseRequest { name: name.into(), now: at })
        .await
        .unwrap_or_else(|e| panic!("read lease {name}: {e}"))
}

/// The error kind of a call that must fail.
pub fn kind_of<T: Debug>(r: Result<T>) -> ErrorKind {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e.kind(),
    }
}

/// Asserts a call failed with `kind` (an `Unsupported` error fails the case like any other).
#[track_caller]
pub fn assert_kind<T: Debug>(r: Result<T>, kind: ErrorKind) {
    match r {
        Ok(v) => panic!("expected a {kind:?} error, got Ok({v:?})"),
        Err(e) => assert_eq!(e.kind(), kind, "expected {kind:?}, got {:?}: {e}", e.kind()),
    }
}

/// A different, still well-formed base64url text: one character in the middle changed.
pub fn tamper(cursor: &str) -> String {
    let mut chars: Vec<char> = cursor.chars().collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}
