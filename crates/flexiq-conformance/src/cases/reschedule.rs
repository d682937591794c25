//! Delay and priority control: a new delay, promotion one at a time or a batch at a time, a
//! new priority, and LIFO at enqueue or on a priority change. Only jobs that have not started
//! move; anything else is `Conflict` naming the status, and bad input changes nothing.

use flexiq_core::store::{
    lifo_run_at, ChangeDelayRequest, ChangePriorityRequest, PromoteJobsRequest, PromoteRequest, MAX_PRIORITY,
};
use flexiq_core::{EnqueueOptions, ErrorKind, JobId, JobStatus, NewJob, Store};

use crate::fixtures::{
    assert_kind, at, complete, get, ids, job_after, job_with, open, put, put_all, start, take_from,
};
use crate::Harness;

const Q: &str = "resched";
const OTHER: &str = "resched-other";

fn on(queue: &str, opts: EnqueueOptions) -> NewJob {
    job_with("t", "p", EnqueueOptions { queue: Some(queue.into()), ..opts })
}

fn plain() -> NewJob {
    on(Q, EnqueueOptions::default())
}

fn delayed(ms: u64) -> NewJob {
    on(Q, EnqueueOptions { delay_ms: Some(ms), ..Default::default() })
}

fn lifo() -> NewJob {
    on(Q, EnqueueOptions { lifo: true, ..Default::default() })
}

fn delay(id: &JobId, delay_ms: i64, now: i64) -> ChangeDelayRequest {
    ChangeDelayRequest { job_id: id.clone(), delay_ms, now }
}

fn priority(id: &JobId, priority: i32, lifo: bool, now: i64) -> ChangePriorityRequest {
    ChangePriorityRequest { job_id: id.clone(), priority, lifo, now }
}

async fn order(s: &dyn Store, n: u32, now: i64) -> Vec<JobId> {
    ids(&take_from(s, &[Q], n, now).await)
}

fn conflict_naming<T: std::fmt::Debug>(r: flexiq_core::Result<T>, id: &JobId, status: &str) {
    let e = r.expect_err("a job in the wrong state is refused");
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    let msg = e.to_string();
    assert!(msg.contains(id.as_str()) && msg.contains(status), "{msg}");
}

/// `change_delay` sets `run_at` from now on a pending job, due or delayed.
pub async fn reschedule_change_delay_moves_run_at(h: &dyn Harness) {
    let s = open(h, "default").await;
    let j = put(&*s, plain(), at(0)).await;
    s.change_delay(delay(&j, 5_000, at(100))).await.unwrap();
    assert_eq!(get(&*s, &j).await.run_at, at(5_100));
    assert!(order(&*s, 1, at(5_099)).await.is_empty(), "not due before its new time");
    s.change_delay(delay(&j, 0, at(200))).await.unwrap();
    assert_eq!(get(&*s, &j).await.run_at, at(200));
    assert_eq!(order(&*s, 1, at(200)).await, vec![j.clone()]);
    conflict_naming(s.change_delay(delay(&j, 10, at(300))).await, &j, "running");
    let missing = JobId::at(at(0));
    assert_kind(s.change_delay(delay(&missing, 10, at(300))).await, ErrorKind::NotFound);
}

/// A negative delay is refused before anything changes.
pub async fn reschedule_bad_input_changes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let j = put(&*s, delayed(1_000), at(0)).await;
    assert_kind(s.change_delay(delay(&j, -1, at(10))).await, ErrorKind::InvalidArgument);
    assert_kind(
        s.change_priority(priority(&j, MAX_PRIORITY + 1, false, at(10))).await,
        ErrorKind::InvalidArgument,
    );
    assert_kind(
        s.promote_jobs(PromoteJobsRequest { queue: Q.into(), count: 0, now: at(10) }).await,
        ErrorKind::InvalidArgument,
    );
    let after = get(&*s, &j).await;
    assert_eq!((after.run_at, after.priority), (at(1_000), 0));
    let missing = JobId::at(at(0));
    assert_kind(
        s.promote(PromoteRequest { job_id: missing.clone(), now: at(10) }).await,
        ErrorKind::NotFound,
    );
    assert_kind(s.change_priority(priority(&missing, 1, false, at(10))).await, ErrorKind::NotFound);
}

/// `promote` makes one delayed job due now; a due or running job is refused.
pub async fn reschedule_promote_makes_a_delayed_job_due(h: &dyn Harness) {
    let s = open(h, "default").await;
    let j = put(&*s, delayed(60_000), at(0)).await;
    s.promote(PromoteRequest { job_id: j.clone(), now: at(10) }).await.unwrap();
    assert_eq!(get(&*s, &j).await.run_at, at(10));
    conflict_naming(s.promote(PromoteRequest { job_id: j.clone(), now: at(20) }).await, &j, "not delayed");
    assert_eq!(order(&*s, 1, at(20)).await, vec![j.clone()]);
    conflict_naming(s.promote(PromoteRequest { job_id: j.clone(), now: at(30) }).await, &j, "running");
}

