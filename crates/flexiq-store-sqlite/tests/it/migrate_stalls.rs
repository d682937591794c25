//! Upgrading a file written by schema version 5 (before stalled recovery): every job row, hot
//! or archived, reads a stall count of 0, a queue's controls keep their values beside the new
//! stall budget, and a job running across the upgrade is recovered under the default budget.

use std::path::Path;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ArchiveTerminalRequest, ClaimRequest, EnqueueRequest, JobStore, Maintenance,
    QueueConfig, QueueControl, ReleaseStaleRequest, Schema, SetConcurrencyRequest, SetMaxStalledRequest,
};
use flexiq_core::transition::STALLED;
use flexiq_core::{ClaimedJob, JobId, JobStatus, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

/// Turns a current file back into a version 5 one: the events stream dropped, the stall count
/// dropped from every table that keeps job rows, the stall budget from the queue controls, and
/// the version row set back to 5.
fn downgrade_to_version_5(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    crate::drop_events_schema(&conn);
    conn.execute_batch(
        "ALTER TABLE jobs DROP COLUMN stall_count;
         ALTER TABLE archived_jobs DROP COLUMN stall_count;
         ALTER TABLE queue_state DROP COLUMN max_stalled_count;
         UPDATE schema_meta SET version = 5 WHERE id = 1;",
    )
    .unwrap();
    let cols: i64 = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = 'stall_count')
                  + (SELECT COUNT(*) FROM pragma_table_info('archived_jobs') WHERE name = 'stall_count')
                  + (SELECT COUNT(*) FROM pragma_table_info('queue_state') WHERE name = 'max_stalled_count')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(cols, 0, "the downgraded file has no stall columns");
}

async fn claim_one(s: &SqliteStore, queue: &str, now: i64) -> ClaimedJob {
    let req = ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: "w".into(), now };
    s.claim(req).await.unwrap().pop().expect("a job to claim")
}

async fn get(s: &SqliteStore, id: &JobId) -> flexiq_core::Job {
    s.get(id).await.unwrap().expect("job exists")
}

async fn stall(s: &SqliteStore, now: i64) -> Vec<JobId> {
    s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now }).await.unwrap()
}

#[tokio::test]
async fn a_version_5_file_reads_no_stalls_and_recovers_its_running_job_under_the_default_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let jobs = vec![job_on("a"), job_on("b"), job_on("c")];
    let ids: Vec<JobId> = jobs.iter().map(|j| j.id.clone()).collect();
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T0 }).await.unwrap();
    s.set_concurrency(SetConcurrencyRequest { queue: "a".into(), max: Some(4) }).await.unwrap();
    // ids[0]: running across the upgrade. ids[1]: completed and archived. ids[2]: pending.
    assert_eq!(claim_one(&s, "a", T0).await.job.id, ids[0]);
    let done = claim_one(&s, "b", T0).await;
    let acks = vec![Ack {
        job_id: done.job.id.clone(),
        fence: done.fence,
        kind: AckKind::Complete { result: None },
    }];
    s.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
    let archive = ArchiveTerminalRequest { cutoff_ms: T0 + 2, limit: 10, now: T0 + 3 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    s.close().await.unwrap();

    downgrade_to_version_5(&path);
    let no_ddl =
        SqliteStore::open(&path, SqliteOptions { auto_migrate: false, ..Default::default() }).unwrap();
    let err = no_ddl.get(&ids[0]).await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "a version 5 file without auto_migrate asks for migrate(): {err}");
    assert!(err.to_string().contains("migrate()"), "{err}");
    let err = no_ddl.queue_config("a").await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "{err}");
    assert_eq!(
        no_ddl.migrate().await.unwrap().applied,
        vec![6, 7, 8, 9, 10],
        "the stall step runs, then the flow and scheduler steps (which find their work done)"
    );
    no_ddl.close().await.unwrap();
    downgrade_to_version_5(&path);

    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    assert!(s.migrate().await.unwrap().applied.is_empty(), "the open already migrated the file");
    for (id, status) in
        [(&ids[0], JobStatus::Running), (&ids[1], JobStatus::Completed), (&ids[2], JobStatus::Pending)]
    {
        let j = get(&s, id).await;
        assert_eq!((j.status, j.stall_count), (status, 0), "job {id}");
    }
    let want = QueueConfig { concurrency: Some(4), ..Default::default() };
    assert_eq!(
        s.queue_config("a").await.unwrap(),
        want,
        "the queue's controls survive, with no stall budget set"
    );

    // The job running across the upgrade reported no start (rows before version 10 read 0), so
    // its release spends nothing; then a started attempt stalls once and is recovered, and
    // fails its second stall.
    let later = T0 + 2_000;
    assert_eq!(stall(&s, later).await, vec![ids[0].clone()]);
    let j = get(&s, &ids[0]).await;
    assert_eq!((j.status, j.attempt, j.stall_count), (JobStatus::Pending, 0, 0));
    let mut now = later;
    for expected in [(JobStatus::Pending, 1), (JobStatus::Dead, 2)] {
        now += 3_000;
        let c = claim_one(&s, "a", now).await;
        assert_eq!(c.job.id, ids[0]);
        flexiq_conformance::fixtures::report_started(&s, &c, now).await;
        assert_eq!(stall(&s, now + 2_000).await, vec![ids[0].clone()]);
        let j = get(&s, &ids[0]).await;
        assert_eq!((j.status, j.stall_count), expected);
    }
    let j = get(&s, &ids[0]).await;
    assert!(j.last_error.as_deref().unwrap_or_default().starts_with(STALLED), "{:?}", j.last_error);

    // The upgraded queue row takes a stall budget beside its concurrency cap.
    s.set_max_stalled(SetMaxStalledRequest { queue: "a".into(), max: Some(2) }).await.unwrap();
    let want = QueueConfig { concurrency: Some(4), max_stalled_count: Some(2), ..Default::default() };
    assert_eq!(s.queue_config("a").await.unwrap(), want);
    s.close().await.unwrap();
}
