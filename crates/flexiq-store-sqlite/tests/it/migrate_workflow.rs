//! Upgrading a file written by schema version 3 (before workflow stages): every table with the
//! workflow columns gains the definition version, the stage and fair-claim indexes are built,
//! and the stages a version 3 file let repeat keep their newest row while the older ones move
//! to the archive with their counters.

use std::path::Path;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ArchiveTerminalRequest, ClaimFairRequest, ClaimRequest, DeadLetters,
    DeadLettersRequest, DeleteStagesRequest, EnqueueRequest, Inspect, JobStore, Maintenance,
    RetryDeadRequest, Schema, UpsertStagesRequest, Workflows,
};
use flexiq_core::{AckOutcome, ClaimedJob, EnqueueOptions, JobId, JobStatus, NewJob, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::T0;

/// Turns a current file back into a version 3 one: the workflow indexes and the fair cursor
/// table dropped, the definition version column dropped from every table that has it, and the
/// version row set back to 3.
fn downgrade_to_version_3(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "DROP INDEX jobs_wf_stage;
         DROP INDEX jobs_wf_run;
         DROP INDEX jobs_fair;
         DROP INDEX jobs_group_running;
         DROP TABLE fair_cursor;
         ALTER TABLE jobs DROP COLUMN wf_version;
         ALTER TABLE archived_jobs DROP COLUMN wf_version;
         ALTER TABLE dead_letters DROP COLUMN wf_version;
         UPDATE schema_meta SET version = 3 WHERE id = 1;",
    )
    .unwrap();
    assert_eq!(version_columns(&conn), 0, "the downgraded file has no definition version column");
}

/// How many of the job, archive and dead letter tables have `wf_version`.
fn version_columns(conn: &rusqlite::Connection) -> i64 {
    let has = |table: &str| -> i64 {
        conn.query_row("SELECT COUNT(*) FROM pragma_table_info(?1) WHERE name = 'wf_version'", [table], |r| {
            r.get(0)
        })
        .unwrap()
    };
    ["jobs", "archived_jobs", "dead_letters"].into_iter().map(has).sum()
}

/// A job of task `wf` on queue `workflow` naming stage `stage` of `run`.
fn stage(run: &str, stage: &str, max_retries: u32, at: i64) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some("workflow".into()),
        max_retries: Some(max_retries),
        workflow_run_id: Some(run.into()),
        workflow_stage_id: Some(stage.into()),
        ..Default::default()
    };
    NewJob::build("wf", b"{}".to_vec(), opts, at).unwrap()
}

async fn enqueue(s: &SqliteStore, jobs: Vec<NewJob>, now: i64) -> flexiq_core::Result<Vec<JobId>> {
    let out = s.enqueue(EnqueueRequest { jobs, max_pending: None, now }).await?;
    Ok(out.into_iter().map(|e| e.id).collect())
}

async fn claim(s: &SqliteStore, now: i64) -> ClaimedJob {
    let req = ClaimRequest { queues: vec!["workflow".into()], limit: 1, worker_id: "w".into(), now };
    s.claim(req).await.unwrap().pop().expect("a job to claim")
}

async fn ack(s: &SqliteStore, c: &ClaimedJob, kind: AckKind, now: i64) -> AckOutcome {
    let acks = vec![Ack { job_id: c.job.id.clone(), fence: c.fence, kind }];
    s.ack(AckRequest { acks, now }).await.unwrap().remove(0)
}

async fn job(s: &SqliteStore, id: &JobId) -> flexiq_core::Job {
    s.get(id).await.unwrap().expect("job exists")
}