/// `promote_jobs` moves a queue's delayed jobs a batch at a time, soonest first, until 0.
pub async fn reschedule_promote_jobs_in_pages(h: &dyn Harness) {
    let s = open(h, "default").await;
    let jobs: Vec<NewJob> = (0..250u64).map(|i| delayed(10_000 + i)).collect();
    let later = put_all(&*s, jobs, at(0)).await;
    let due = put(&*s, plain(), at(0)).await;
    let elsewhere =
        put(&*s, on(OTHER, EnqueueOptions { delay_ms: Some(10_000), ..Default::default() }), at(0)).await;
    let req = |now| PromoteJobsRequest { queue: Q.into(), count: 100, now };
    assert_eq!(s.promote_jobs(req(at(5))).await.unwrap(), 100);
    assert_eq!(get(&*s, &later[99]).await.run_at, at(5), "soonest due first");
    assert_eq!(get(&*s, &later[100]).await.run_at, at(10_100));
    assert_eq!(s.promote_jobs(req(at(6))).await.unwrap(), 100);
    assert_eq!(s.promote_jobs(req(at(7))).await.unwrap(), 50);
    assert_eq!(s.promote_jobs(req(at(8))).await.unwrap(), 0);
    assert_eq!(get(&*s, &due).await.run_at, at(0), "a due job is not moved");
    assert_eq!(get(&*s, &elsewhere).await.run_at, at(10_000), "another queue is untouched");
    assert_eq!(take_from(&*s, &[Q], 500, at(9)).await.len(), 251);
}

/// `change_priority` reorders pending jobs and applies to waiting ones; a running one is refused.
pub async fn reschedule_change_priority_reorders(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids3 = put_all(&*s, vec![plain(), plain(), plain()], at(0)).await;
    s.change_priority(priority(&ids3[2], 5, false, at(1))).await.unwrap();
    assert_eq!(get(&*s, &ids3[2]).await.priority, 5);
    let first = take_from(&*s, &[Q], 1, at(2)).await.remove(0);
    assert_eq!(first.job.id, ids3[2]);
    conflict_naming(s.change_priority(priority(&ids3[2], 1, false, at(3))).await, &ids3[2], "running");
    complete(&*s, &first, None, at(3)).await;
    conflict_naming(s.change_priority(priority(&ids3[2], 1, false, at(4))).await, &ids3[2], "completed");
    let blocker = put(&*s, on(OTHER, EnqueueOptions::default()), at(4)).await;
    let waiting = put(&*s, job_after("t", &[&blocker]), at(4)).await;
    s.change_priority(priority(&waiting, -MAX_PRIORITY, false, at(5))).await.unwrap();
    let w = get(&*s, &waiting).await;
    assert_eq!((w.status, w.priority), (JobStatus::Waiting, -MAX_PRIORITY));
    assert_eq!(order(&*s, 5, at(6)).await, vec![ids3[0].clone(), ids3[1].clone()]);
}

/// LIFO jobs are claimed newest first, ahead of the FIFO jobs of their priority and behind
/// higher priorities; a priority change can place a due job LIFO, a new delay makes it FIFO.
pub async fn reschedule_lifo_claims_newest_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, plain(), at(0)).await;
    let b = put(&*s, plain(), at(1)).await;
    let c = put(&*s, lifo(), at(2)).await;
    let d = put(&*s, lifo(), at(3)).await;
    let urgent = put(&*s, on(Q, EnqueueOptions { priority: Some(1), ..Default::default() }), at(4)).await;
    assert_eq!(get(&*s, &d).await.run_at, lifo_run_at(at(3)));
    assert_eq!(get(&*s, &d).await.status, JobStatus::Pending);
    s.change_priority(priority(&b, 0, true, at(5))).await.unwrap();
    assert_eq!(order(&*s, 10, at(6)).await, vec![urgent, b, d, c, a]);
    let e = put(&*s, lifo(), at(7)).await;
    s.change_delay(delay(&e, 1_000, at(8))).await.unwrap();
    assert_eq!(get(&*s, &e).await.run_at, at(1_008), "a new delay makes it FIFO");
    conflict_naming(s.change_priority(priority(&e, 0, true, at(9))).await, &e, "delayed");
    s.change_priority(priority(&e, 3, false, at(9))).await.unwrap();
    assert_eq!(order(&*s, 1, at(1_008)).await, vec![e]);
}

/// A LIFO job cannot also be delayed.
pub async fn reschedule_lifo_with_a_delay_is_refused(h: &dyn Harness) {
    let s = open(h, "default").await;
    let bad = NewJob::build(
        "t",
        vec![],
        EnqueueOptions { queue: Some(Q.into()), lifo: true, delay_ms: Some(5), ..Default::default() },
        at(0),
    );
    assert_kind(bad, ErrorKind::InvalidArgument);
    assert!(take_from(&*s, &[Q], 1, at(10)).await.is_empty());
    let ok = start(&*s, lifo(), at(0)).await;
    assert_eq!(ok.job.attempt, 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_reschedule {
    ($callback:path, $make:path) => {
        $callback!($make;
            reschedule::reschedule_change_delay_moves_run_at,
            reschedule::reschedule_bad_input_changes_nothing,
            reschedule::reschedule_promote_makes_a_delayed_job_due,
            reschedule::reschedule_promote_jobs_in_pages,
            reschedule::reschedule_change_priority_reorders,
            reschedule::reschedule_lifo_claims_newest_first,
            reschedule::reschedule_lifo_with_a_delay_is_refused,
        );
    };
}
