//! The write connection writes a commit's WAL frames out together (the store's `wal_vfs`):
//! every commit is readable by another connection the moment it is acknowledged, a transaction
//! larger than the writer's page cache (frames spilled before the commit, pages rewritten in
//! place) commits whole, and a process killed between commits loses none it acknowledged.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use flexiq_core::store::{ClaimRequest, EnqueueRequest, JobStore};
use flexiq_core::{EnqueueOptions, NewJob, Store};
use flexiq_store_sqlite::{Durability, SqliteOptions, SqliteStore};
use rusqlite::{Connection, OpenFlags};

use crate::two_process::{child_role, spawn_child};
use crate::{job_on, T0};

/// A reader on the platform VFS, as another process would open the file.
fn reader(db: &Path) -> Connection {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

fn count(c: &Connection, sql: &str) -> i64 {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn integrity(db: &Path) -> String {
    reader(db).query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_commit_is_readable_by_another_connection_at_once() {
    // `full` syncs the WAL at each commit, so the kept frames are also written out by the sync.
    for durability in [Durability::Normal, Durability::Full] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("frames.db");
        let s = SqliteStore::open(&db, SqliteOptions { durability, ..Default::default() }).unwrap();
        let r = reader(&db);
        for i in 1..=300_i64 {
            s.enqueue(EnqueueRequest { jobs: vec![job_on("q")], max_pending: None, now: T0 }).await.unwrap();
            assert_eq!(count(&r, "SELECT COUNT(*) FROM jobs"), i, "commit {i} not visible ({durability:?})");
            if i % 50 == 0 {
                // Claims rewrite pages the enqueues wrote: later commits change old frames' pages.
                let req =
                    ClaimRequest { queues: vec!["q".into()], limit: 20, worker_id: "w".into(), now: T0 };
                let got = s.claim(req).await.unwrap();
                assert_eq!(got.len(), 20);
                assert_eq!(count(&r, "SELECT COUNT(*) FROM jobs WHERE status = 1"), i / 50 * 20);
            }
        }
        s.close().await.unwrap();
        assert_eq!(integrity(&db), "ok");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_larger_than_the_page_cache_commits_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("large.db");
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    // 3,000 jobs of 6 KiB each: about 18 MiB in one transaction against a 4 MiB writer cache,
    // so SQLite spills frames before the commit and rewrites some of them in place.
    let jobs: Vec<NewJob> = (0..3_000)
        .map(|i| {
            let payload = format!("{i:06}").repeat(1_024).into_bytes();
            let opts = EnqueueOptions { queue: Some("big".into()), ..Default::default() };
            NewJob::build("t", payload, opts, T0).unwrap()
        })
        .collect();
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T0 }).await.unwrap();
    let r = reader(&db);
    assert_eq!(count(&r, "SELECT COUNT(*) FROM jobs WHERE queue = 'big'"), 3_000);
    assert_eq!(count(&r, "SELECT SUM(length(payload)) FROM jobs"), 3_000 * 6 * 1_024);
    // A small commit after the large one is visible too.
    s.enqueue(EnqueueRequest { jobs: vec![job_on("small")], max_pending: None, now: T0 }).await.unwrap();
    assert_eq!(count(&r, "SELECT COUNT(*) FROM jobs WHERE queue = 'small'"), 1);
    drop(r);
    assert_eq!(integrity(&db), "ok");
    s.close().await.unwrap();
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let req = ClaimRequest { queues: vec!["big".into()], limit: 3_000, worker_id: "w".into(), now: T0 };
    let got = s.claim(req).await.unwrap();
    assert_eq!(got.len(), 3_000);
    assert!(got.iter().all(|c| c.job.payload.len() == 6 * 1_024));
    s.close().await.unwrap();
    assert_eq!(integrity(&db), "ok");
}

const TEST: &str = "wal_frames::a_killed_writer_loses_no_acknowledged_commit";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_writer_loses_no_acknowledged_commit() {
    if let Some((_, s, out)) = child_role() {
        // Enqueue one job at a time and record each id once its commit is acknowledged.
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(out).unwrap();
        loop {
            let job = job_on("crash");
            let id = job.id.to_string();
            s.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now: T0 }).await.unwrap();
            writeln!(f, "{id}").unwrap();
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    SqliteStore::open(&db, SqliteOptions::default()).unwrap().close().await.unwrap();
    let mut recorded = Vec::new();
    for round in 0..3 {
        let out = dir.path().join(format!("acked-{round}.txt"));
        let mut child = spawn_child(TEST, "enqueue", &db, &out);
        // Kill only once the child is writing: some ids are on record.
        let started = std::time::Instant::now();
        while std::fs::read_to_string(&out).map(|t| t.lines().count()).unwrap_or(0) < 200 {
            assert!(started.elapsed() < Duration::from_secs(60), "the child never enqueued");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        child.kill().unwrap(); // SIGKILL, between or inside commits
        child.wait().unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        recorded.extend(text.lines().filter(|l| l.len() > 10).map(str::to_string));
    }
    assert_eq!(integrity(&db), "ok");
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let r = reader(&db);
    let mut stmt = r.prepare("SELECT COUNT(*) FROM jobs WHERE id = ?1").unwrap();
    for id in &recorded {
        let n: i64 = stmt.query_row([id], |row| row.get(0)).unwrap();
        assert_eq!(n, 1, "job {id} was acknowledged to the killed writer and is gone");
    }
    assert!(recorded.len() >= 600);
    drop(stmt);
    drop(r);
    s.close().await.unwrap();
}
