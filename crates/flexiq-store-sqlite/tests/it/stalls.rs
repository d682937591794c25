//! Every way a row of the file is started over in place clears its stall count: a bulk retry
//! of dead jobs, a workflow stage's dead-letter retry (which revives the stage's own row) and
//! a stage upsert that replaces a row which stalled. A job archived after a stall keeps its
//! count in the archive.

use flexiq_core::store::{
    Admin, ArchiveTerminalRequest, ClaimRequest, DeadLetters, DeadLettersRequest, EnqueueRequest, JobStore,
    Maintenance, QueueControl, ReleaseStaleRequest, RetryDeadRequest, RetryJobsRequest, SetMaxStalledRequest,
    UpsertStagesRequest, Workflows,
};
use flexiq_core::{EnqueueOptions, Job, JobId, JobStatus, NewJob, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

/// A job on queue `stalls` naming stage `stage` of run `run`.
fn stage(run: &str, stage: &str) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some("stalls".into()),
        workflow_run_id: Some(run.into()),
        workflow_stage_id: Some(stage.into()),
        ..Default::default()
    };
    NewJob::build("wf", b"{}".to_vec(), opts, T0).unwrap()
}

/// Claims the next job of `queue` at `now` and reports its start, as a running handler's
/// heartbeat does (only a started attempt stalls).
async fn claim(s: &SqliteStore, queue: &str, now: i64) -> JobId {
    let req = ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: "w".into(), now };
    let c = s.claim(req).await.unwrap().pop().expect("a job to claim");
    flexiq_conformance::fixtures::report_started(s, &c, now).await;
    c.job.id
}

/// Claims the next job of `queue` at `now` and lets its lease lapse.
async fn claim_and_stall(s: &SqliteStore, queue: &str, now: i64) -> JobId {
    let id = claim(s, queue, now).await;
    let released =
        s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: now + 2_000 }).await.unwrap();
    assert_eq!(released, vec![id.clone()]);
    id
}

async fn get(s: &SqliteStore, id: &JobId) -> Job {
    s.get(id).await.unwrap().expect("job exists")
}

async fn budget(s: &SqliteStore, queue: &str, max: u32) {
    s.set_max_stalled(SetMaxStalledRequest { queue: queue.into(), max: Some(max) }).await.unwrap();
}

#[tokio::test]
async fn a_bulk_retry_of_stalled_out_jobs_starts_their_stall_count_over() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("retry.db"), SqliteOptions::default()).unwrap();
    budget(&s, "q", 0).await;
    s.enqueue(EnqueueRequest { jobs: vec![job_on("q")], max_pending: None, now: T0 }).await.unwrap();
    let id = claim_and_stall(&s, "q", T0).await;
    let j = get(&s, &id).await;
    assert_eq!((j.status, j.stall_count), (JobStatus::Dead, 1));
    let req = RetryJobsRequest { queue: "q".into(), status: JobStatus::Dead, count: 10, now: T0 + 3_000 };
    assert_eq!(s.retry_jobs(req).await.unwrap(), 1);
    let j = get(&s, &id).await;
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 0));
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_stage_revived_or_replaced_in_place_has_no_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("stages.db"), SqliteOptions::default()).unwrap();
    budget(&s, "stalls", 0).await;
    let upsert = |jobs: Vec<NewJob>, now: i64| s.upsert_stages(UpsertStagesRequest { jobs, now });

    // Stage a stalls out, and its dead-letter retry revives the same row.
    let a = upsert(vec![stage("r", "a")], T0).await.unwrap().remove(0);
    assert_eq!(claim_and_stall(&s, "stalls", T0).await, a);
    assert_eq!(get(&s, &a).await.stall_count, 1);
    let letter =
        s.dead_letters(DeadLettersRequest { task: None, limit: 10, offset: 0 }).await.unwrap().remove(0);
    let revived = s.retry_dead(RetryDeadRequest { dead_id: letter.id, now: T0 + 3_000 }).await.unwrap();
    assert_eq!(revived, a, "the stage's own row is revived");
    let j = get(&s, &a).await;
    assert_eq!((j.status, j.stall_count), (JobStatus::Pending, 0));

    // Stage a stalls once under a budget of 1, and an upsert replaces its row.
    budget(&s, "stalls", 1).await;
    assert_eq!(claim_and_stall(&s, "stalls", T0 + 4_000).await, a);
    let j = get(&s, &a).await;
    assert_eq!((j.status, j.stall_count), (JobStatus::Pending, 1));
    assert_eq!(upsert(vec![stage("r", "a")], T0 + 7_000).await.unwrap(), vec![a.clone()]);
    assert_eq!(get(&s, &a).await.stall_count, 0);

    // A stalled-out stage archived keeps its count there.
    budget(&s, "stalls", 0).await;
    assert_eq!(claim_and_stall(&s, "stalls", T0 + 8_000).await, a);
    let archive = ArchiveTerminalRequest { cutoff_ms: T0 + 20_000, limit: 10, now: T0 + 20_001 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    let j = get(&s, &a).await;
    assert_eq!((j.status, j.stall_count), (JobStatus::Dead, 1));
    s.close().await.unwrap();
}
