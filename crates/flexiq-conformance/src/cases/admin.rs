//! Queue administration: clean by status and age, drain, obliterate in pages, retry finished
//! jobs, and the rate-limit window. Every removal takes the job's history with it and frees
//! the jobs waiting on it; nothing outside the named queue is touched.

use flexiq_core::store::{
    AckKind, AppendLogRequest, DrainRequest, QueueConfig, RateLimitTtlRequest, SetConcurrencyRequest,
    SetRateLimitRequest,
};
use flexiq_core::{EnqueueOptions, ErrorKind, JobStatus, RateLimit};

use super::admin_kit::{clean, obliterate, queue_stats, retry, OTHER, Q};
use super::workflow_kit::assert_invalid_naming;
use crate::fixtures::{
    ack, assert_kind, at, claim_id, complete, dead, fail, fragile, get, job_with, now, open, put, put_all,
    start, take_from,
};
use crate::Harness;

fn in_q(task: &str) -> flexiq_core::NewJob {
    job_with(task, "p", EnqueueOptions { queue: Some(Q.into()), ..Default::default() })
}

fn in_q_with(task: &str, opts: EnqueueOptions) -> flexiq_core::NewJob {
    job_with(task, "p", EnqueueOptions { queue: Some(Q.into()), ..opts })
}

fn in_other(task: &str) -> flexiq_core::NewJob {
    job_with(task, "p", EnqueueOptions { queue: Some(OTHER.into()), ..Default::default() })
}

/// `clean` removes jobs of one status finished at least `grace_ms` ago, oldest first, up to
/// the limit, and only in the named queue.
pub async fn admin_clean_removes_old_jobs_of_one_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut done = Vec::new();
    for t in [0, 1_000, 2_000] {
        let c = start(&*s, in_q("t"), at(t)).await;
        complete(&*s, &c, None, at(t)).await;
        done.push(c.job.id);
    }
    let elsewhere = start(&*s, in_other("t"), at(0)).await;
    complete(&*s, &elsewhere, None, at(0)).await;
    let removed = s.clean(clean(JobStatus::Completed, 1_000, 1, at(2_500))).await.unwrap();
    assert_eq!(removed, vec![done[0].clone()], "oldest first, up to the limit");
    let removed = s.clean(clean(JobStatus::Completed, 1_000, 10, at(2_500))).await.unwrap();
    assert_eq!(removed, vec![done[1].clone()], "only jobs finished at least 1,000 ms ago");
    assert!(s.get(&done[0]).await.unwrap().is_none() && s.get(&done[1]).await.unwrap().is_none());
    assert_eq!(get(&*s, &done[2]).await.status, JobStatus::Completed);
    assert_eq!(get(&*s, &elsewhere.job.id).await.status, JobStatus::Completed, "another queue is untouched");
    assert_eq!(queue_stats(&*s, Q).await.completed, 1);
    // Unfinished statuses age from creation.
    let old = put(&*s, in_q("t"), at(0)).await;
    let young = put(&*s, in_q("t"), at(5_000)).await;
    let removed = s.clean(clean(JobStatus::Pending, 1_000, 10, at(5_500))).await.unwrap();
    assert_eq!(removed, vec![old]);
    assert_eq!(get(&*s, &young).await.status, JobStatus::Pending);
    assert_eq!(queue_stats(&*s, Q).await.pending, 1);
}

