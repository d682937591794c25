//! The dead-letter queue: listing, retry with a fresh budget, delete and purges.

use flexiq_core::store::{DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest};
use flexiq_core::{ErrorKind, JobStatus};

use crate::fixtures::{assert_kind, at, claim_id, dead, get, kill, now, open};
use crate::Harness;

/// Entries are listed newest first by failure time.
pub async fn dead_list_newest_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = kill(&*s, "t", "a", at(1_000)).await;
    let b = kill(&*s, "t", "b", at(2_000)).await;
    let c = kill(&*s, "t", "c", at(3_000)).await;
    let got: Vec<_> = dead(&*s).await.into_iter().map(|d| d.original_job_id).collect();
    assert_eq!(got, vec![c.to_string(), b.to_string(), a.to_string()]);
}

/// Offset and limit slice the dead-letter listing.
pub async fn dead_list_offset_and_limit(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..5 {
        kill(&*s, "t", &format!("e{i}"), at(i * 100)).await;
    }
    let page = s.dead_letters(DeadLettersRequest { task: None, limit: 2, offset: 1 }).await.unwrap();
    let errs: Vec<_> = page.iter().map(|d| d.error.clone().unwrap_or_default()).collect();
    assert_eq!(errs, vec!["e3", "e2"]);
    assert!(s.dead_letters(DeadLettersRequest { task: None, limit: 2, offset: 5 }).await.unwrap().is_empty());
}

/// The task filter narrows the listing to one task.
pub async fn dead_list_by_task(h: &dyn Harness) {
    let s = open(h, "default").await;
    kill(&*s, "resize", "x", at(1)).await;
    let mail = kill(&*s, "mail", "y", at(2)).await;
    kill(&*s, "resize", "z", at(3)).await;
    let got =
        s.dead_letters(DeadLettersRequest { task: Some("mail".into()), limit: 10, offset: 0 }).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].original_job_id, mail.as_str());
    assert_eq!(
        s.dead_letters(DeadLettersRequest { task: Some("resize".into()), limit: 10, offset: 0 })
            .await
            .unwrap()
            .len(),
        2
    );
    assert!(s
        .dead_letters(DeadLettersRequest { task: Some("none".into()), limit: 10, offset: 0 })
        .await
        .unwrap()
        .is_empty());
}

/// Retry enqueues a new job (fresh id, fresh budget, same payload) and removes the entry.
pub async fn dead_retry_creates_fresh_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let original = kill(&*s, "t", "boom", at(1)).await;
    let entry = dead(&*s).await.remove(0);
    let new_id = s.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(2) }).await.unwrap();
    assert_ne!(new_id, original);
    let j = get(&*s, &new_id).await;
    assert_eq!(j.status, JobStatus::Pending);
    assert_eq!(j.attempt, 0);
    assert_eq!(j.task, "t");
    assert_eq!(j.payload, b"p");
    assert_eq!(j.queue, "default");
    assert!(dead(&*s).await.is_empty());
    assert_eq!(get(&*s, &original).await.status, JobStatus::Dead);
    assert_eq!(claim_id(&*s, &new_id, at(2)).await.fence.attempt, 1);
}

/// Retrying an unknown entry is `NotFound`; retrying the same entry twice too.
pub async fn dead_retry_unknown_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_kind(
        s.retry_dead(RetryDeadRequest { dead_id: "no-such-entry".into(), now: now() }).await,
        ErrorKind::NotFound,
    );
    kill(&*s, "t", "boom", at(1)).await;
    let entry = dead(&*s).await.remove(0);
    s.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(2) }).await.unwrap();
    assert_kind(
        s.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(3) }).await,
        ErrorKind::NotFound,
    );
}

