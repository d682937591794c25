//! Stalled recovery: a job whose lease lapsed goes back to pending without spending an
//! attempt and counts a stall; past its queue's `max_stalled_count` (default 1) it dies with
//! `STALLED` instead of cycling. The count is on the job and a dead-letter retry starts it over.

use flexiq_core::store::{
    QueueConfig, ReleaseStaleRequest, RetryDeadRequest, SetMaxStalledRequest, DEFAULT_MAX_STALLED_COUNT,
    MAX_STALLED_LIMIT,
};
use flexiq_core::transition::{LEASE_HEARTBEAT_LOST, STALLED};
use flexiq_core::{ErrorKind, JobId, JobStatus, Store};

use crate::fixtures::{
    assert_kind, at, claim_id, dead, fragile, get, ids, job_after, job_in, open, put, report_started, start,
    take_from,
};
use crate::Harness;

const SLOW: &str = "stall-slow";
const PLAIN: &str = "stall-plain";

async fn stall(s: &dyn Store, at_ms: i64) -> Vec<JobId> {
    s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at_ms }).await.unwrap()
}

async fn budget(s: &dyn Store, queue: &str, max: Option<u32>) {
    s.set_max_stalled(SetMaxStalledRequest { queue: queue.into(), max }).await.unwrap();
}

/// The first stall gives the attempt back and counts; with the default budget of 1 the second
/// one fails the job with `STALLED`, dead-lettered, and its dependents are cancelled.
pub async fn stalled_job_fails_after_its_budget(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(DEFAULT_MAX_STALLED_COUNT, 1);
    let c = start(&*s, fragile("t", ""), at(0)).await;
    let after = put(&*s, job_after("t", &[&c.job.id]), at(0)).await;
    assert_eq!(stall(&*s, at(2_000)).await, vec![c.job.id.clone()]);
    let j = get(&*s, &c.job.id).await;
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 1), "stalls spend no attempt");
    assert!(
        j.last_error.as_deref().unwrap_or_default().starts_with(LEASE_HEARTBEAT_LOST),
        "{:?}",
        j.last_error
    );
    let again = claim_id(&*s, &c.job.id, at(2_001)).await;
    assert_eq!((again.fence.attempt, again.fence.claim_seq), (1, 2));
    assert_eq!(stall(&*s, at(4_000)).await, vec![c.job.id.clone()]);
    let j = get(&*s, &c.job.id).await;
    assert_eq!((j.status, j.stall_count, j.finished_at), (JobStatus::Dead, 2, Some(at(4_000))));
    let msg = j.last_error.unwrap_or_default();
    assert!(msg.starts_with(STALLED) && msg.contains(c.job.id.as_str()), "{msg}");
    let letters = dead(&*s).await;
    assert_eq!(letters.len(), 1);
    assert!(letters[0].error.as_deref().unwrap_or_default().starts_with(STALLED));
    assert_eq!(get(&*s, &after).await.status, JobStatus::Cancelled, "its dependents do not wait forever");
    let errs = s.job_errors(&c.job.id).await.unwrap();
    assert_eq!(errs.len(), 2, "each stall is in the job's error history: {errs:?}");
}

/// Each queue has its own budget; clearing it restores the default, and 0 fails the first stall.
pub async fn stalled_budget_is_per_queue(h: &dyn Harness) {
    let s = open(h, "default").await;
    budget(&*s, SLOW, Some(3)).await;
    assert_eq!(s.queue_config(SLOW).await.unwrap().max_stalled_count, Some(3));
    assert_eq!(s.queue_config(SLOW).await.unwrap().stall_budget(), 3);
    let slow = start(&*s, job_in(SLOW, "t"), at(0)).await;
    let plain = start(&*s, job_in(PLAIN, "t"), at(0)).await;
    let mut t = 0;
    for round in 1..=3 {
        t += 2_000;
        let released = stall(&*s, at(t)).await;
        assert!(released.contains(&slow.job.id), "round {round}");
        assert_eq!(get(&*s, &slow.job.id).await.status, JobStatus::Pending, "round {round}");
        let again = take_from(&*s, &[SLOW], 1, at(t + 1)).await;
        assert_eq!(ids(&again), vec![slow.job.id.clone()]);
        report_started(&*s, &again[0], at(t + 1)).await;
        if get(&*s, &plain.job.id).await.status == JobStatus::Pending {
            let again = take_from(&*s, &[PLAIN], 1, at(t + 1)).await;
            assert_eq!(again.len(), 1);
            report_started(&*s, &again[0], at(t + 1)).await;
        }
    }
    assert_eq!(get(&*s, &plain.job.id).await.status, JobStatus::Dead, "the default budget is 1");
    stall(&*s, at(t + 2_000)).await;
    let j = get(&*s, &slow.job.id).await;
    assert_eq!((j.status, j.stall_count), (JobStatus::Dead, 4));
    budget(&*s, SLOW, Some(0)).await;
    let zero = start(&*s, job_in(SLOW, "t"), at(t + 3_000)).await;
    stall(&*s, at(t + 5_000)).await;
    assert_eq!(get(&*s, &zero.job.id).await.status, JobStatus::Dead, "a budget of 0 fails the first stall");
    budget(&*s, SLOW, None).await;
    assert_eq!(s.queue_config(SLOW).await.unwrap(), QueueConfig::default());
}

/// A dead-letter retry of a stalled-out job starts its stall count over.
pub async fn stalled_count_starts_over_on_retry(h: &dyn Harness) {
    let s = open(h, "default").await;
    budget(&*s, SLOW, Some(0)).await;
    let c = start(&*s, job_in(SLOW, "t"), at(0)).await;
    stall(&*s, at(2_000)).await;
    assert_eq!(get(&*s, &c.job.id).await.stall_count, 1);
    let letter = dead(&*s).await.remove(0);
    let id = s.retry_dead(RetryDeadRequest { dead_id: letter.id.clone(), now: at(3_000) }).await.unwrap();
    let j = get(&*s, &id).await;
    assert_eq!((j.status, j.stall_count), (JobStatus::Pending, 0));
}

/// A bad budget or queue name is refused and changes nothing.
pub async fn stalled_budget_bad_input(h: &dyn Harness) {
    let s = open(h, "default").await;
    let over = s
        .set_max_stalled(SetMaxStalledRequest { queue: SLOW.into(), max: Some(MAX_STALLED_LIMIT + 1) })
        .await;
    assert_kind(over, ErrorKind::InvalidArgument);
    let blank = s.set_max_stalled(SetMaxStalledRequest { queue: String::new(), max: Some(2) }).await;
    assert_kind(blank, ErrorKind::InvalidArgument);
    assert_eq!(s.queue_config(SLOW).await.unwrap(), QueueConfig::default());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_stalled {
    ($callback:path, $make:path) => {
        $callback!($make;
            stalled::stalled_job_fails_after_its_budget,
            stalled::stalled_budget_is_per_queue,
            stalled::stalled_count_starts_over_on_retry,
            stalled::stalled_budget_bad_input,
        );
    };
}
