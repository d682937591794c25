//! Cancellation: outright for jobs not yet running (with their dependents), cooperative for
//! running ones.

use flexiq_core::store::{AckKind, CancelRequest, RequestCancelRequest};
use flexiq_core::{AckOutcome, EnqueueOptions, ErrorKind, JobId, JobStatus};

use crate::fixtures::{
    ack, assert_kind, at, finish, get, job, job_after, job_with, now, open, put, start, status, take,
};
use crate::Harness;

/// A pending job is cancelled at once, stamped with `finished_at`, and never claimed.
pub async fn cancel_pending_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), now()).await;
    assert!(s.cancel(CancelRequest { id: id.clone(), now: at(3) }).await.unwrap());
    let j = get(&*s, &id).await;
    assert_eq!(j.status, JobStatus::Cancelled);
    assert_eq!(j.finished_at, Some(at(3)));
    assert!(take(&*s, 10, at(4)).await.is_empty());
}

/// A delayed job can be cancelled before it comes due.
pub async fn cancel_delayed_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id =
        put(&*s, job_with("t", "", EnqueueOptions { delay_ms: Some(5_000), ..Default::default() }), now())
            .await;
    assert!(s.cancel(CancelRequest { id: id.clone(), now: at(1) }).await.unwrap());
    assert!(take(&*s, 10, at(10_000)).await.is_empty());
}

/// Cancelling a job cancels its dependents transitively.
pub async fn cancel_cascades_to_dependents(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), now()).await;
    let c = put(&*s, job_after("c", &[&b]), now()).await;
    let other = put(&*s, job("other", ""), now()).await;
    assert!(s.cancel(CancelRequest { id: a.clone(), now: at(1) }).await.unwrap());
    assert_eq!(status(&*s, &b).await, JobStatus::Cancelled);
    assert_eq!(status(&*s, &c).await, JobStatus::Cancelled);
    assert_eq!(status(&*s, &other).await, JobStatus::Pending);
}

/// Waiting and suspended jobs can be cancelled.
pub async fn cancel_waiting_and_suspended(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("a", ""), now()).await;
    let waiting = put(&*s, job_after("b", &[&c.job.id]), now()).await;
    assert!(s.cancel(CancelRequest { id: waiting.clone(), now: at(1) }).await.unwrap());
    assert_eq!(status(&*s, &waiting).await, JobStatus::Cancelled);
    ack(&*s, &c, AckKind::Suspend { until: at(100) }, at(2)).await;
    assert!(s.cancel(CancelRequest { id: c.job.id.clone(), now: at(3) }).await.unwrap());
    assert_eq!(status(&*s, &c.job.id).await, JobStatus::Cancelled);
    assert!(take(&*s, 10, at(200)).await.is_empty());
}

/// A running job cannot be cancelled outright: false, and it keeps running.
pub async fn cancel_running_is_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(!s.cancel(CancelRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    assert_eq!(status(&*s, &c.job.id).await, JobStatus::Running);
    assert_eq!(ack(&*s, &c, AckKind::Complete { result: None }, at(2)).await, AckOutcome::Acknowledged);
}

/// A terminal job cannot be cancelled: false, and its status stays.
pub async fn cancel_terminal_is_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = finish(&*s, job("t", ""), now()).await;
    assert!(!s.cancel(CancelRequest { id: id.clone(), now: at(1) }).await.unwrap());
    assert_eq!(status(&*s, &id).await, JobStatus::Completed);
    let c = put(&*s, job("t", ""), now()).await;
    assert!(s.cancel(CancelRequest { id: c.clone(), now: at(1) }).await.unwrap());
    assert!(!s.cancel(CancelRequest { id: c.clone(), now: at(2) }).await.unwrap());
    assert_eq!(get(&*s, &c).await.finished_at, Some(at(1)));
}

/// Cancelling an unknown job is `NotFound`.
pub async fn cancel_unknown_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(s.cancel(CancelRequest { id: JobId::new(), now: now() }).await, ErrorKind::NotFound);
}