/// A cleaned job takes its logs, errors and dead-letter entry with it, and the jobs waiting on
/// it start as if it had never been a dependency.
pub async fn admin_clean_takes_history_and_frees_dependents(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, in_q_with("t", EnqueueOptions { max_retries: Some(0), ..Default::default() }), at(0))
        .await;
    let log =
        AppendLogRequest { id: c.job.id.clone(), level: "info".into(), message: "m".into(), now: at(0) };
    s.append_log(log).await.unwrap();
    fail(&*s, &c, "boom", true, at(1)).await;
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Dead);
    let removed = s.clean(clean(JobStatus::Dead, 0, 10, at(2))).await.unwrap();
    assert_eq!(removed, vec![c.job.id.clone()]);
    assert!(s.get(&c.job.id).await.unwrap().is_none());
    assert!(dead(&*s).await.is_empty(), "its dead-letter entry went with it");
    assert!(s.job_logs(&c.job.id).await.unwrap_or_default().is_empty(), "its logs went with it");
    assert!(s.job_errors(&c.job.id).await.unwrap_or_default().is_empty(), "its errors went with it");
    // A pending dependency removed: its dependent starts.
    let dep = put(&*s, in_q("dep"), at(3)).await;
    let opts = EnqueueOptions { depends_on: vec![dep.to_string()], ..Default::default() };
    let waiter = put(&*s, in_q_with("waiter", opts), at(3)).await;
    assert_eq!(get(&*s, &waiter).await.status, JobStatus::Waiting);
    assert_eq!(s.clean(clean(JobStatus::Pending, 0, 10, at(4))).await.unwrap(), vec![dep]);
    assert_eq!(get(&*s, &waiter).await.status, JobStatus::Pending, "no dependency is left to wait for");
    assert_eq!(claim_id(&*s, &waiter, at(5)).await.job.id, waiter);
}

/// A clean of running jobs, a limit out of range or a bad queue name is `InvalidArgument`
/// naming it, and nothing is removed.
pub async fn admin_clean_bad_input_removes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    start(&*s, in_q("t"), at(0)).await;
    put(&*s, in_q("t"), at(0)).await;
    assert_invalid_naming(s.clean(clean(JobStatus::Running, 0, 10, at(1))).await, "running");
    assert_invalid_naming(s.clean(clean(JobStatus::Pending, 0, 0, at(1))).await, "limit");
    assert_invalid_naming(s.clean(clean(JobStatus::Pending, 0, 10_001, at(1))).await, "limit");
    let mut bad = clean(JobStatus::Pending, 0, 10, at(1));
    bad.queue = String::new();
    assert_invalid_naming(s.clean(bad).await, "queue name");
    let st = queue_stats(&*s, Q).await;
    assert_eq!((st.pending, st.running), (1, 1));
}

/// `drain` removes the queue's due pending jobs, and with `include_delayed` the delayed ones;
/// running, waiting and finished jobs and other queues stay.
pub async fn admin_drain_removes_waiting_work(h: &dyn Harness) {
    let s = open(h, "default").await;
    let running = start(&*s, in_q("t"), at(0)).await;
    let due = put_all(&*s, vec![in_q("t"), in_q("t")], at(0)).await;
    let later =
        put(&*s, in_q_with("t", EnqueueOptions { run_at: Some(at(60_000)), ..Default::default() }), at(0))
            .await;
    let opts = EnqueueOptions { depends_on: vec![running.job.id.to_string()], ..Default::default() };
    let waiting = put(&*s, in_q_with("t", opts), at(0)).await;
    let other = put(&*s, in_other("t"), at(0)).await;
    let n = s.drain(DrainRequest { queue: Q.into(), include_delayed: false, now: at(1) }).await.unwrap();
    assert_eq!(n, 2);
    for id in &due {
        assert!(s.get(id).await.unwrap().is_none(), "due job {id} drained");
    }
    assert_eq!(get(&*s, &later).await.status, JobStatus::Pending, "a delayed job stays");
    let n = s.drain(DrainRequest { queue: Q.into(), include_delayed: true, now: at(2) }).await.unwrap();
    assert_eq!(n, 1);
    assert!(s.get(&later).await.unwrap().is_none());
    assert_eq!(get(&*s, &running.job.id).await.status, JobStatus::Running);
    assert_eq!(get(&*s, &waiting).await.status, JobStatus::Waiting);
    assert_eq!(get(&*s, &other).await.status, JobStatus::Pending);
    let st = queue_stats(&*s, Q).await;
    assert_eq!((st.pending, st.running, st.waiting), (0, 1, 1));
    let n = s.drain(DrainRequest { queue: Q.into(), include_delayed: true, now: at(3) }).await.unwrap();
    assert_eq!(n, 0, "nothing left to drain");
}

