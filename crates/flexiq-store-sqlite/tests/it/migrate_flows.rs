//! Upgrading a file written by schema version 6 (before flows and dedup modes): its edges read
//! policy 0 and keep their plain `depends_on` meaning (a failed dependency cancels its
//! dependents, transitively), and dedup keys work once migrated. Also the removals of the file
//! itself that drop a dedup record beside its holder: the retention purge of the archive and
//! the orphan sweep.

use std::collections::BTreeMap;
use std::path::Path;

use flexiq_core::dedup::{DedupMode, DedupOptions};
use flexiq_core::flow::EdgePolicy;
use flexiq_core::store::{
    Ack, AckKind, AckRequest, Admin, ArchiveTerminalRequest, ClaimRequest, DedupJobIdRequest, Deduplication,
    DependenciesRequest, EnqueueRequest, Flows, JobStore, Maintenance, RetentionRequest, Schema,
};
use flexiq_core::{EnqueueOptions, JobId, JobStatus, NewJob, RetentionTable, RetentionWindows, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

fn raw(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    conn
}

fn count(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Turns a current file back into a version 6 one: no dedup records, edges without a policy,
/// and the version row set back to 6.
fn downgrade_to_version_6(path: &Path) {
    let conn = raw(path);
    conn.execute_batch(
        "DROP TABLE dedup_keys;
         ALTER TABLE job_deps DROP COLUMN policy;
         UPDATE schema_meta SET version = 6 WHERE id = 1;",
    )
    .unwrap();
    let left = count(
        &conn,
        "SELECT (SELECT COUNT(*) FROM pragma_table_info('job_deps') WHERE name = 'policy')
              + (SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'dedup_keys%')",
    );
    assert_eq!(left, 0, "the downgraded file has no policy column and no dedup records");
}

fn after(queue: &str, deps: &[&JobId]) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some(queue.into()),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..Default::default()
    };
    NewJob::build("t", b"p".to_vec(), opts, T0).unwrap()
}

fn keyed(key: &str, mode: DedupMode, ttl_ms: Option<u64>) -> NewJob {
    let dedup = DedupOptions { id: key.into(), mode, ttl_ms, ..Default::default() };
    let opts = EnqueueOptions { queue: Some("d".into()), dedup: Some(dedup), ..Default::default() };
    NewJob::build("t", b"p".to_vec(), opts, T0).unwrap()
}

async fn put(s: &SqliteStore, jobs: Vec<NewJob>, now: i64) -> Vec<(JobId, bool)> {
    let out = s.enqueue(EnqueueRequest { jobs, max_pending: None, now }).await.unwrap();
    out.into_iter().map(|e| (e.id, e.created)).collect()
}

async fn status(s: &SqliteStore, id: &JobId) -> JobStatus {
    s.get(id).await.unwrap().expect("job exists").status
}

/// Claims the one due job of `queue` and acks it with `kind`.
async fn finish(s: &SqliteStore, queue: &str, kind: AckKind, now: i64) -> JobId {
    let req = ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: "w".into(), now };
    let c = s.claim(req).await.unwrap().pop().expect("a job to claim");
    let ack = Ack { job_id: c.job.id.clone(), fence: c.fence, kind };
    s.ack(AckRequest { acks: vec![ack], now }).await.unwrap();
    c.job.id
}

async fn holder(s: &SqliteStore, key: &str, now: i64) -> Option<JobId> {
    s.dedup_job_id(DedupJobIdRequest { key: key.into(), now }).await.unwrap()
}

