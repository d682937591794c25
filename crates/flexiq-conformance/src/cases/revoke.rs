//! Revoked tasks: enqueues refused with `Conflict`, claims skip them, unrevoke lifts it.

use flexiq_core::ErrorKind;

use crate::fixtures::{assert_kind, enqueue, ids, job, listed_ids, now, open, put, take};
use crate::Harness;

/// Enqueueing a revoked task is `Conflict` and writes nothing.
pub async fn revoke_enqueue_is_conflict(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.revoke_task("bad").await.unwrap();
    let j = job("bad", "");
    let id = j.id.clone();
    assert_kind(enqueue(&*s, vec![j], None, now()).await, ErrorKind::Conflict);
    assert!(s.get(&id).await.unwrap().is_none());
}

/// A batch with one revoked task is refused whole.
pub async fn revoke_batch_with_revoked_task_rejected_whole(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.revoke_task("bad").await.unwrap();
    assert_kind(enqueue(&*s, vec![job("good", ""), job("bad", "")], None, now()).await, ErrorKind::Conflict);
    assert!(listed_ids(&*s).await.is_empty());
}

/// Jobs enqueued before a revocation stay pending but are not claimed.
pub async fn revoke_claims_skip_revoked_task(h: &dyn Harness) {
    let s = open(h, "default").await;
    let bad = put(&*s, job("bad", ""), now()).await;
    let good = put(&*s, job("good", ""), now()).await;
    s.revoke_task("bad").await.unwrap();
    assert_eq!(ids(&take(&*s, 10, now()).await), vec![good]);
    assert_eq!(crate::fixtures::status(&*s, &bad).await, flexiq_core::JobStatus::Pending);
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