/// `obliterate` in pages of 100 removes every job of the queue whatever its status (with its
/// dead letters), then its controls and counts: 0 left means no trace of the queue.
pub async fn admin_obliterate_in_pages_leaves_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, in_q("t"), at(0)).await;
    complete(&*s, &c, None, at(0)).await;
    let d = start(&*s, in_q_with("t", EnqueueOptions { max_retries: Some(0), ..Default::default() }), at(0))
        .await;
    fail(&*s, &d, "boom", true, at(0)).await;
    let ids = put_all(&*s, (0..250).map(|_| in_q("t")).collect(), at(1)).await;
    let keep = put(&*s, in_other("t"), at(0)).await;
    s.pause(Q).await.unwrap();
    s.set_rate_limit(SetRateLimitRequest { queue: Q.into(), limit: Some(RateLimit::parse("5/s").unwrap()) })
        .await
        .unwrap();
    s.set_concurrency(SetConcurrencyRequest { queue: Q.into(), max: Some(3) }).await.unwrap();
    let mut left = Vec::new();
    loop {
        let n = s.obliterate(obliterate(false, 100, at(3))).await.unwrap();
        left.push(n);
        if n == 0 {
            break;
        }
        assert!(left.len() < 10, "obliterate does not finish: {left:?}");
    }
    assert_eq!(left, vec![152, 52, 0]);
    for id in ids.iter().chain([&c.job.id, &d.job.id]) {
        assert!(s.get(id).await.unwrap().is_none(), "job {id} is gone");
    }
    assert!(dead(&*s).await.is_empty(), "the queue's dead letters are gone");
    assert_eq!(queue_stats(&*s, Q).await.total(), 0);
    assert!(!s.stats_by_queue().await.unwrap().contains_key(Q), "the queue has no counts left");
    assert_eq!(s.queue_config(Q).await.unwrap(), QueueConfig::default(), "its controls are gone");
    assert!(!s.paused_queues().await.unwrap().contains(&Q.to_string()));
    assert_eq!(get(&*s, &keep).await.status, JobStatus::Pending, "another queue is untouched");
    assert_eq!(
        s.obliterate(obliterate(false, 100, at(4))).await.unwrap(),
        0,
        "an empty queue is done at once"
    );
}

/// Without `force` a queue with running jobs is refused with `Conflict` and nothing goes; with
/// it the running job goes too and its late ack is superseded.
pub async fn admin_obliterate_refuses_running_without_force(h: &dyn Harness) {
    let s = open(h, "default").await;
    let running = start(&*s, in_q("t"), at(0)).await;
    put(&*s, in_q("t"), at(0)).await;
    let e = s.obliterate(obliterate(false, 100, at(1))).await.expect_err("running jobs refuse obliterate");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains(Q), "the error names the queue: {e}");
    let st = queue_stats(&*s, Q).await;
    assert_eq!((st.pending, st.running), (1, 1), "nothing removed");
    assert_eq!(s.obliterate(obliterate(true, 100, at(2))).await.unwrap(), 0);
    assert!(s.get(&running.job.id).await.unwrap().is_none());
    let late = ack(&*s, &running, AckKind::Complete { result: None }, at(3)).await;
    assert_eq!(late, flexiq_core::AckOutcome::Superseded);
    assert_eq!(queue_stats(&*s, Q).await.total(), 0, "the late ack wrote nothing");
}

