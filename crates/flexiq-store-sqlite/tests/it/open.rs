//! Opening: durability, `auto_migrate: false`, namespaces sharing one writer, close.

use flexiq_core::store::{EnqueueRequest, Inspect, JobStore, Schema};
use flexiq_core::Store;
use flexiq_store_sqlite::{Durability, SqliteOptions, SqliteStore};

use crate::{job_on, T0};

#[tokio::test]
async fn durability_sets_synchronous_and_the_file_is_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.db");
    let full = SqliteStore::open(&path, SqliteOptions { durability: Durability::Full, ..Default::default() })
        .unwrap();
    assert_eq!(full.durability().await.unwrap(), Durability::Full);
    let normal = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    assert_eq!(normal.durability().await.unwrap(), Durability::Normal);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn auto_migrate_off_opens_without_ddl_and_queries_fail_until_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.db");
    let no_ddl = SqliteOptions { auto_migrate: false, ..Default::default() };
    let s = SqliteStore::open(&path, no_ddl.clone()).unwrap();
    let tables = |path: &std::path::Path| -> i64 {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(tables(&path), 0, "auto_migrate false must not run DDL");
    let err = s.count_pending("q").await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT");
    assert!(err.to_string().contains("migrate()"), "{err}");
    let err =
        s.enqueue(EnqueueRequest { jobs: vec![job_on("q")], max_pending: None, now: T0 }).await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT");
    assert_eq!(s.migrate().await.unwrap().applied, vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert!(tables(&path) > 0);
    assert_eq!(s.count_pending("q").await.unwrap(), 0);
    let again = SqliteStore::open(&path, no_ddl).unwrap();
    assert!(again.migrate().await.unwrap().applied.is_empty());
}

#[tokio::test]
async fn bad_options_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.db");
    let err =
        SqliteStore::open(&path, SqliteOptions { read_connections: 0, ..Default::default() }).unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    let err = SqliteStore::open(":memory:", SqliteOptions::default()).unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert!(!path.exists(), "refused options must not create the file");
}

#[tokio::test]
async fn with_namespace_shares_the_file_and_scopes_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let a = SqliteStore::open(dir.path().join("n.db"), SqliteOptions::default()).unwrap();
    let b = a.with_namespace("tenant-b").unwrap();
    assert_eq!(b.namespace(), "tenant-b");
    assert_eq!(b.path(), a.path());
    b.enqueue(EnqueueRequest { jobs: vec![job_on("q")], max_pending: None, now: T0 }).await.unwrap();
    assert_eq!(b.count_pending("q").await.unwrap(), 1);
    assert_eq!(a.count_pending("q").await.unwrap(), 0);
    assert_eq!(a.with_namespace("").unwrap_err().code(), "INVALID_ARGUMENT");
    a.close().await.unwrap();
    assert_eq!(a.count_pending("q").await.unwrap_err().code(), "CLOSED");
    assert_eq!(a.with_namespace("c").unwrap_err().code(), "CLOSED");
    assert_eq!(b.count_pending("q").await.unwrap(), 1, "closing one handle leaves the others open");
}

#[test]
fn open_needs_no_running_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("sync.db"), SqliteOptions::default()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let n = rt.block_on(async {
        s.enqueue(EnqueueRequest { jobs: vec![job_on("q")], max_pending: None, now: T0 }).await.unwrap();
        s.count_pending("q").await.unwrap()
    });
    assert_eq!(n, 1);
}

#[tokio::test]
async fn a_job_acked_twice_in_one_call_is_applied_once() {
    use flexiq_core::store::{Ack, AckKind, AckRequest, ClaimRequest, GetMetricsRequest, History};
    use flexiq_core::AckOutcome;
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("acks.db"), SqliteOptions::default()).unwrap();
    s.enqueue(EnqueueRequest { jobs: vec![job_on("q")], max_pending: None, now: T0 }).await.unwrap();
    let c = s
        .claim(ClaimRequest { queues: vec![], limit: 1, worker_id: "w".into(), now: T0 })
        .await
        .unwrap()
        .remove(0);
    let ack = Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } };
    let out = s.ack(AckRequest { acks: vec![ack.clone(), ack], now: T0 + 5 }).await.unwrap();
    assert_eq!(out, vec![AckOutcome::Acknowledged, AckOutcome::Superseded]);
    let metrics = s.get_metrics(GetMetricsRequest { since_ms: T0, task: None }).await.unwrap();
    assert_eq!(metrics.len(), 1, "one execution, one metric row");
    assert_eq!(metrics[0].duration_ms, 5);
}