/// A cancel request on a running job sets the flag and leaves it running.
pub async fn cancel_request_flags_running_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    assert!(!s.is_cancel_requested(&c.job.id).await.unwrap());
    assert!(s.request_cancel(RequestCancelRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    assert!(s.is_cancel_requested(&c.job.id).await.unwrap());
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Running);
    assert!(j.cancel_requested);
}

/// A cancel request on a job not yet running cancels it outright, dependents included.
pub async fn cancel_request_on_pending_cancels_outright(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), now()).await;
    assert!(s.request_cancel(RequestCancelRequest { id: a.clone(), now: at(1) }).await.unwrap());
    assert_eq!(status(&*s, &a).await, JobStatus::Cancelled);
    assert_eq!(status(&*s, &b).await, JobStatus::Cancelled);
    assert!(take(&*s, 10, at(2)).await.is_empty());
}

/// A cancel request on a terminal job is false.
pub async fn cancel_request_on_terminal_is_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = finish(&*s, job("t", ""), now()).await;
    assert!(!s.request_cancel(RequestCancelRequest { id: id.clone(), now: at(1) }).await.unwrap());
    assert_eq!(status(&*s, &id).await, JobStatus::Completed);
}

/// A cancel request or query on an unknown job is `NotFound`.
pub async fn cancel_request_unknown_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(
        s.request_cancel(RequestCancelRequest { id: JobId::new(), now: now() }).await,
        ErrorKind::NotFound,
    );
    assert_kind(s.is_cancel_requested(&JobId::new()).await, ErrorKind::NotFound);
}

/// A handler that stops on a cancel request acks `Cancel`: the job ends cancelled (not
/// failed), the attempt's error is recorded, its dependents are cancelled, and a stale fence
/// is superseded.
pub async fn cancel_ack_ends_running_job_cancelled(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let dependent = put(&*s, job_after("d", &[&c.job.id]), now()).await;
    assert!(s.request_cancel(RequestCancelRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
    let mut stale = c.clone();
    stale.fence.attempt += 1;
    let reason = AckKind::Cancel { reason: "stopped on request".into() };
    assert_eq!(ack(&*s, &stale, reason.clone(), at(2)).await, AckOutcome::Superseded);
    assert_eq!(status(&*s, &c.job.id).await, JobStatus::Running);
    assert_eq!(ack(&*s, &c, reason, at(3)).await, AckOutcome::Acknowledged);
    let j = get(&*s, &c.job.id).await;
    assert_eq!(j.status, JobStatus::Cancelled);
    assert_eq!(j.finished_at, Some(at(3)));
    assert!(j.last_error.as_deref().unwrap_or_default().contains("stopped on request"), "{j:?}");
    let errors = s.job_errors(&c.job.id).await.unwrap();
    assert_eq!(errors.len(), 1, "the stopped attempt is in the job's error history");
    assert_eq!(status(&*s, &dependent).await, JobStatus::Cancelled);
    let stats = s.stats(None).await.unwrap();
    assert_eq!((stats.running, stats.cancelled, stats.failed), (0, 2, 0), "{stats:?}");
    assert!(take(&*s, 10, at(10)).await.is_empty(), "nothing is left to claim");
    let again = AckKind::Complete { result: None };
    assert_eq!(ack(&*s, &c, again, at(4)).await, AckOutcome::Superseded, "a cancelled job stays cancelled");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_cancel {
    ($callback:path, $make:path) => {
        $callback!($make;
            cancel::cancel_pending_job,
            cancel::cancel_delayed_job,
            cancel::cancel_cascades_to_dependents,
            cancel::cancel_waiting_and_suspended,
            cancel::cancel_running_is_false,
            cancel::cancel_terminal_is_false,
            cancel::cancel_unknown_is_not_found,
            cancel::cancel_request_flags_running_job,
            cancel::cancel_request_on_pending_cancels_outright,
            cancel::cancel_request_on_terminal_is_false,
            cancel::cancel_request_unknown_is_not_found,
            cancel::cancel_ack_ends_running_job_cancelled,
        );
    };
}