/// Retrying by the original job id (not the entry id) is `NotFound`.
pub async fn dead_retry_by_job_id_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    let job_id = kill(&*s, "t", "boom", at(1)).await;
    let entry = dead(&*s).await.remove(0);
    assert_ne!(entry.id, job_id.as_str());
    assert_kind(
        s.retry_dead(RetryDeadRequest { dead_id: job_id.to_string(), now: at(2) }).await,
        ErrorKind::NotFound,
    );
    assert_eq!(dead(&*s).await.len(), 1);
}

/// Delete removes one entry (true), and is false when the entry does not exist.
pub async fn dead_delete_true_then_false(h: &dyn Harness) {
    let s = open(h, "default").await;
    kill(&*s, "t", "a", at(1)).await;
    kill(&*s, "t", "b", at(2)).await;
    let entries = dead(&*s).await;
    assert!(s.delete_dead(&entries[0].id).await.unwrap());
    assert!(!s.delete_dead(&entries[0].id).await.unwrap());
    assert!(!s.delete_dead("never-existed").await.unwrap());
    let left = dead(&*s).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, entries[1].id);
}

/// Purge by age removes entries that failed before the cutoff and returns how many.
pub async fn dead_purge_by_age(h: &dyn Harness) {
    let s = open(h, "default").await;
    kill(&*s, "t", "old", at(1_000)).await;
    kill(&*s, "t", "older", at(500)).await;
    kill(&*s, "t", "new", at(3_000)).await;
    assert_eq!(s.purge_dead(PurgeDeadRequest { cutoff_ms: at(2_000) }).await.unwrap(), 2);
    let left = dead(&*s).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].error.as_deref(), Some("new"));
    assert_eq!(s.purge_dead(PurgeDeadRequest { cutoff_ms: at(2_000) }).await.unwrap(), 0);
}

/// Purge by task removes exactly that task's entries.
pub async fn dead_purge_by_task(h: &dyn Harness) {
    let s = open(h, "default").await;
    kill(&*s, "bad", "1", at(1)).await;
    kill(&*s, "good", "2", at(2)).await;
    kill(&*s, "bad", "3", at(3)).await;
    assert_eq!(s.purge_dead_by_task("bad").await.unwrap(), 2);
    assert_eq!(s.purge_dead_by_task("bad").await.unwrap(), 0);
    let left = dead(&*s).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].task_name, "good");
}

/// An entry carries the job's metadata.
pub async fn dead_entry_keeps_metadata(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut j = crate::fixtures::fragile("t", "p");
    j.metadata = Some(r#"{"order":42}"#.into());
    let c = crate::fixtures::start(&*s, j, now()).await;
    crate::fixtures::fail(&*s, &c, "boom", true, at(1)).await;
    let entry = dead(&*s).await.remove(0);
    assert_eq!(entry.metadata.as_deref(), Some(r#"{"order":42}"#));
}

/// Retrying an entry of a revoked task is `TaskRevoked`, and the entry stays for later.
pub async fn dead_retry_of_revoked_task_is_task_revoked(h: &dyn Harness) {
    let s = open(h, "default").await;
    kill(&*s, "t", "boom", at(1)).await;
    let entry = dead(&*s).await.remove(0);
    s.revoke_task("t").await.unwrap();
    assert_kind(
        s.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(2) }).await,
        ErrorKind::TaskRevoked,
    );
    assert_eq!(dead(&*s).await.len(), 1);
    s.unrevoke_task("t").await.unwrap();
    s.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(3) }).await.unwrap();
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_dead {
    ($callback:path, $make:path) => {
        $callback!($make;
            dead::dead_list_newest_first,
            dead::dead_list_offset_and_limit,
            dead::dead_list_by_task,
            dead::dead_retry_creates_fresh_job,
            dead::dead_retry_unknown_is_not_found,
            dead::dead_retry_by_job_id_is_not_found,
            dead::dead_delete_true_then_false,
            dead::dead_purge_by_age,
            dead::dead_purge_by_task,
            dead::dead_entry_keeps_metadata,
            dead::dead_retry_of_revoked_task_is_task_revoked,
        );
    };
}
