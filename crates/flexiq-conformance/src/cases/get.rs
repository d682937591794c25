//! Reading one job and its result.

use flexiq_core::store::{AckKind, ArchiveTerminalRequest, CancelRequest};
use flexiq_core::{ErrorKind, JobId, JobStatus, Store};

use crate::fixtures::{
    ack, assert_kind, at, claim_id, complete, fail, finish, job, job_after, kill, now, open, put, start,
};
use crate::Harness;

/// `get` of an unknown id is `None`, not an error.
pub async fn get_unknown_is_none(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s.get(&JobId::new()).await.unwrap().is_none());
}

/// `get_result` of an unknown id is `NotFound`.
pub async fn get_result_unknown_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(s.get_result(&JobId::new()).await, ErrorKind::NotFound);
}

/// Result bytes round-trip exactly, including NUL and non-UTF-8 bytes.
pub async fn get_result_bytes_round_trip(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let bytes: Vec<u8> = (0..=255u8).rev().collect();
    complete(&*s, &c, Some(&bytes), at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), Some(bytes));
}

/// Before completion there is no result: pending, running and retrying jobs answer `None`.
pub async fn get_result_none_before_completion(h: &dyn Harness) {
    let s = open(h, "default").await;
    let pending = put(&*s, job("t", ""), now()).await;
    assert_eq!(s.get_result(&pending).await.unwrap(), None);
    let c = crate::fixtures::claim_id(&*s, &pending, now()).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), None);
    fail(&*s, &c, "e", true, at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), None);
}

/// A job completed without a result answers `None`; a failed one too.
pub async fn get_result_none_without_result(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    complete(&*s, &c, None, at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), None);
    let f = start(&*s, job("t", ""), at(2)).await;
    fail(&*s, &f, "no", false, at(3)).await;
    assert_eq!(s.get_result(&f.job.id).await.unwrap(), None);
}

/// An empty result is distinct from no result.
pub async fn get_result_empty_bytes_kept(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    complete(&*s, &c, Some(&[]), at(1)).await;
    assert_eq!(s.get_result(&c.job.id).await.unwrap(), Some(vec![]));
}

/// `job_status` of `id`, checked against the whole record `get` reads.
async fn status_agrees(s: &dyn Store, id: &JobId) -> Option<JobStatus> {
    let st = s.job_status(id).await.unwrap_or_else(|e| panic!("job_status {id}: {e}"));
    assert_eq!(st, s.get(id).await.unwrap().map(|j| j.status), "job_status and get disagree on {id}");
    st
}

/// `job_status` follows a job through every status, and agrees with `get` at each step.
pub async fn job_status_follows_every_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), now()).await;
    assert_eq!(status_agrees(&*s, &id).await, Some(JobStatus::Pending));
    let waiting = put(&*s, job_after("t", &[&id]), now()).await;
    assert_eq!(status_agrees(&*s, &waiting).await, Some(JobStatus::Waiting));
    let c = claim_id(&*s, &id, at(1)).await;
    assert_eq!(status_agrees(&*s, &id).await, Some(JobStatus::Running));
    fail(&*s, &c, "again", true, at(2)).await;
    assert_eq!(status_agrees(&*s, &id).await, Some(JobStatus::Pending));
    let c = claim_id(&*s, &id, at(100_000)).await;
    ack(&*s, &c, AckKind::Suspend { until: at(200_000) }, at(100_001)).await;
    assert_eq!(status_agrees(&*s, &id).await, Some(JobStatus::Suspended));
    let c = claim_id(&*s, &id, at(200_000)).await;
    complete(&*s, &c, None, at(200_001)).await;
    assert_eq!(status_agrees(&*s, &id).await, Some(JobStatus::Completed));

    assert_eq!(status_agrees(&*s, &waiting).await, Some(JobStatus::Pending), "released by its dependency");
    let f = claim_id(&*s, &waiting, at(200_002)).await;
    fail(&*s, &f, "no", false, at(200_003)).await;
    assert_eq!(status_agrees(&*s, &waiting).await, Some(JobStatus::Failed));
    let dead = kill(&*s, "t", "boom", at(200_004)).await;
    assert_eq!(status_agrees(&*s, &dead).await, Some(JobStatus::Dead));
    let cancelled = put(&*s, job("t", ""), at(200_005)).await;
    assert!(s.cancel(CancelRequest { id: cancelled.clone(), now: at(200_006) }).await.unwrap());
    assert_eq!(status_agrees(&*s, &cancelled).await, Some(JobStatus::Cancelled));
}

/// `job_status` is `None` for an unknown id, for another namespace's job and for an archived
/// job, whose status lives in the archive.
pub async fn job_status_none_unknown_foreign_or_archived(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(s.job_status(&JobId::new()).await.unwrap(), None);
    let other = open(h, "other").await;
    let foreign = put(&*other, job("t", ""), now()).await;
    assert_eq!(s.job_status(&foreign).await.unwrap(), None);
    assert_eq!(other.job_status(&foreign).await.unwrap(), Some(JobStatus::Pending));
    let done = finish(&*s, job("t", ""), at(1_000)).await;
    assert_eq!(s.job_status(&done).await.unwrap(), Some(JobStatus::Completed));
    let moved = s
        .archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(2_000), limit: 100, now: at(5_000) })
        .await
        .unwrap();
    assert_eq!(moved, 1);
    assert_eq!(s.job_status(&done).await.unwrap(), None);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_get {
    ($callback:path, $make:path) => {
        $callback!($make;
            get::get_unknown_is_none,
            get::get_result_unknown_is_not_found,
            get::get_result_bytes_round_trip,
            get::get_result_none_before_completion,
            get::get_result_none_without_result,
            get::get_result_empty_bytes_kept,
            get::job_status_follows_every_status,
            get::job_status_none_unknown_foreign_or_archived,
        );
    };
}