#[tokio::test]
async fn a_version_3_file_gains_the_definition_version_and_the_stage_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    // a: completed and archived; b: dead (no retries) with a dead letter; c: pending.
    let ids =
        enqueue(&s, vec![stage("run-1", "a", 0, T0), stage("run-1", "b", 0, T0 + 1)], T0).await.unwrap();
    let done = claim(&s, T0 + 2).await;
    assert_eq!(done.job.id, ids[0]);
    assert_eq!(ack(&s, &done, AckKind::Complete { result: None }, T0 + 3).await, AckOutcome::Acknowledged);
    let archive = ArchiveTerminalRequest { cutoff_ms: T0 + 4, limit: 10, now: T0 + 5 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    let dead = claim(&s, T0 + 6).await;
    assert_eq!(dead.job.id, ids[1]);
    let fail = AckKind::Fail { error: "boom".into(), retryable: true };
    assert_eq!(ack(&s, &dead, fail, T0 + 7).await, AckOutcome::Acknowledged);
    let c = enqueue(&s, vec![stage("run-1", "c", 3, T0 + 8)], T0 + 8).await.unwrap().remove(0);
    s.close().await.unwrap();

    downgrade_to_version_3(&path);
    let no_ddl =
        SqliteStore::open(&path, SqliteOptions { auto_migrate: false, ..Default::default() }).unwrap();
    let err = no_ddl.get(&c).await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "a version 3 file without auto_migrate asks for migrate(): {err}");
    assert_eq!(
        no_ddl.migrate().await.unwrap().applied,
        vec![4, 5, 6, 7, 8, 9, 10],
        "the workflow step runs, then the admin, stall, flow and scheduler steps (which find their work done)"
    );
    no_ddl.close().await.unwrap();
    downgrade_to_version_3(&path);

    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    assert!(s.migrate().await.unwrap().applied.is_empty(), "the open already migrated the file");
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(version_columns(&conn), 3, "jobs, archived_jobs and dead_letters gained wf_version");
    drop(conn);
    // Rows written before the upgrade have no version; their other workflow columns stay.
    let archived = job(&s, &ids[0]).await;
    assert_eq!(archived.status, JobStatus::Completed);
    assert_eq!(
        (
            archived.workflow_run_id.as_deref(),
            archived.workflow_stage_id.as_deref(),
            archived.workflow_version
        ),
        (Some("run-1"), Some("a"), None)
    );
    assert_eq!(job(&s, &ids[1]).await.status, JobStatus::Dead);
    let listed: Vec<JobId> = s.jobs_of_run("run-1").await.unwrap().into_iter().map(|j| j.id).collect();
    assert_eq!(listed, vec![ids[1].clone(), c.clone()], "the live rows of the run, oldest first");

    // The stage index holds: a plain enqueue of a taken stage is refused, an upsert replaces it.
    let err = enqueue(&s, vec![stage("run-1", "c", 3, T0 + 9)], T0 + 9).await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "{err}");
    assert!(err.to_string().contains(c.as_str()), "{err}");
    let mut v2 = stage("run-1", "c", 3, T0 + 10);
    v2.workflow_version = Some("v2".into());
    let replaced = s.upsert_stages(UpsertStagesRequest { jobs: vec![v2], now: T0 + 10 }).await.unwrap();
    assert_eq!(replaced, vec![c.clone()]);
    assert_eq!(job(&s, &c).await.workflow_version.as_deref(), Some("v2"));
    let fair = ClaimFairRequest {
        queues: vec!["workflow".into()],
        serves: Vec::new(),
        workers: vec!["w".into()],
        group_cap: Some(1),
        now: T0 + 11,
    };
    let claimed = s.claim_fair(fair).await.unwrap().pop().expect("the fair claim works on the upgraded file");
    assert_eq!((claimed.job.id, claimed.job.workflow_version.as_deref()), (c.clone(), Some("v2")));

    // The old dead letter revives its stage's dead row in place, keeping run and stage.
    let letters = s.dead_letters(DeadLettersRequest { task: None, limit: 10, offset: 0 }).await.unwrap();
    assert_eq!(letters.len(), 1);
    let retried =
        s.retry_dead(RetryDeadRequest { dead_id: letters[0].id.clone(), now: T0 + 12 }).await.unwrap();
    assert_eq!(retried, ids[1], "stage b comes back as its own row");
    let r = job(&s, &retried).await;
    assert_eq!(
        (r.workflow_stage_id.as_deref(), r.workflow_version, r.status, r.attempt),
        (Some("b"), None, JobStatus::Pending, 0)
    );
    let listed: Vec<JobId> = s.jobs_of_run("run-1").await.unwrap().into_iter().map(|j| j.id).collect();
    assert_eq!(listed, vec![ids[1].clone(), c.clone()], "still one row per stage");
    let gone = DeleteStagesRequest { run_id: "run-1".into(), stage_ids: vec!["b".into()] };
    assert_eq!(s.delete_stages(gone).await.unwrap(), 1);
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_version_3_file_with_a_repeated_stage_keeps_its_newest_row_and_archives_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repeated.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let mut ids = Vec::new();
    for (i, name) in ["s-old", "s-mid", "s-new", "other"].into_iter().enumerate() {
        let at = T0 + i as i64;
        ids.extend(enqueue(&s, vec![stage("run-1", name, 3, at)], at).await.unwrap());
    }
    // The oldest completes, the middle one is running across the upgrade.
    let old = claim(&s, T0 + 10).await;
    assert_eq!(old.job.id, ids[0]);
    ack(&s, &old, AckKind::Complete { result: None }, T0 + 11).await;
    let mid = claim(&s, T0 + 12).await;
    assert_eq!(mid.job.id, ids[1]);
    s.close().await.unwrap();

    downgrade_to_version_3(&path);
    // What a version 3 build allowed: three rows for one stage, created one after another.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE jobs SET wf_stage = 's' WHERE wf_stage LIKE 's-%'", []).unwrap();
    drop(conn);

    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let listed: Vec<JobId> = s.jobs_of_run("run-1").await.unwrap().into_iter().map(|j| j.id).collect();
    assert_eq!(listed, vec![ids[2].clone(), ids[3].clone()], "one row per stage: the newest of s stays");
    let archived_old = job(&s, &ids[0]).await;
    assert_eq!(
        (archived_old.status, archived_old.workflow_stage_id.as_deref()),
        (JobStatus::Completed, Some("s"))
    );
    assert_eq!(job(&s, &ids[1]).await.status, JobStatus::Running, "the older rows are kept in the archive");
    let st = s.stats(None).await.unwrap();
    assert_eq!((st.pending, st.running, st.completed, st.total()), (2, 0, 0, 2), "{st:?}");
    assert_eq!(
        ack(&s, &mid, AckKind::Complete { result: None }, T0 + 13).await,
        AckOutcome::Superseded,
        "an archived attempt cannot write"
    );
    let err = enqueue(&s, vec![stage("run-1", "s", 3, T0 + 14)], T0 + 14).await.unwrap_err();
    assert!(err.to_string().contains(ids[2].as_str()), "the stage is held by its newest row: {err}");
    s.close().await.unwrap();
}
