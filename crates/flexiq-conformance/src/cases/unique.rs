//! Unique keys: a live job holds its key; a terminal job frees it.

use flexiq_core::store::{AckKind, CancelRequest, ListJobsRequest};
use flexiq_core::{AckOutcome, JobFilter, JobStatus};

use crate::fixtures::{ack, at, claim_id, enqueue, fail, job, now, open, put, start, status, unique};
use crate::Harness;

/// A second enqueue with the key of a pending job returns that job's id with `created = false`.
pub async fn unique_live_duplicate_returns_existing_id(h: &dyn Harness) {
    let s = open(h, "default").await;
    let first = enqueue(&*s, vec![unique("t", "k")], None, now()).await.unwrap().remove(0);
    assert!(first.created);
    let second = enqueue(&*s, vec![unique("t", "k")], None, at(10)).await.unwrap().remove(0);
    assert_eq!(second.id, first.id);
    assert!(!second.created);
    assert_eq!(s.count_pending("default").await.unwrap(), 1);
    assert_eq!(
        s.list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 100, offset: 0 })
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A running job still holds its key.
pub async fn unique_running_job_still_holds_key(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, unique("t", "k"), now()).await;
    let again = enqueue(&*s, vec![unique("t", "k")], None, at(1)).await.unwrap().remove(0);
    assert_eq!(again.id, c.job.id);
    assert!(!again.created);
}

/// A job waiting for a retry after a failed attempt still holds its key.
pub async fn unique_retrying_job_still_holds_key(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, unique("t", "k"), now()).await;
    fail(&*s, &c, "boom", true, at(1)).await;
    assert_eq!(status(&*s, &c.job.id).await, JobStatus::Pending);
    let again = enqueue(&*s, vec![unique("t", "k")], None, at(2)).await.unwrap().remove(0);
    assert_eq!((again.id, again.created), (c.job.id, false));
}

/// A completed job frees its key: the next enqueue creates a new job.
pub async fn unique_completed_job_frees_key(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, unique("t", "k"), now()).await;
    assert_eq!(ack(&*s, &c, AckKind::Complete { result: None }, at(1)).await, AckOutcome::Acknowledged);
    let again = enqueue(&*s, vec![unique("t", "k")], None, at(2)).await.unwrap().remove(0);
    assert!(again.created);
    assert_ne!(again.id, c.job.id);
    assert_eq!(status(&*s, &again.id).await, JobStatus::Pending);
}

/// A cancelled job frees its key.
pub async fn unique_cancelled_job_frees_key(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, unique("t", "k"), now()).await;
    assert!(s.cancel(CancelRequest { id: id.clone(), now: at(1) }).await.unwrap());
    let again = enqueue(&*s, vec![unique("t", "k")], None, at(2)).await.unwrap().remove(0);
    assert!(again.created);
    assert_ne!(again.id, id);
}

/// A dead job frees its key.
pub async fn unique_dead_job_frees_key(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut j = unique("t", "k");
    j.max_retries = 0;
    let c = start(&*s, j, now()).await;
    fail(&*s, &c, "boom", true, at(1)).await;
    assert_eq!(status(&*s, &c.job.id).await, JobStatus::Dead);
    let again = enqueue(&*s, vec![unique("t", "k")], None, at(2)).await.unwrap().remove(0);
    assert!(again.created);
}

/// Two jobs with the same key in one batch: the second resolves to the first.
pub async fn unique_duplicates_inside_one_batch_collapse(h: &dyn Harness) {
    let s = open(h, "default").await;
    let out =
        enqueue(&*s, vec![unique("t", "k"), job("t", "other"), unique("t", "k")], None, now()).await.unwrap();
    assert_eq!(out.len(), 3);
    assert!(out[0].created && out[1].created);
    assert_eq!(out[2].id, out[0].id);
    assert!(!out[2].created);
    assert_eq!(s.count_pending("default").await.unwrap(), 2);
}

/// Different keys never collide, and keyless jobs never dedupe.
pub async fn unique_distinct_keys_and_keyless_jobs_all_insert(h: &dyn Harness) {
    let s = open(h, "default").await;
    let out = enqueue(&*s, vec![unique("t", "a"), unique("t", "b"), job("t", ""), job("t", "")], None, now())
        .await
        .unwrap();
    assert!(out.iter().all(|e| e.created));
    assert_eq!(s.count_pending("default").await.unwrap(), 4);
}

/// A deduplicated enqueue leaves the existing job untouched.
pub async fn unique_duplicate_does_not_modify_existing_job(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, unique("t", "k"), now()).await;
    let mut dup = unique("t", "k");
    dup.payload = b"other".to_vec();
    dup.priority = 50;
    enqueue(&*s, vec![dup], None, at(5)).await.unwrap();
    let c = claim_id(&*s, &id, at(6)).await;
    assert!(c.job.payload.is_empty());
    assert_eq!(c.job.priority, 0);
    assert_eq!(c.job.created_at, now());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_unique {
    ($callback:path, $make:path) => {
        $callback!($make;
            unique::unique_live_duplicate_returns_existing_id,
            unique::unique_running_job_still_holds_key,
            unique::unique_retrying_job_still_holds_key,
            unique::unique_completed_job_frees_key,
            unique::unique_cancelled_job_frees_key,
            unique::unique_dead_job_frees_key,
            unique::unique_duplicates_inside_one_batch_collapse,
            unique::unique_distinct_keys_and_keyless_jobs_all_insert,
            unique::unique_duplicate_does_not_modify_existing_job,
        );
    };
}
