//! Retrying a dead workflow stage on Redis, read off the server: the revived row is exactly the
//! row an upsert replacing it writes, the entry keeps the stage's fields so a stage archived
//! since comes back as a stage of its run, and a stage re-enqueued since it died is left alone.

use flexiq_core::store::{
    AckKind, ArchiveTerminalRequest, DeadLetters, DeadLettersRequest, JobStore, Maintenance, QueueControl,
    RetryDeadRequest, Workflows,
};
use flexiq_core::{EnqueueOptions, Error, ErrorKind, JobId, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use crate::harness::RedisHarness;
use crate::workflow::{ack, dump, fair, raw, stage, upsert};

const NOW: i64 = 1_700_000_000_000;

/// A stage that dies at its first failure, with a group, a version and other fields to keep.
fn mortal() -> NewJob {
    let opts = EnqueueOptions {
        max_retries: Some(0),
        priority: Some(3),
        timeout_ms: Some(9_000),
        metadata: Some(r#"{"k":1}"#.into()),
        group_key: Some("tenant-1".into()),
        workflow_version: Some("v3".into()),
        ..Default::default()
    };
    stage("run-d", "stage-d", "wf", opts)
}

/// Claims the only ready stage and fails it for good; returns the dead-letter entry's id.
async fn die(s: &RedisStore, id: &JobId, now: i64) -> String {
    let c = fair(s, None, now).await.expect("the stage is claimable");
    assert_eq!(&c.job.id, id);
    ack(s, &c, AckKind::Fail { error: "boom".into(), retryable: true }, now + 1).await;
    assert_eq!(s.get(id).await.unwrap().unwrap().status, JobStatus::Dead);
    let entries = s.dead_letters(DeadLettersRequest { task: None, limit: 10, offset: 0 }).await.unwrap();
    entries.into_iter().find(|d| d.original_job_id == id.as_str()).expect("the stage is dead-lettered").id
}

async fn retry(s: &RedisStore, dead_id: &str, now: i64) -> flexiq_core::Result<JobId> {
    s.retry_dead(RetryDeadRequest { dead_id: dead_id.into(), now }).await
}

#[tokio::test]
async fn a_revived_stage_is_the_row_an_upsert_replacing_it_writes() {
    let h = RedisHarness::new();
    let c = raw(&h).await;
    let job = mortal();
    let mut dumps = Vec::new();
    for (ns, revive) in [("revive", true), ("upsert", false)] {
        let s = h.store(ns).await.unwrap();
        upsert(&s, vec![job.clone()], NOW).await;
        let dead_id = die(&s, &job.id, NOW + 1).await;
        if revive {
            assert_eq!(retry(&s, &dead_id, NOW + 3).await.unwrap(), job.id);
        } else {
            upsert(&s, vec![NewJob { run_at: NOW + 3, ..job.clone() }], NOW + 3).await;
            assert!(s.delete_dead(&dead_id).await.unwrap());
        }
        let mut d = dump(&c, &h, ns, job.id.as_str()).await;
        // The attempt's history (metric and error rows) carries ids of its own, minted per run.
        d.remove(":metrics");
        d.remove(":err:<id>");
        dumps.push(d);
    }
    assert_eq!(dumps[0], dumps[1]);
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_stage_archived_since_it_died_comes_back_as_a_stage_of_its_run() {
    let h = RedisHarness::new();
    let s = h.store("archived").await.unwrap();
    let c = raw(&h).await;
    let job = mortal();
    upsert(&s, vec![job.clone()], NOW).await;
    let dead_id = die(&s, &job.id, NOW + 1).await;
    let entry: String = c.hget(format!("{{{}:archived}}:dlq", h.prefix), &dead_id).await.unwrap();
    for field in
        [r#""workflow_run_id":"run-d""#, r#""workflow_stage_id":"stage-d""#, r#""group_key":"tenant-1""#]
    {
        assert!(entry.contains(field), "the entry keeps {field}: {entry}");
    }
    s.revoke_task("wf").await.unwrap();
    match retry(&s, &dead_id, NOW + 3).await {
        Err(Error::TaskRevoked { task }) => assert_eq!(task, "wf"),
        other => panic!("a revoked task is not revived: {other:?}"),
    }
    s.unrevoke_task("wf").await.unwrap();
    let archive = ArchiveTerminalRequest { cutoff_ms: NOW + 10, limit: 10, now: NOW + 10 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    let id = retry(&s, &dead_id, NOW + 20).await.unwrap();
    assert_ne!(id, job.id, "the archived row stays archived");
    let j = s.get(&id).await.unwrap().unwrap();
    assert_eq!((j.status, j.task.as_str(), j.queue.as_str()), (JobStatus::Pending, "wf", "workflow"));
    assert_eq!(
        (j.workflow_run_id.as_deref(), j.workflow_stage_id.as_deref()),
        (Some("run-d"), Some("stage-d"))
    );
    assert_eq!((j.workflow_version.as_deref(), j.group_key.as_deref()), (Some("v3"), Some("tenant-1")));
    let run: Vec<JobId> = s.jobs_of_run("run-d").await.unwrap().into_iter().map(|j| j.id).collect();
    assert_eq!(run, vec![id.clone()], "one row for the pair");
    assert_eq!(fair(&s, None, NOW + 21).await.map(|c| c.job.id), Some(id), "a workflow host claims it");
    // A plain job keeps the plain retry: a new job, no run.
    let plain =
        NewJob::build("t", b"x".to_vec(), EnqueueOptions { max_retries: Some(0), ..Default::default() }, NOW)
            .unwrap();
    let plain_req =
        flexiq_core::store::EnqueueRequest { jobs: vec![plain.clone()], max_pending: None, now: NOW };
    s.enqueue(plain_req).await.unwrap();
    let claimed = s
        .claim(flexiq_core::store::ClaimRequest {
            queues: vec![],
            limit: 1,
            worker_id: "w".into(),
            now: NOW + 30,
        })
        .await
        .unwrap()
        .remove(0);
    ack(&s, &claimed, AckKind::Fail { error: "boom".into(), retryable: true }, NOW + 31).await;
    let entries =
        s.dead_letters(DeadLettersRequest { task: Some("t".into()), limit: 10, offset: 0 }).await.unwrap();
    let again = retry(&s, &entries[0].id, NOW + 32).await.unwrap();
    assert_ne!(again, plain.id);
    let j = s.get(&again).await.unwrap().unwrap();
    assert_eq!((j.status, j.workflow_run_id), (JobStatus::Pending, None));
    assert_eq!(s.get(&plain.id).await.unwrap().unwrap().status, JobStatus::Dead, "the dead plain job stays");
    let _ = c.quit().await;
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_stage_re_enqueued_since_it_died_is_left_alone() {
    let h = RedisHarness::new();
    let s = h.store("again").await.unwrap();
    let c = raw(&h).await;
    let job = mortal();
    upsert(&s, vec![job.clone()], NOW).await;
    let dead_id = die(&s, &job.id, NOW + 1).await;
    upsert(&s, vec![job.clone()], NOW + 3).await;
    let running = fair(&s, None, NOW + 4).await.expect("the re-enqueued stage runs");
    let before = dump(&c, &h, "again", job.id.as_str()).await;
    let e = retry(&s, &dead_id, NOW + 5).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    for part in [dead_id.as_str(), job.id.as_str(), "stage-d", "run-d", "running"] {
        assert!(e.to_string().contains(part), "the refusal names {part}: {e}");
    }
    assert_eq!(dump(&c, &h, "again", job.id.as_str()).await, before, "nothing written, the entry kept");
    ack(&s, &running, AckKind::Complete { result: None }, NOW + 6).await;
    assert_eq!(s.get(&job.id).await.unwrap().unwrap().status, JobStatus::Completed, "the newer attempt acks");
    let _ = c.quit().await;
    h.cleanup_now().await;
}
