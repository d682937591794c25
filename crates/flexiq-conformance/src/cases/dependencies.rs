//! Dependencies: a dependent waits until every dependency completed and is cancelled,
//! transitively, when one ends any other way. Edges never cross namespaces.

use flexiq_core::store::{AckKind, CancelRequest};
use flexiq_core::{ErrorKind, JobId, JobStatus};

use crate::fixtures::{
    ack, assert_kind, at, claim_id, complete, enqueue, fail, finish, fragile, get, ids, job, job_after,
    listed_ids, now, open, put, put_all, start, status, take,
};
use crate::Harness;

/// A job depending on a pending job waits and is not claimable.
pub async fn dependencies_dependent_waits(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), now()).await;
    assert_eq!(status(&*s, &b).await, JobStatus::Waiting);
    assert_eq!(get(&*s, &b).await.depends_on, vec![a.clone()]);
    assert_eq!(ids(&take(&*s, 10, now()).await), vec![a]);
    assert_eq!(status(&*s, &b).await, JobStatus::Waiting);
}

/// When the dependency completes, the dependent becomes pending and claimable.
pub async fn dependencies_completion_releases_dependent(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ca = start(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&ca.job.id]), now()).await;
    complete(&*s, &ca, None, at(1)).await;
    assert_eq!(status(&*s, &b).await, JobStatus::Pending);
    claim_id(&*s, &b, at(2)).await;
}

/// A job with several dependencies waits until all of them completed.
pub async fn dependencies_wait_for_all(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job("b", ""), now()).await;
    let c = put(&*s, job_after("c", &[&a, &b]), now()).await;
    let ca = claim_id(&*s, &a, now()).await;
    complete(&*s, &ca, None, at(1)).await;
    assert_eq!(status(&*s, &c).await, JobStatus::Waiting);
    let cb = claim_id(&*s, &b, at(2)).await;
    complete(&*s, &cb, None, at(3)).await;
    assert_eq!(status(&*s, &c).await, JobStatus::Pending);
}

/// A dependency that fails for good cancels its dependents transitively, naming the dependency.
pub async fn dependencies_failed_dependency_cancels_transitively(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ca = start(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&ca.job.id]), now()).await;
    let c = put(&*s, job_after("c", &[&b]), now()).await;
    fail(&*s, &ca, "bad input", false, at(1)).await;
    assert_eq!(status(&*s, &ca.job.id).await, JobStatus::Failed);
    let jb = get(&*s, &b).await;
    assert_eq!(jb.status, JobStatus::Cancelled);
    assert!(jb.last_error.unwrap_or_default().contains(ca.job.id.as_str()));
    assert_eq!(jb.finished_at, Some(at(1)));
    assert_eq!(status(&*s, &c).await, JobStatus::Cancelled);
    assert!(take(&*s, 10, at(2)).await.is_empty());
}

/// A dependency that dies (retries exhausted) cancels its dependents.
pub async fn dependencies_dead_dependency_cancels_dependents(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ca = start(&*s, fragile("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&ca.job.id]), now()).await;
    fail(&*s, &ca, "boom", true, at(1)).await;
    assert_eq!(status(&*s, &ca.job.id).await, JobStatus::Dead);
    assert_eq!(status(&*s, &b).await, JobStatus::Cancelled);
}

/// A cancelled dependency cancels its dependents transitively.
pub async fn dependencies_cancelled_dependency_cancels_dependents(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), now()).await;
    let c = put(&*s, job_after("c", &[&b]), now()).await;
    assert!(s.cancel(CancelRequest { id: a.clone(), now: at(1) }).await.unwrap());
    assert_eq!(status(&*s, &b).await, JobStatus::Cancelled);
    assert_eq!(status(&*s, &c).await, JobStatus::Cancelled);
}

/// A retryable failure with budget left is not the end: dependents keep waiting.
pub async fn dependencies_retrying_dependency_keeps_dependents_waiting(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ca = start(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&ca.job.id]), now()).await;
    fail(&*s, &ca, "flaky", true, at(1)).await;
    assert_eq!(status(&*s, &ca.job.id).await, JobStatus::Pending);
    assert_eq!(status(&*s, &b).await, JobStatus::Waiting);
}

/// An unknown dependency is `InvalidArgument` and nothing is written.
pub async fn dependencies_unknown_dependency_rejected(h: &dyn Harness) {
    let s = open(h, "default").await;
    let j = job_after("b", &[&JobId::new()]);
    let id = j.id.clone();
    assert_kind(enqueue(&*s, vec![j], None, now()).await, ErrorKind::InvalidArgument);
    assert!(s.get(&id).await.unwrap().is_none());
}

