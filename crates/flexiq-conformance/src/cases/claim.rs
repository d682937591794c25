//! Claim: order (priority, then run_at, then id), delays, limits, queue selection and what a
//! claim stamps on the job.

use flexiq_core::store::{AckKind, CancelRequest, ClaimRequest};
use flexiq_core::{EnqueueOptions, ErrorKind, JobStatus};

use crate::fixtures::{
    ack, assert_kind, at, finish, get, ids, job, job_in, job_with, now, open, put, put_all, start, take,
    take_from,
};
use crate::Harness;

fn prio(p: i32) -> flexiq_core::NewJob {
    job_with("t", "", EnqueueOptions { priority: Some(p), ..Default::default() })
}

fn run_at(t: i64) -> flexiq_core::NewJob {
    job_with("t", "", EnqueueOptions { run_at: Some(t), ..Default::default() })
}

/// Higher priority is claimed first.
pub async fn claim_highest_priority_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let low = put(&*s, prio(-5), now()).await;
    let mid = put(&*s, prio(0), now()).await;
    let high = put(&*s, prio(10), now()).await;
    assert_eq!(ids(&take(&*s, 3, now()).await), vec![high, mid, low]);
}

/// Among equal priorities, the earlier `run_at` is claimed first.
pub async fn claim_earlier_run_at_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let late = put(&*s, run_at(at(-10)), now()).await;
    let early = put(&*s, run_at(at(-20)), now()).await;
    assert_eq!(ids(&take(&*s, 2, now()).await), vec![early, late]);
}

/// Among equal priority and `run_at`, the smaller id (older job) is claimed first.
pub async fn claim_ties_broken_by_id(h: &dyn Harness) {
    let s = open(h, "default").await;
    let jobs: Vec<_> = (0..5).map(|_| job("t", "")).collect();
    let mut expected: Vec<_> = jobs.iter().map(|j| j.id.clone()).collect();
    expected.sort();
    put_all(&*s, jobs.into_iter().rev().collect(), now()).await;
    assert_eq!(ids(&take(&*s, 5, now()).await), expected);
}

/// Priority outranks `run_at`: a newer high-priority job beats an older low-priority one.
pub async fn claim_priority_outranks_run_at(h: &dyn Harness) {
    let s = open(h, "default").await;
    let old_low = put(&*s, run_at(at(-1_000)), now()).await;
    let new_high =
        put(&*s, job_with("t", "", EnqueueOptions { priority: Some(1), ..Default::default() }), now()).await;
    assert_eq!(ids(&take(&*s, 2, now()).await), vec![new_high, old_low]);
}

/// A delayed job is not claimed before its `run_at`, and is claimed once it comes.
pub async fn claim_skips_delayed_until_run_at(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, run_at(at(1_000)), now()).await;
    assert!(take(&*s, 10, at(999)).await.is_empty());
    assert_eq!(get(&*s, &id).await.status, JobStatus::Pending);
    assert_eq!(ids(&take(&*s, 10, at(1_000)).await), vec![id]);
}

/// No more than `limit` jobs come back, and the rest stay pending.
pub async fn claim_honours_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, (0..10).map(|_| job("t", "")).collect(), now()).await;
    assert_eq!(take(&*s, 3, now()).await.len(), 3);
    assert_eq!(s.count_pending("default").await.unwrap(), 7);
    assert_eq!(take(&*s, 100, now()).await.len(), 7);
    assert!(take(&*s, 100, now()).await.is_empty());
}

/// A limit of 0 is `InvalidArgument`.
pub async fn claim_limit_zero_is_invalid(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job("t", ""), now()).await;
    let r = s.claim(ClaimRequest { queues: vec![], limit: 0, worker_id: "w".into(), now: now() }).await;
    assert_kind(r, ErrorKind::InvalidArgument);
    assert_eq!(s.count_pending("default").await.unwrap(), 1);
}

