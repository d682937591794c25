//! Upgrading a file written by the previous schema version (2, before the claim sequence):
//! its jobs get `claim_seq = attempt`, and a job running across the upgrade can still be acked
//! with the fence that `get` reads back.

use std::path::Path;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ArchiveTerminalRequest, ClaimRequest, EnqueueRequest, JobStore, Maintenance,
    Schema,
};
use flexiq_core::{AckOutcome, JobId, JobStatus, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

/// Turns a current file back into a version 2 one: the claim sequence column dropped from
/// every table that keeps job rows, and the version row set back to 2.
fn downgrade_to_version_2(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "ALTER TABLE jobs DROP COLUMN claim_seq;
         ALTER TABLE archived_jobs DROP COLUMN claim_seq;
         UPDATE schema_meta SET version = 2 WHERE id = 1;",
    )
    .unwrap();
    let cols: i64 = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = 'claim_seq')
                  + (SELECT COUNT(*) FROM pragma_table_info('archived_jobs') WHERE name = 'claim_seq')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(cols, 0, "the downgraded file has no claim sequence column");
}

async fn claim_one(s: &SqliteStore, queue: &str, now: i64) -> flexiq_core::ClaimedJob {
    let req = ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: "w".into(), now };
    s.claim(req).await.unwrap().pop().expect("a job to claim")
}

async fn get(s: &SqliteStore, id: &JobId) -> flexiq_core::Job {
    s.get(id).await.unwrap().expect("job exists")
}

#[tokio::test]
async fn a_version_2_file_migrates_claim_seq_and_its_running_job_acks_with_the_fence_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let jobs = vec![job_on("a"), job_on("b"), job_on("c")];
    let ids: Vec<JobId> = jobs.iter().map(|j| j.id.clone()).collect();
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T0 }).await.unwrap();
    // ids[0]: claimed, failed (retryable) and claimed again: running at attempt 2.
    let c = claim_one(&s, "a", T0).await;
    assert_eq!(c.job.id, ids[0]);
    let fail = AckKind::Fail { error: "boom".into(), retryable: true };
    let acks = vec![Ack { job_id: c.job.id.clone(), fence: c.fence, kind: fail }];
    s.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
    let later = T0 + 3_600_000;
    let running = claim_one(&s, "a", later).await;
    assert_eq!((running.job.id.clone(), running.fence.attempt), (ids[0].clone(), 2));
    // ids[1]: completed and archived.
    let done = claim_one(&s, "b", later).await;
    assert_eq!(done.job.id, ids[1]);
    let complete = AckKind::Complete { result: Some(b"r".to_vec()) };
    let acks = vec![Ack { job_id: done.job.id.clone(), fence: done.fence, kind: complete }];
    s.ack(AckRequest { acks, now: later }).await.unwrap();
    let archive = ArchiveTerminalRequest { cutoff_ms: later + 1, limit: 10, now: later + 2 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    s.close().await.unwrap();

    downgrade_to_version_2(&path);
    let no_ddl =
        SqliteStore::open(&path, SqliteOptions { auto_migrate: false, ..Default::default() }).unwrap();
    let err = no_ddl.get(&ids[0]).await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "an old file without auto_migrate asks for migrate(): {err}");
    assert!(err.to_string().contains("migrate()"), "{err}");
    assert_eq!(
        no_ddl.migrate().await.unwrap().applied,
        vec![3, 4, 5, 6, 7, 8, 9, 10],
        "the claim sequence step runs, then the workflow, admin, stall, flow and scheduler steps (which find their work done)"
    );
    no_ddl.close().await.unwrap();
    downgrade_to_version_2(&path);

    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    assert!(s.migrate().await.unwrap().applied.is_empty(), "the open already migrated the file");
    let run = get(&s, &ids[0]).await;
    assert_eq!((run.status, run.attempt, run.claim_seq), (JobStatus::Running, 2, 2));
    let archived = get(&s, &ids[1]).await;
    assert_eq!((archived.status, archived.attempt, archived.claim_seq), (JobStatus::Completed, 1, 1));
    let pending = get(&s, &ids[2]).await;
    assert_eq!((pending.attempt, pending.claim_seq), (0, 0));

    // The worker that held ids[0] before the upgrade acks with the fence `get` reads back.
    let fence = run.fence().expect("a running job has a fence");
    assert_eq!((fence.attempt, fence.started_at, fence.claim_seq), (2, later, 2));
    let stale = flexiq_core::Fence { claim_seq: 1, ..fence };
    let kinds = [
        Ack { job_id: ids[0].clone(), fence: stale, kind: AckKind::Complete { result: None } },
        Ack { job_id: ids[0].clone(), fence, kind: AckKind::Complete { result: Some(b"after".to_vec()) } },
    ];
    let out = s.ack(AckRequest { acks: kinds.to_vec(), now: later + 5 }).await.unwrap();
    assert_eq!(out, vec![AckOutcome::Superseded, AckOutcome::Acknowledged]);
    assert_eq!(s.get_result(&ids[0]).await.unwrap().as_deref(), Some(&b"after"[..]));

    // A job claimed after the upgrade counts on from its migrated sequence.
    let next = claim_one(&s, "c", later + 6).await;
    assert_eq!((next.job.id.clone(), next.fence.claim_seq), (ids[2].clone(), 1));
    s.close().await.unwrap();
}