/// A dependency living in another namespace is `InvalidArgument`: edges never cross namespaces.
pub async fn dependencies_other_namespace_dependency_rejected(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    let dep = put(&*a, job("a", ""), now()).await;
    let j = job_after("b", &[&dep]);
    let id = j.id.clone();
    assert_kind(enqueue(&*b, vec![j], None, now()).await, ErrorKind::InvalidArgument);
    assert!(b.get(&id).await.unwrap().is_none());
    assert!(listed_ids(&*b).await.is_empty());
}

/// A job may depend on an earlier job of the same batch.
pub async fn dependencies_on_earlier_job_in_same_batch(h: &dyn Harness) {
    let s = open(h, "default").await;
    let first = job("a", "");
    let second = job_after("b", &[&first.id]);
    let out = put_all(&*s, vec![first, second], now()).await;
    assert_eq!(status(&*s, &out[1]).await, JobStatus::Waiting);
    let c = claim_id(&*s, &out[0], now()).await;
    assert!(take(&*s, 10, now()).await.is_empty());
    complete(&*s, &c, None, at(1)).await;
    claim_id(&*s, &out[1], at(2)).await;
}

/// A dependency that already completed does not hold its dependent back.
pub async fn dependencies_already_completed_dependency_is_pending(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = finish(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), at(1)).await;
    assert_eq!(status(&*s, &b).await, JobStatus::Pending);
}

/// A diamond's join waits for both branches and is released once both complete.
pub async fn dependencies_diamond_releases_join_once(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ca = start(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&ca.job.id]), now()).await;
    let c = put(&*s, job_after("c", &[&ca.job.id]), now()).await;
    let d = put(&*s, job_after("d", &[&b, &c]), now()).await;
    complete(&*s, &ca, None, at(1)).await;
    let mut claimed = ids(&take(&*s, 10, at(2)).await);
    claimed.sort();
    let mut expected = vec![b.clone(), c.clone()];
    expected.sort();
    assert_eq!(claimed, expected);
    assert_eq!(status(&*s, &d).await, JobStatus::Waiting);
    for id in [&b, &c] {
        let j = get(&*s, id).await;
        let cj = flexiq_core::ClaimedJob { fence: j.fence().unwrap(), job: j };
        assert_eq!(
            ack(&*s, &cj, AckKind::Complete { result: None }, at(3)).await,
            flexiq_core::AckOutcome::Acknowledged
        );
    }
    assert_eq!(status(&*s, &d).await, JobStatus::Pending);
}

/// A dependency only the archive holds counts with the status it was archived with: a
/// completed one lets its dependent start, a dead one cancels it.
pub async fn dependencies_archived_dependency_counts_as_finished(h: &dyn Harness) {
    use flexiq_core::store::ArchiveTerminalRequest;
    let s = open(h, "default").await;
    let done = finish(&*s, job("a", ""), now()).await;
    let ca = start(&*s, fragile("a", ""), now()).await;
    fail(&*s, &ca, "boom", true, at(1)).await;
    let moved = s
        .archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(2_000), limit: 100, now: at(5_000) })
        .await
        .unwrap();
    assert_eq!(moved, 2);
    assert!(listed_ids(&*s).await.is_empty(), "both dependencies are archived");
    let b = put(&*s, job_after("b", &[&done]), at(6_000)).await;
    assert_eq!(status(&*s, &b).await, JobStatus::Pending);
    let c = put(&*s, job_after("c", &[&ca.job.id]), at(6_000)).await;
    assert_eq!(status(&*s, &c).await, JobStatus::Cancelled);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_dependencies {
    ($callback:path, $make:path) => {
        $callback!($make;
            dependencies::dependencies_dependent_waits,
            dependencies::dependencies_completion_releases_dependent,
            dependencies::dependencies_wait_for_all,
            dependencies::dependencies_failed_dependency_cancels_transitively,
            dependencies::dependencies_dead_dependency_cancels_dependents,
            dependencies::dependencies_cancelled_dependency_cancels_dependents,
            dependencies::dependencies_retrying_dependency_keeps_dependents_waiting,
            dependencies::dependencies_unknown_dependency_rejected,
            dependencies::dependencies_other_namespace_dependency_rejected,
            dependencies::dependencies_on_earlier_job_in_same_batch,
            dependencies::dependencies_already_completed_dependency_is_pending,
            dependencies::dependencies_archived_dependency_counts_as_finished,
            dependencies::dependencies_diamond_releases_join_once,
        );
    };
}
