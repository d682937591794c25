//! Revoked tasks: new enqueues refused with `TaskRevoked`; jobs already pending still run;
//! unrevoke lifts it.

use flexiq_core::ErrorKind;

use crate::fixtures::{assert_kind, enqueue, ids, job, listed_ids, now, open, put, take};
use crate::Harness;

/// Enqueueing a revoked task is `TaskRevoked`, names the task and writes nothing.
pub async fn revoke_enqueue_is_task_revoked(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.revoke_task("bad").await.unwrap();
    let j = job("bad", "");
    let id = j.id.clone();
    let err = enqueue(&*s, vec![j], None, now()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TaskRevoked, "{err}");
    assert!(err.to_string().contains("bad"), "the error names the task: {err}");
    assert!(s.get(&id).await.unwrap().is_none());
}

/// A batch with one revoked task is refused whole.
pub async fn revoke_batch_with_revoked_task_rejected_whole(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.revoke_task("bad").await.unwrap();
    assert_kind(
        enqueue(&*s, vec![job("good", ""), job("bad", "")], None, now()).await,
        ErrorKind::TaskRevoked,
    );
    assert!(listed_ids(&*s).await.is_empty());
}

/// Jobs enqueued before a revocation are not affected: they are claimed and run to the end.
pub async fn revoke_existing_pending_jobs_still_run(h: &dyn Harness) {
    let s = open(h, "default").await;
    let bad = put(&*s, job("bad", ""), now()).await;
    let good = put(&*s, job("good", ""), now()).await;
    s.revoke_task("bad").await.unwrap();
    let claimed = take(&*s, 10, now()).await;
    let mut got = ids(&claimed);
    got.sort();
    let mut want = vec![bad.clone(), good];
    want.sort();
    assert_eq!(got, want, "a revoked task's pending jobs are still claimed");
    for c in &claimed {
        crate::fixtures::complete(&*s, c, None, now()).await;
    }
    assert_eq!(crate::fixtures::status(&*s, &bad).await, flexiq_core::JobStatus::Completed);
}

/// Unrevoking returns true, and the task is enqueued and claimed again.
pub async fn revoke_unrevoke_restores_task(h: &dyn Harness) {
    let s = open(h, "default").await;
    let old = put(&*s, job("t", ""), now()).await;
    s.revoke_task("t").await.unwrap();
    assert!(s.unrevoke_task("t").await.unwrap());
    assert!(s.revoked_tasks().await.unwrap().is_empty());
    let new = put(&*s, job("t", ""), now()).await;
    let mut got = ids(&take(&*s, 10, now()).await);
    got.sort();
    let mut want = vec![old, new];
    want.sort();
    assert_eq!(got, want);
}

/// Unrevoking a task that was not revoked returns false.
pub async fn revoke_unrevoke_unknown_is_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(!s.unrevoke_task("never").await.unwrap());
}

/// `revoked_tasks` is sorted and lists each task once.
pub async fn revoke_list_sorted_and_deduplicated(h: &dyn Harness) {
    let s = open(h, "default").await;
    for t in ["zed", "abc", "zed", "mno"] {
        s.revoke_task(t).await.unwrap();
    }
    assert_eq!(s.revoked_tasks().await.unwrap(), vec!["abc", "mno", "zed"]);
}

/// A revocation belongs to its namespace.
pub async fn revoke_is_per_namespace(h: &dyn Harness) {
    let a = open(h, "ns-a").await;
    let b = open(h, "ns-b").await;
    a.revoke_task("t").await.unwrap();
    assert!(b.revoked_tasks().await.unwrap().is_empty());
    put(&*b, job("t", ""), now()).await;
    assert_eq!(take(&*b, 10, now()).await.len(), 1);
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_revoke {
    ($callback:path, $make:path) => {
        $callback!($make;
            revoke::revoke_enqueue_is_task_revoked,
            revoke::revoke_batch_with_revoked_task_rejected_whole,
            revoke::revoke_existing_pending_jobs_still_run,
            revoke::revoke_unrevoke_restores_task,
            revoke::revoke_unrevoke_unknown_is_false,
            revoke::revoke_list_sorted_and_deduplicated,
            revoke::revoke_is_per_namespace,
        );
    };
}
