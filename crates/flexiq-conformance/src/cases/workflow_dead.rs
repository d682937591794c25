//! A workflow stage in the dead-letter queue: retrying it must keep the one-row-per-stage rule,
//! so the retry revives the stage's own row in place (its id, run, stage, version and group)
//! instead of minting a second job for the same (run, stage) pair.

use flexiq_core::store::{AckKind, RetryDeadRequest};
use flexiq_core::{AckOutcome, EnqueueOptions, JobStatus};

use super::workflow_kit::{claim_stage, run_jobs, stage_with, totals, upsert_one};
use crate::fixtures::{ack, at, dead, fail, get, open};
use crate::Harness;

/// A stage that failed for good is dead-lettered with its workflow fields; retrying the entry
/// makes the same row pending again (same id, attempt 0, run, stage, version and group kept),
/// the run still holds one row for the stage, and the dead attempt's late ack is superseded.
pub async fn workflow_dead_retry_revives_the_stage_in_place(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions {
        max_retries: Some(0),
        group_key: Some("tenant-1".into()),
        workflow_version: Some("v3".into()),
        ..Default::default()
    };
    let id = upsert_one(&*s, stage_with("run-d", "stage-d", opts), at(0)).await;
    let first = claim_stage(&*s, &id, at(1)).await;
    fail(&*s, &first, "boom", true, at(2)).await;
    assert_eq!(get(&*s, &id).await.status, JobStatus::Dead);
    let entry = dead(&*s)
        .await
        .into_iter()
        .find(|d| d.original_job_id == id.as_str())
        .expect("the stage is dead-lettered");
    let revived = s.retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(3) }).await.unwrap();
    assert_eq!(revived, id, "the stage's own row comes back");
    let j = get(&*s, &id).await;
    assert_eq!((j.status, j.attempt), (JobStatus::Pending, 0));
    assert_eq!(j.workflow_run_id.as_deref(), Some("run-d"));
    assert_eq!(j.workflow_stage_id.as_deref(), Some("stage-d"));
    assert_eq!(j.workflow_version.as_deref(), Some("v3"));
    assert_eq!(j.group_key.as_deref(), Some("tenant-1"));
    assert_eq!(run_jobs(&*s, "run-d").await.len(), 1, "one row per (run, stage)");
    assert!(dead(&*s).await.is_empty(), "the entry is gone");
    let st = totals(&*s).await;
    assert_eq!((st.pending, st.dead, st.total()), (1, 0, 1));
    let again = claim_stage(&*s, &id, at(4)).await;
    assert!(again.fence.claim_seq > first.fence.claim_seq, "a new claim sequence");
    assert_eq!(again.fence.attempt, 1);
    let late = ack(&*s, &first, AckKind::Complete { result: None }, at(5)).await;
    assert_eq!(late, AckOutcome::Superseded, "the dead attempt cannot ack");
    assert_eq!(get(&*s, &id).await.status, JobStatus::Running);
}

/// A stage enqueued again after it died is newer work: retrying the old entry is `Conflict`
/// naming the entry, and changes nothing (the entry stays, the new attempt still acks).
pub async fn workflow_dead_retry_refuses_a_stage_enqueued_since(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { max_retries: Some(0), ..Default::default() };
    let id = upsert_one(&*s, stage_with("run-e", "stage-e", opts.clone()), at(0)).await;
    let first = claim_stage(&*s, &id, at(1)).await;
    fail(&*s, &first, "boom", true, at(2)).await;
    let entry =
        dead(&*s).await.into_iter().find(|d| d.original_job_id == id.as_str()).expect("dead-lettered");
    assert_eq!(
        upsert_one(&*s, stage_with("run-e", "stage-e", opts), at(3)).await,
        id,
        "re-enqueued in place"
    );
    let running = claim_stage(&*s, &id, at(4)).await;
    let e = s
        .retry_dead(RetryDeadRequest { dead_id: entry.id.clone(), now: at(5) })
        .await
        .expect_err("newer work");
    assert_eq!(e.kind(), flexiq_core::ErrorKind::Conflict, "{e}");
    assert!(e.to_string().contains(&entry.id), "the error names the entry: {e}");
    assert_eq!(dead(&*s).await.len(), 1, "the entry stays");
    assert_eq!(get(&*s, &id).await.status, JobStatus::Running);
    let out = ack(&*s, &running, AckKind::Complete { result: None }, at(6)).await;
    assert_eq!(out, AckOutcome::Acknowledged, "the newer attempt is untouched");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_workflow_dead {
    ($callback:path, $make:path) => {
        $callback!($make;
            workflow_dead::workflow_dead_retry_revives_the_stage_in_place,
            workflow_dead::workflow_dead_retry_refuses_a_stage_enqueued_since,
        );
    };
}
