//! Purges: `purge_queue` cancels a backlog (rows stay); `purge_completed` deletes old rows.

use flexiq_core::store::{AckKind, CancelRequest, PurgeCompletedRequest, PurgeQueueRequest};
use flexiq_core::{EnqueueOptions, JobStatus};

use crate::fixtures::{
    ack, at, fail, finish, get, job_after, job_in, job_with, now, open, put, start, status, take,
};
use crate::Harness;

/// Purging a queue cancels its pending, delayed, waiting and suspended jobs; rows stay.
pub async fn purge_queue_cancels_backlog(h: &dyn Harness) {
    let s = open(h, "default").await;
    let sus = start(&*s, job_in("q", "t"), now()).await;
    ack(&*s, &sus, AckKind::Suspend { until: at(100_000) }, now()).await;
    let running = start(&*s, job_in("q", "t"), now()).await;
    let pending = put(&*s, job_in("q", "t"), now()).await;
    let delayed_opts =
        EnqueueOptions { queue: Some("q".into()), delay_ms: Some(60_000), ..Default::default() };
    let delayed = put(&*s, job_with("t", "", delayed_opts), now()).await;
    let mut w = job_after("t", &[&running.job.id]);
    w.queue = "q".into();
    let waiting = put(&*s, w, now()).await;
    assert_eq!(s.purge_queue(PurgeQueueRequest { queue: "q".into(), now: at(1) }).await.unwrap(), 4);
    for id in [&pending, &delayed, &waiting, &sus.job.id] {
        let j = get(&*s, id).await;
        assert_eq!(j.status, JobStatus::Cancelled, "job {id}");
        assert_eq!(j.finished_at, Some(at(1)));
    }
    assert_eq!(status(&*s, &running.job.id).await, JobStatus::Running);
}

/// Running jobs are untouched by a purge and can still complete.
pub async fn purge_queue_leaves_running_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job_in("q", "t"), now()).await;
    assert_eq!(s.purge_queue(PurgeQueueRequest { queue: "q".into(), now: at(1) }).await.unwrap(), 0);
    crate::fixtures::complete(&*s, &c, None, at(2)).await;
    assert_eq!(status(&*s, &c.job.id).await, JobStatus::Completed);
}

/// Purging one queue leaves other queues alone.
pub async fn purge_queue_other_queues_untouched(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job_in("q", "t"), now()).await;
    let other = put(&*s, job_in("other", "t"), now()).await;
    assert_eq!(s.purge_queue(PurgeQueueRequest { queue: "q".into(), now: at(1) }).await.unwrap(), 1);
    assert_eq!(status(&*s, &other).await, JobStatus::Pending);
    assert_eq!(s.count_pending("q").await.unwrap(), 0);
    assert!(take(&*s, 10, at(2)).await.iter().all(|c| c.job.queue == "other"));
}

/// Purging an empty or unknown queue cancels nothing.
pub async fn purge_queue_empty_returns_zero(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(
        s.purge_queue(PurgeQueueRequest { queue: "nothing-here".into(), now: now() }).await.unwrap(),
        0
    );
}

/// `purge_completed` deletes completed jobs finished before the cutoff and returns how many.
pub async fn purge_completed_by_age(h: &dyn Harness) {
    let s = open(h, "default").await;
    let old = finish(&*s, job_in("q", "t"), at(1_000)).await;
    let new = finish(&*s, job_in("q", "t"), at(3_000)).await;
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: at(2_000) }).await.unwrap(), 1);
    assert!(s.get(&old).await.unwrap().is_none());
    assert_eq!(status(&*s, &new).await, JobStatus::Completed);
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: at(2_000) }).await.unwrap(), 0);
}

/// `purge_completed` never deletes failed, dead, cancelled or live jobs.
pub async fn purge_completed_only_completed(h: &dyn Harness) {
    let s = open(h, "default").await;
    let f = start(&*s, job_in("q", "t"), now()).await;
    fail(&*s, &f, "no", false, at(1)).await;
    let d = crate::fixtures::kill(&*s, "t", "boom", at(2)).await;
    let c = put(&*s, job_in("q", "t"), at(3)).await;
    s.cancel(CancelRequest { id: c.clone(), now: at(3) }).await.unwrap();
    let p = put(&*s, job_in("q", "t"), at(4)).await;
    assert_eq!(s.purge_completed(PurgeCompletedRequest { cutoff_ms: at(1_000_000) }).await.unwrap(), 0);
    for id in [&f.job.id, &d, &c, &p] {
        assert!(s.get(id).await.unwrap().is_some(), "job {id} was deleted");
    }
}

/// Jobs cancelled by a purge cancel their dependents, even on other queues.
pub async fn purge_queue_cancels_dependents_elsewhere(h: &dyn Harness) {
    let s = open(h, "default").await;
    let upstream = put(&*s, job_in("q", "t"), now()).await;
    let mut d = job_after("t", &[&upstream]);
    d.queue = "other".into();
    let downstream = put(&*s, d, now()).await;
    assert_eq!(s.purge_queue(PurgeQueueRequest { queue: "q".into(), now: at(1) }).await.unwrap(), 1);
    assert_eq!(status(&*s, &downstream).await, JobStatus::Cancelled);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_purge {
    ($callback:path, $make:path) => {
        $callback!($make;
            purge::purge_queue_cancels_backlog,
            purge::purge_queue_leaves_running_jobs,
            purge::purge_queue_other_queues_untouched,
            purge::purge_queue_empty_returns_zero,
            purge::purge_completed_by_age,
            purge::purge_completed_only_completed,
            purge::purge_queue_cancels_dependents_elsewhere,
        );
    };
}
