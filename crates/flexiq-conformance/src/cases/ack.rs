//! Acks: what complete, fail, suspend and defer do to a job, its retry budget, its error
//! history and the dead-letter queue.

use flexiq_core::store::{Ack, AckKind, AckRequest};
use flexiq_core::{AckOutcome, Backoff, EnqueueOptions, Fence, JobStatus};

use crate::fixtures::{
    ack, at, complete, dead, fail, fragile, get, job, job_with, now, open, put, start, take,
};
use crate::Harness;

/// Complete stores the result, stamps `finished_at` and makes the job terminal.
pub async fn ack_complete_stores_result(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    complete(&*s, &c, Some(&[1, 2, 0, 255]), at(7)).await;
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Completed);
    assert_eq!(j.result.as_deref(), Some(&[1u8, 2, 0, 255][..]));
    assert_eq!(j.finished_at, Some(at(7)));
    assert!(take(&*s, 10, at(8)).await.is_empty());
}

/// One ack batch mixing completions (with and without results), a failure and a stale fence:
/// each job gets its own outcome and result, and the counters and metrics see every one.
pub async fn ack_mixed_batch_keeps_each_outcome(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..4 {
        put(&*s, job("t", &format!("{{\"i\":{i}}}")), now()).await;
    }
    let claimed = take(&*s, 4, now()).await;
    assert_eq!(claimed.len(), 4);
    let stale = Fence { attempt: claimed[3].fence.attempt + 1, ..claimed[3].fence };
    let mk =
        |i: usize, kind: AckKind| Ack { job_id: claimed[i].job.id.clone(), fence: claimed[i].fence, kind };
    let acks = vec![
        mk(0, AckKind::Complete { result: Some(vec![0, 255, 7]) }),
        mk(1, AckKind::Complete { result: None }),
        mk(2, AckKind::Fail { error: "boom".into(), retryable: false }),
        Ack {
            job_id: claimed[3].job.id.clone(),
            fence: stale,
            kind: AckKind::Complete { result: Some(vec![1]) },
        },
    ];
    let out = s.ack(AckRequest { acks, now: at(5) }).await.unwrap();
    assert_eq!(
        out,
        vec![
            AckOutcome::Acknowledged,
            AckOutcome::Acknowledged,
            AckOutcome::Acknowledged,
            AckOutcome::Superseded
        ]
    );
    let j0 = get(&*s, &claimed[0].job.id).await;
    assert_eq!(
        (j0.status, j0.result.as_deref(), j0.finished_at),
        (JobStatus::Completed, Some(&[0u8, 255, 7][..]), Some(at(5)))
    );
    assert_eq!(j0.worker_id, None);
    let j1 = get(&*s, &claimed[1].job.id).await;
    assert_eq!((j1.status, j1.result.as_deref()), (JobStatus::Completed, None));
    assert_ne!(get(&*s, &claimed[2].job.id).await.status, JobStatus::Completed);
    let j3 = get(&*s, &claimed[3].job.id).await;
    assert_eq!((j3.status, j3.result.as_deref()), (JobStatus::Running, None));
    let stats = s.stats(None).await.unwrap();
    assert_eq!((stats.completed, stats.running), (2, 1));
}

/// A retryable failure with budget left goes back to pending at the backoff time.
pub async fn ack_fail_retries_with_backoff(h: &dyn Harness) {
    let s = open(h, "default").await;
    let backoff = Backoff { base_ms: 10_000, max_ms: 60_000 };
    let c =
        start(&*s, job_with("t", "", EnqueueOptions { backoff: Some(backoff), ..Default::default() }), now())
            .await;
    fail(&*s, &c, "flaky", true, at(100)).await;
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.attempt, 1);
    assert_eq!(j.run_at, at(100) + backoff.delay_ms(c.job.id.as_str(), 1) as i64);
    assert!(j.run_at >= at(100) + 7_500);
    assert_eq!(j.last_error.as_deref(), Some("flaky"));
    assert_eq!(j.finished_at, None);
    assert!(take(&*s, 10, j.run_at - 1).await.is_empty());
    assert_eq!(take(&*s, 10, j.run_at).await.len(), 1);
}

/// Each failed attempt appends a `job_errors` row, oldest first.
pub async fn ack_fail_appends_job_errors(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { backoff: Some(Backoff::NONE), ..Default::default() };
    let c1 = start(&*s, job_with("t", "", opts), now()).await;
    fail(&*s, &c1, "first", true, at(1)).await;
    let c2 = take(&*s, 1, at(2)).await.remove(0);
    fail(&*s, &c2, "second", true, at(3)).await;
    let errs = s.job_errors(&c1.job.id).await.unwrap();
    assert_eq!(errs.len(), 2);
    assert_eq!((errs[0].attempt, errs[0].error.as_str(), errs[0].failed_at), (1, "first", at(1)));
    assert_eq!((errs[1].attempt, errs[1].error.as_str(), errs[1].failed_at), (2, "second", at(3)));
    assert!(errs.iter().all(|e| e.job_id == c1.job.id.as_str()));
}