#[tokio::test]
async fn a_version_6_file_keeps_its_edges_as_plain_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v6.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let root = job_on("a");
    let mid = after("b", &[&root.id]);
    let top = after("b", &[&mid.id]);
    let ids = [root.id.clone(), mid.id.clone(), top.id.clone()];
    put(&s, vec![root, mid, top], T0).await;
    s.close().await.unwrap();

    downgrade_to_version_6(&path);
    let no_ddl =
        SqliteStore::open(&path, SqliteOptions { auto_migrate: false, ..Default::default() }).unwrap();
    let err = no_ddl.dedup_job_id(DedupJobIdRequest { key: "k".into(), now: T0 }).await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "a version 6 file without auto_migrate asks for migrate(): {err}");
    assert_eq!(
        no_ddl.migrate().await.unwrap().applied,
        vec![7, 8, 9, 10],
        "the flow step runs, then the scheduler step (which finds its work done)"
    );
    no_ddl.close().await.unwrap();
    downgrade_to_version_6(&path);

    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    assert!(s.migrate().await.unwrap().applied.is_empty(), "the open already migrated the file");
    assert_eq!(count(&raw(&path), "SELECT COUNT(*) FROM job_deps WHERE policy = 0"), 2, "old edges read 0");
    let deps = s
        .get_dependencies(DependenciesRequest { job_id: ids[1].clone(), after: None, limit: 10 })
        .await
        .unwrap();
    assert_eq!(deps.unprocessed.len(), 1);
    assert_eq!((&deps.unprocessed[0].id, deps.unprocessed[0].policy), (&ids[0], EdgePolicy::CancelDependent));

    // A plain edge keeps its meaning: the failure cancels both levels above.
    let fail = AckKind::Fail { error: "boom".into(), retryable: false };
    assert_eq!(finish(&s, "a", fail, T0 + 1).await, ids[0]);
    assert_eq!(status(&s, &ids[0]).await, JobStatus::Failed);
    for id in &ids[1..] {
        let j = s.get(id).await.unwrap().unwrap();
        assert_eq!(j.status, JobStatus::Cancelled, "job {id}");
        assert!(j.last_error.unwrap_or_default().contains("did not complete"));
    }

    // The upgraded file takes dedup keys.
    let first = put(&s, vec![keyed("k", DedupMode::Simple, None)], T0 + 2).await.remove(0);
    let again = put(&s, vec![keyed("k", DedupMode::Simple, None)], T0 + 3).await.remove(0);
    assert!(first.1 && !again.1);
    assert_eq!(again.0, first.0);
    s.close().await.unwrap();
}

#[tokio::test]
async fn the_archive_purge_and_the_orphan_sweep_drop_the_dedup_records_of_their_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dedup.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let records =
        |key: &str| count(&raw(&path), &format!("SELECT COUNT(*) FROM dedup_keys WHERE key = '{key}'"));

    // A throttled holder archived and then purged by retention takes its record along.
    let (archived, _) =
        put(&s, vec![keyed("purged", DedupMode::Throttle, Some(3_600_000))], T0).await.remove(0);
    assert_eq!(finish(&s, "d", AckKind::Complete { result: None }, T0 + 1).await, archived);
    let archive = ArchiveTerminalRequest { cutoff_ms: T0 + 2, limit: 10, now: T0 + 2 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    assert_eq!(holder(&s, "purged", T0 + 3).await, Some(archived.clone()), "the window still holds");
    let windows = RetentionWindows(BTreeMap::from([(RetentionTable::ArchivedJobs, Some(1))]));
    let purged = s.retention_purge(RetentionRequest { windows, now: T0 + 10 }).await.unwrap();
    assert_eq!(purged.get(&RetentionTable::ArchivedJobs), Some(&1));
    assert_eq!(records("purged"), 0, "the purged holder's record is gone");
    assert_eq!(holder(&s, "purged", T0 + 11).await, None);

    // A record whose holder was deleted behind the store's back is an orphan; a live one is not.
    let (vanished, _) = put(&s, vec![keyed("orphan", DedupMode::Simple, None)], T0 + 12).await.remove(0);
    let (live, _) = put(&s, vec![keyed("kept", DedupMode::Simple, None)], T0 + 12).await.remove(0);
    raw(&path).execute("DELETE FROM jobs WHERE id = ?1", [vanished.as_str()]).unwrap();
    assert_eq!(records("orphan"), 1);
    assert!(s.remove_orphans().await.unwrap() >= 1);
    assert_eq!((records("orphan"), records("kept")), (0, 1));
    assert_eq!(holder(&s, "kept", T0 + 13).await, Some(live));
    s.close().await.unwrap();
}