/// `retry_jobs` moves finished jobs of one status back to pending in pages: same id, attempt
/// 0, no result or error; dead ones leave the dead-letter queue; 0 when none are left.
pub async fn admin_retry_jobs_moves_finished_jobs_back(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut killed = Vec::new();
    for t in 0..3 {
        let c =
            start(&*s, in_q_with("t", EnqueueOptions { max_retries: Some(0), ..Default::default() }), at(t))
                .await;
        fail(&*s, &c, "boom", true, at(t)).await;
        killed.push(c.job.id);
    }
    let elsewhere = start(&*s, fragile("t", "p"), at(5)).await;
    fail(&*s, &elsewhere, "boom", true, at(5)).await;
    assert_eq!(s.retry_jobs(retry(JobStatus::Dead, 2, at(10))).await.unwrap(), 2);
    for id in &killed[..2] {
        let j = get(&*s, id).await;
        assert_eq!((j.status, j.attempt, j.last_error.as_deref()), (JobStatus::Pending, 0, None), "job {id}");
        assert_eq!(j.run_at, at(10));
    }
    assert_eq!(get(&*s, &killed[2]).await.status, JobStatus::Dead, "oldest first, up to the count");
    assert_eq!(s.retry_jobs(retry(JobStatus::Dead, 2, at(11))).await.unwrap(), 1);
    assert_eq!(s.retry_jobs(retry(JobStatus::Dead, 2, at(12))).await.unwrap(), 0, "none left");
    let left: Vec<String> = dead(&*s).await.into_iter().map(|d| d.original_job_id).collect();
    assert_eq!(left, vec![elsewhere.job.id.to_string()], "only the other queue's entry is left");
    let again = take_from(&*s, &[Q], 10, at(13)).await;
    assert_eq!(again.len(), 3);
    for c in &again {
        assert_eq!(c.fence.attempt, 1, "a fresh budget for job {}", c.job.id);
        complete(&*s, c, Some(b"r"), at(14)).await;
    }
    assert_eq!(s.retry_jobs(retry(JobStatus::Completed, 10, at(15))).await.unwrap(), 3);
    for c in &again {
        let j = get(&*s, &c.job.id).await;
        assert_eq!((j.status, j.result.as_deref(), j.finished_at), (JobStatus::Pending, None, None));
    }
    let st = queue_stats(&*s, Q).await;
    assert_eq!((st.pending, st.completed, st.dead), (3, 0, 0));
    assert_invalid_naming(s.retry_jobs(retry(JobStatus::Pending, 10, at(16))).await, "pending");
    assert_invalid_naming(s.retry_jobs(retry(JobStatus::Dead, 0, at(16))).await, "count");
}

/// `rate_limit_ttl` is 0 without a limit or with a claim free, else the wait for the next one.
pub async fn admin_rate_limit_ttl_counts_down(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ttl = |t: i64| RateLimitTtlRequest { queue: Q.into(), now: at(t) };
    assert_eq!(s.rate_limit_ttl(ttl(0)).await.unwrap(), 0, "no limit");
    s.set_rate_limit(SetRateLimitRequest { queue: Q.into(), limit: Some(RateLimit::parse("1/s").unwrap()) })
        .await
        .unwrap();
    put_all(&*s, vec![in_q("t"), in_q("t")], at(0)).await;
    assert_eq!(s.rate_limit_ttl(ttl(0)).await.unwrap(), 0, "a claim is free");
    assert_eq!(take_from(&*s, &[Q], 5, at(0)).await.len(), 1);
    let wait = s.rate_limit_ttl(ttl(100)).await.unwrap();
    assert!((899..=900).contains(&wait), "about 900 ms to the next claim, got {wait}");
    assert_eq!(s.rate_limit_ttl(ttl(1_000)).await.unwrap(), 0, "refilled");
    assert_eq!(take_from(&*s, &[Q], 5, at(1_000)).await.len(), 1);
    assert_invalid_naming(
        s.rate_limit_ttl(RateLimitTtlRequest { queue: String::new(), now: now() }).await,
        "queue name",
    );
}

/// On a store where every removal went through the store, nothing is orphaned.
pub async fn admin_remove_orphans_finds_none_after_removals(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, in_q("t"), at(0)).await;
    let log =
        AppendLogRequest { id: c.job.id.clone(), level: "info".into(), message: "m".into(), now: at(0) };
    s.append_log(log).await.unwrap();
    complete(&*s, &c, None, at(1)).await;
    put_all(&*s, (0..5).map(|_| in_q("t")).collect(), at(1)).await;
    s.clean(clean(JobStatus::Completed, 0, 10, at(2))).await.unwrap();
    s.drain(DrainRequest { queue: Q.into(), include_delayed: true, now: at(2) }).await.unwrap();
    assert_eq!(s.remove_orphans().await.unwrap(), 0);
    assert_kind(s.obliterate(obliterate(false, 0, at(3))).await, ErrorKind::InvalidArgument);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_admin {
    ($callback:path, $make:path) => {
        $callback!($make;
            admin::admin_clean_removes_old_jobs_of_one_status,
            admin::admin_clean_takes_history_and_frees_dependents,
            admin::admin_clean_bad_input_removes_nothing,
            admin::admin_drain_removes_waiting_work,
            admin::admin_obliterate_in_pages_leaves_nothing,
            admin::admin_obliterate_refuses_running_without_force,
            admin::admin_retry_jobs_moves_finished_jobs_back,
            admin::admin_rate_limit_ttl_counts_down,
            admin::admin_remove_orphans_finds_none_after_removals,
        );
    };
}