/// Naming queues claims only from them; an empty list means every queue.
pub async fn claim_selects_queues(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job_in("a", "t"), now()).await;
    let b = put(&*s, job_in("b", "t"), now()).await;
    let c = put(&*s, job_in("c", "t"), now()).await;
    assert_eq!(ids(&take_from(&*s, &["b"], 10, now()).await), vec![b]);
    let mut got = ids(&take_from(&*s, &["a", "c", "zzz"], 10, now()).await);
    got.sort();
    let mut want = vec![a, c];
    want.sort();
    assert_eq!(got, want);
}

/// A claim stamps status, attempt, start time, worker and a matching fence.
pub async fn claim_stamps_attempt_and_fence(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", "p"), now()).await;
    let c = s
        .claim(ClaimRequest { queues: vec![], limit: 1, worker_id: "worker-7".into(), now: at(42) })
        .await
        .unwrap()
        .remove(0);
    assert_eq!(c.job.id, id);
    assert_eq!(c.job.status, JobStatus::Running);
    assert_eq!(c.fence.attempt, 1);
    assert_eq!(c.fence.started_at, at(42));
    assert_eq!(c.job.payload, b"p");
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Running);
    assert_eq!(j.attempt, 1);
    assert_eq!(j.started_at, Some(at(42)));
    assert_eq!(j.worker_id.as_deref(), Some("worker-7"));
    assert_eq!(j.fence(), Some(c.fence));
}

/// A claimed job is not handed out again.
pub async fn claim_never_returns_running_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    put_all(&*s, vec![job("t", ""), job("t", "")], now()).await;
    let first = ids(&take(&*s, 1, now()).await);
    let second = ids(&take(&*s, 5, now()).await);
    assert_eq!(second.len(), 1);
    assert_ne!(first, second);
    assert!(take(&*s, 5, now()).await.is_empty());
}

/// A suspended job is claimable once its `run_at` comes, and not before.
pub async fn claim_suspended_job_after_run_at(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    ack(&*s, &c, AckKind::Suspend { until: at(5_000) }, at(1)).await;
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Suspended);
    assert!(take(&*s, 10, at(4_999)).await.is_empty());
    let again = take(&*s, 10, at(5_000)).await;
    assert_eq!(ids(&again), vec![c.job.id.clone()]);
    assert_eq!(again[0].fence.attempt, 1, "suspend gave the attempt back");
}

/// Terminal jobs are never claimed; an empty store claims nothing.
pub async fn claim_ignores_terminal_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(take(&*s, 10, now()).await.is_empty());
    finish(&*s, job("t", ""), now()).await;
    let cancelled = put(&*s, job("t", ""), now()).await;
    s.cancel(CancelRequest { id: cancelled.clone(), now: now() }).await.unwrap();
    assert!(take(&*s, 10, at(1_000)).await.is_empty());
}

/// Each claim of a retried job starts the next attempt under a new fence.
pub async fn claim_counts_attempts_across_retries(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut j = job("t", "");
    j.backoff = flexiq_core::Backoff::NONE;
    let c1 = start(&*s, j, now()).await;
    ack(&*s, &c1, AckKind::Fail { error: "e".into(), retryable: true }, at(1)).await;
    let c2 = take(&*s, 1, at(2)).await.remove(0);
    assert_eq!(c2.job.id, c1.job.id);
    assert_eq!(c2.fence.attempt, 2);
    assert_eq!(c2.fence.started_at, at(2));
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_claim {
    ($callback:path, $make:path) => {
        $callback!($make;
            claim::claim_highest_priority_first,
            claim::claim_earlier_run_at_first,
            claim::claim_ties_broken_by_id,
            claim::claim_priority_outranks_run_at,
            claim::claim_skips_delayed_until_run_at,
            claim::claim_honours_limit,
            claim::claim_limit_zero_is_invalid,
            claim::claim_selects_queues,
            claim::claim_stamps_attempt_and_fence,
            claim::claim_never_returns_running_jobs,
            claim::claim_suspended_job_after_run_at,
            claim::claim_ignores_terminal_jobs,
            claim::claim_counts_attempts_across_retries,
        );
    };
}
