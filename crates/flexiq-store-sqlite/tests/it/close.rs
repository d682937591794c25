//! Closing the last handle leaves a self-contained `.db` file: the WAL is checkpointed into it
//! and truncated, so copying the `.db` alone copies every job. A reader that keeps the WAL in
//! use makes the close log a warning and leave the WAL, losing nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use flexiq_core::store::{Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, Inspect, JobStore};
use flexiq_core::{JobId, JobStatus, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

/// What each job should look like after the run.
struct Expected {
    id: JobId,
    status: JobStatus,
    result: Option<Vec<u8>>,
}

/// Enqueues `n` jobs in bulk, completes half of them with a result of their own, fails a
/// quarter for good, and leaves the rest pending.
async fn run_jobs(s: &SqliteStore, n: usize) -> Vec<Expected> {
    let jobs: Vec<_> = (0..n).map(|_| job_on("q")).collect();
    let mut expected: Vec<Expected> = jobs
        .iter()
        .map(|j| Expected { id: j.id.clone(), status: JobStatus::Pending, result: None })
        .collect();
    for chunk in jobs.chunks(1_000) {
        s.enqueue(EnqueueRequest { jobs: chunk.to_vec(), max_pending: None, now: T0 }).await.unwrap();
    }
    let mut settled = 0;
    while settled < n * 3 / 4 {
        let req = ClaimRequest { queues: vec!["q".into()], limit: 250, worker_id: "w".into(), now: T0 };
        let claimed = s.claim(req).await.unwrap();
        assert!(!claimed.is_empty());
        let mut acks = Vec::new();
        for c in claimed {
            let i = expected.iter().position(|e| e.id == c.job.id).unwrap();
            let kind = if settled % 3 == 2 {
                expected[i].status = JobStatus::Failed;
                AckKind::Fail { error: format!("bad input {i}"), retryable: false }
            } else {
                let result = format!("result of {i}").into_bytes();
                expected[i].status = JobStatus::Completed;
                expected[i].result = Some(result.clone());
                AckKind::Complete { result: Some(result) }
            };
            acks.push(Ack { job_id: c.job.id, fence: c.fence, kind });
            settled += 1;
        }
        s.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
    }
    expected
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// The size of the file's WAL, `None` when there is none.
fn wal_len(db: &Path) -> Option<u64> {
    std::fs::metadata(with_suffix(db, "-wal")).ok().map(|m| m.len())
}

/// Copies only the `.db` file into a fresh directory, opens the copy and checks every job.
async fn copy_holds_every_job(db: &Path, expected: &[Expected]) {
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("copy.db");
    std::fs::copy(db, &copy).unwrap();
    let s = SqliteStore::open(&copy, SqliteOptions::default()).unwrap();
    assert_eq!(s.stats(None).await.unwrap().total(), expected.len() as u64);
    for e in expected {
        let job = s.get(&e.id).await.unwrap().unwrap_or_else(|| panic!("job {} missing from the copy", e.id));
        assert_eq!(job.status, e.status, "job {}", e.id);
        assert_eq!(job.result, e.result, "job {}", e.id);
    }
    s.close().await.unwrap();
}

#[tokio::test]
async fn close_checkpoints_the_wal_so_the_db_file_alone_holds_every_job() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let expected = run_jobs(&s, 3_000).await;
    assert!(wal_len(&db).unwrap_or(0) > 0, "the jobs are in the WAL before the close");
    let other_ns = s.with_namespace("other").unwrap();
    s.close().await.unwrap();
    assert!(wal_len(&db).unwrap_or(0) > 0, "closing one of two handles does not checkpoint yet");
    other_ns.close().await.unwrap();
    assert_eq!(wal_len(&db).unwrap_or(0), 0, "the WAL is gone or empty after the last close");
    copy_holds_every_job(&db, &expected).await;
}

#[tokio::test]
async fn dropping_the_last_handle_checkpoints_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("dropped.db");
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let expected = run_jobs(&s, 400).await;
    let clone = s.clone();
    drop(s);
    assert!(wal_len(&db).unwrap_or(0) > 0, "a clone still holds the handle");
    drop(clone);
    assert_eq!(wal_len(&db).unwrap_or(0), 0, "the WAL is gone or empty once the last handle is dropped");
    copy_holds_every_job(&db, &expected).await;
}

#[tokio::test]
async fn another_open_but_idle_connection_does_not_keep_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let expected = run_jobs(&s, 400).await;
    // Another process's connection, open between its transactions: SQLite's own checkpoint on
    // closing the last connection would not run, the store's close must.
    let idle = rusqlite::Connection::open(&db).unwrap();
    let seen: i64 = idle.query_row("SELECT COUNT(*) FROM jobs", [], |r| r.get(0)).unwrap();
    assert_eq!(seen, 400);
    s.close().await.unwrap();
    assert_eq!(wal_len(&db), Some(0), "the WAL stays for the open connection, truncated to zero bytes");
    copy_holds_every_job(&db, &expected).await;
    drop(idle);
}

/// Warnings logged anywhere in this test binary (the close runs on the store's own threads).
fn warnings() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .with_writer(move || SharedWriter(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber");
        logs
    })
    .clone()
}

struct SharedWriter(Arc<Mutex<Vec<u8>>>);

impl Write for SharedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_reader_holding_the_wal_makes_close_warn_and_keep_it_without_losing_jobs() {
    let logs = warnings();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("held.db");
    let opts = SqliteOptions { busy_timeout_ms: 100, ..Default::default() };
    let s = SqliteStore::open(&db, opts).unwrap();
    let expected = run_jobs(&s, 200).await;
    // Another connection, as another process would, inside a read transaction: the WAL cannot
    // be reset under it.
    let reader = rusqlite::Connection::open(&db).unwrap();
    reader.execute_batch("BEGIN").unwrap();
    let seen: i64 = reader.query_row("SELECT COUNT(*) FROM jobs", [], |r| r.get(0)).unwrap();
    assert_eq!(seen, 200);
    s.close().await.unwrap();
    let wal = wal_len(&db).unwrap_or(0);
    assert!(wal > 0, "the WAL stays while the reader holds it");
    let logged = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    let line = logged.lines().find(|l| l.contains(&db.display().to_string())).unwrap_or_else(|| {
        panic!("no warning names {}:\n{logged}", db.display());
    });
    assert!(line.contains("WARN") && line.contains("without truncating its WAL"), "{line}");
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    // Nothing was lost: the file with its WAL has every job, and the next close truncates.
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    s.close().await.unwrap();
    assert_eq!(wal_len(&db).unwrap_or(0), 0);
    copy_holds_every_job(&db, &expected).await;
}
