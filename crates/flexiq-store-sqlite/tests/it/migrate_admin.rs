//! Upgrading a file written by schema version 4 (before queue administration): the step only
//! builds the admin indexes, so the file's rows stay as they are (a file not yet migrated keeps
//! serving, just without the indexes) and the admin operations work on them at once.

use std::path::Path;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, Admin, ClaimRequest, CleanRequest, EnqueueRequest, Inspect, JobStore,
    ObliterateRequest, Schema,
};
use flexiq_core::{JobStatus, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

/// The indexes schema version 5 adds.
const V5_INDEXES: [&str; 6] = [
    "jobs_queue_finished",
    "jobs_queue_waiting",
    "archived_queue",
    "dead_letters_job",
    "dead_letters_queue",
    "task_metrics_job",
];

fn indexes_present(path: &Path) -> usize {
    let conn = rusqlite::Connection::open(path).unwrap();
    V5_INDEXES
        .iter()
        .filter(|name| {
            conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1)",
                [name],
                |r| r.get::<_, bool>(0),
            )
            .unwrap()
        })
        .count()
}

/// Turns a current file back into a version 4 one: the admin indexes dropped and the version
/// row set back to 4.
fn downgrade_to_version_4(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    for name in V5_INDEXES {
        conn.execute_batch(&format!("DROP INDEX {name}")).unwrap();
    }
    conn.execute_batch("UPDATE schema_meta SET version = 4 WHERE id = 1").unwrap();
    drop(conn);
    assert_eq!(indexes_present(path), 0);
}

#[tokio::test]
async fn a_version_4_file_gains_the_admin_indexes_and_its_jobs_can_be_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let jobs = vec![job_on("q"), job_on("q"), job_on("q")];
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T0 }).await.unwrap();
    let req = ClaimRequest { queues: vec!["q".into()], limit: 2, worker_id: "w".into(), now: T0 };
    let claimed = s.claim(req).await.unwrap();
    let acks = claimed
        .iter()
        .map(|c| Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } })
        .collect();
    s.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
    s.close().await.unwrap();

    downgrade_to_version_4(&path);
    let no_ddl =
        SqliteStore::open(&path, SqliteOptions { auto_migrate: false, ..Default::default() }).unwrap();
    let job = no_ddl.get(&claimed[0].job.id).await.unwrap().expect("the job is read without the indexes");
    assert_eq!(
        job.status,
        JobStatus::Completed,
        "the step adds no column, so an unmigrated file still serves"
    );
    assert_eq!(
        no_ddl.migrate().await.unwrap().applied,
        vec![5, 6, 7, 8, 9, 10],
        "the admin step runs, then the stall, flow and scheduler steps (which find their work done)"
    );
    assert_eq!(indexes_present(&path), V5_INDEXES.len());
    no_ddl.close().await.unwrap();
    downgrade_to_version_4(&path);

    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    assert!(s.migrate().await.unwrap().applied.is_empty(), "the open already migrated the file");
    assert_eq!(indexes_present(&path), V5_INDEXES.len());
    let clean =
        CleanRequest { queue: "q".into(), status: JobStatus::Completed, grace_ms: 0, limit: 10, now: T0 + 2 };
    let mut removed = s.clean(clean).await.unwrap();
    removed.sort();
    let mut want: Vec<_> = claimed.iter().map(|c| c.job.id.clone()).collect();
    want.sort();
    assert_eq!(removed, want, "the jobs finished before the upgrade are found by the new index");
    let req = ObliterateRequest { queue: "q".into(), force: false, count: 10, now: T0 + 3 };
    assert_eq!(s.obliterate(req).await.unwrap(), 0);
    assert_eq!(s.stats(None).await.unwrap().total(), 0);
    s.close().await.unwrap();
}