/// When the budget is spent the job is dead and a dead-letter row records it.
pub async fn ack_exhausted_retries_dead_letter(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { max_retries: Some(1), backoff: Some(Backoff::NONE), ..Default::default() };
    let c1 = start(&*s, job_with("resize", "img", opts), now()).await;
    fail(&*s, &c1, "one", true, at(1)).await;
    let c2 = take(&*s, 1, at(2)).await.remove(0);
    fail(&*s, &c2, "two", true, at(3)).await;
    let j = get(&*s, &c1.job.id).await;
    assert_eq!(j.status, JobStatus::Dead);
    assert_eq!(j.finished_at, Some(at(3)));
    let dead = dead(&*s).await;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].original_job_id, c1.job.id.as_str());
    assert_eq!(dead[0].task_name, "resize");
    assert_eq!(dead[0].queue, "default");
    assert_eq!(dead[0].payload, b"img");
    assert_eq!(dead[0].error.as_deref(), Some("two"));
    assert_eq!(dead[0].retry_count, 2);
    assert_eq!(dead[0].failed_at, at(3));
    assert!(take(&*s, 10, at(1_000_000)).await.is_empty());
}

/// A non-retryable failure is `failed` at once, records its error and writes no dead letter.
pub async fn ack_non_retryable_fails_without_dead_letter(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    fail(&*s, &c, "bad input", false, at(1)).await;
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Failed);
    assert_eq!(j.last_error.as_deref(), Some("bad input"));
    assert_eq!(j.finished_at, Some(at(1)));
    assert!(dead(&*s).await.is_empty());
    assert_eq!(s.job_errors(&c.job.id).await.unwrap().len(), 1);
}

/// With no retries allowed, one retryable failure dead-letters the job.
pub async fn ack_zero_retries_dies_on_first_failure(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, fragile("t", ""), now()).await;
    fail(&*s, &c, "boom", true, at(1)).await;
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Dead);
    assert_eq!(dead(&*s).await[0].retry_count, 1);
}

/// Suspend parks the job until `until` and gives the attempt back.
pub async fn ack_suspend_gives_attempt_back(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert_eq!(ack(&*s, &c, AckKind::Suspend { until: at(9_000) }, at(1)).await, AckOutcome::Acknowledged);
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Suspended);
    assert_eq!(j.attempt, 0);
    assert_eq!(j.run_at, at(9_000));
    assert_eq!(j.finished_at, None);
    assert!(s.job_errors(&c.job.id).await.unwrap().is_empty());
}

/// Defer returns the job to pending at `until`, gives the attempt back and records why.
pub async fn ack_defer_gives_attempt_back(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let kind = AckKind::Defer { until: at(4_000), reason: "pinned to v2".into() };
    assert_eq!(ack(&*s, &c, kind, at(1)).await, AckOutcome::Acknowledged);
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.attempt, 0);
    assert_eq!(j.run_at, at(4_000));
    assert!(j.last_error.unwrap_or_default().contains("pinned to v2"));
    assert!(take(&*s, 10, at(3_999)).await.is_empty());
    assert_eq!(take(&*s, 10, at(4_000)).await[0].fence.attempt, 1);
}

/// Deferring over and over never spends the retry budget.
pub async fn ack_repeated_defer_never_exhausts_budget(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut c = start(&*s, fragile("t", ""), now()).await;
    for i in 1..=5 {
        let kind = AckKind::Defer { until: at(i * 10), reason: "not mine".into() };
        assert_eq!(ack(&*s, &c, kind, at(i * 10 - 5)).await, AckOutcome::Acknowledged);
        c = take(&*s, 1, at(i * 10)).await.remove(0);
        assert_eq!(c.fence.attempt, 1);
    }
    assert!(dead(&*s).await.is_empty());
}

/// An empty ack batch returns no outcomes.
pub async fn ack_empty_batch_returns_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s.ack(AckRequest { acks: vec![], now: now() }).await.unwrap().is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_ack {
    ($callback:path, $make:path) => {
        $callback!($make;
            ack::ack_complete_stores_result,
            ack::ack_mixed_batch_keeps_each_outcome,
            ack::ack_fail_retries_with_backoff,
            ack::ack_fail_appends_job_errors,
            ack::ack_exhausted_retries_dead_letter,
            ack::ack_non_retryable_fails_without_dead_letter,
            ack::ack_zero_retries_dies_on_first_failure,
            ack::ack_suspend_gives_attempt_back,
            ack::ack_defer_gives_attempt_back,
            ack::ack_repeated_defer_never_exhausts_budget,
            ack::ack_empty_batch_returns_nothing,
        );
    };
}
