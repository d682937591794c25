//! Requeue: an operator forces a running job back to pending, keeping its budget.

use flexiq_core::store::{AckKind, RequestCancelRequest, RequeueRequest};
use flexiq_core::{AckOutcome, JobId, JobStatus};

use crate::fixtures::{ack, at, finish, get, job, now, open, put, start, take};
use crate::Harness;

/// A running job goes back to pending with its attempt given back, claimable at once.
pub async fn requeue_running_returns_to_pending(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(s.requeue(RequeueRequest { id: c.job.id.clone(), now: at(10) }).await.unwrap());
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.attempt, 0, "retry budget preserved");
    assert_eq!(j.run_at, at(10));
    let again = take(&*s, 1, at(10)).await.remove(0);
    assert_eq!(again.job.id, c.job.id);
    assert_eq!(again.fence.attempt, 1);
}

/// Requeue clears a pending cancel request.
pub async fn requeue_clears_cancel_request(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(s.request_cancel(RequestCancelRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    assert!(s.requeue(RequeueRequest { id: c.job.id.clone(), now: at(2) }).await.unwrap());
    assert!(!s.is_cancel_requested(&c.job.id).await.unwrap());
    assert!(!get(&*s, &c.job.id).await.cancel_requested);
}

/// The requeued attempt's fence is `Superseded`.
pub async fn requeue_old_fence_superseded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(s.requeue(RequeueRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    assert_eq!(ack(&*s, &c, AckKind::Complete { result: None }, at(2)).await, AckOutcome::Superseded);
    assert_eq!(get(&*s, &c.job.id).await.status, JobStatus::Pending);
}

/// Requeue of an unknown job is false, not an error.
pub async fn requeue_unknown_is_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(!s.requeue(RequeueRequest { id: JobId::new(), now: now() }).await.unwrap());
}

/// Requeue of a job that is not running (pending or completed) is false and changes nothing.
pub async fn requeue_not_running_is_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    let done = finish(&*s, job("t", ""), now()).await;
    let pending = put(&*s, job("t", ""), now()).await;
    assert!(!s.requeue(RequeueRequest { id: pending.clone(), now: at(1) }).await.unwrap());
    assert_eq!(get(&*s, &pending).await.run_at, now());
    assert!(!s.requeue(RequeueRequest { id: done.clone(), now: at(1) }).await.unwrap());
    assert_eq!(get(&*s, &done).await.status, JobStatus::Completed);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_requeue {
    ($callback:path, $make:path) => {
        $callback!($make;
            requeue::requeue_running_returns_to_pending,
            requeue::requeue_clears_cancel_request,
            requeue::requeue_old_fence_superseded,
            requeue::requeue_unknown_is_false,
            requeue::requeue_not_running_is_false,
        );
    };
}
