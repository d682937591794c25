//! Queue administration on the SQLite file itself: orphans planted with raw SQL are found and
//! removed (and nothing that has an owner), an obliterate takes the queue's archived copies and
//! leaves no row naming the queue, and a job found only in the archive can be removed.

use std::path::Path;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, Admin, AppendLogRequest, ArchiveTerminalRequest, ClaimRequest, EnqueueRequest,
    History, JobStore, Maintenance, ObliterateRequest, QueueControl, RemoveJobRequest,
};
use flexiq_core::{EnqueueOptions, JobId, JobStatus, NewJob, Store};
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

async fn put(s: &SqliteStore, j: NewJob) -> JobId {
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: T0 }).await.unwrap().remove(0).id
}

fn after(queue: &str, deps: &[&JobId]) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some(queue.into()),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..Default::default()
    };
    NewJob::build("t", b"p".to_vec(), opts, T0).unwrap()
}

/// Claims and completes the one pending job of `queue`, with a log line first.
async fn finish(s: &SqliteStore, queue: &str, now: i64) -> JobId {
    let req = ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: "w".into(), now };
    let c = s.claim(req).await.unwrap().pop().expect("a job to finish");
    let log = AppendLogRequest { id: c.job.id.clone(), level: "info".into(), message: "m".into(), now };
    s.append_log(log).await.unwrap();
    let ack = Ack { job_id: c.job.id.clone(), fence: c.fence, kind: AckKind::Complete { result: None } };
    s.ack(AckRequest { acks: vec![ack], now }).await.unwrap();
    c.job.id
}

#[tokio::test]
async fn remove_orphans_takes_planted_orphans_and_frees_a_job_waiting_on_a_vanished_dependency() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("orphans.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    let live = put(&s, job_on("q")).await;
    let archived = put(&s, job_on("done")).await;
    assert_eq!(finish(&s, "done", T0).await, archived);
    let archive = ArchiveTerminalRequest { cutoff_ms: T0 + 1, limit: 10, now: T0 + 1 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    let vanished = put(&s, job_on("q")).await;
    let waiter = put(&s, after("q", &[&vanished])).await;
    assert_eq!(s.get(&waiter).await.unwrap().unwrap().status, JobStatus::Waiting);

    let conn = raw(&path);
    conn.execute_batch(&format!(
        "INSERT INTO job_errors (id, ns, job_id, attempt, error, failed_at) VALUES ('e1', 'default', 'ghost', 1, 'x', 1);
         INSERT INTO task_logs (ns, job_id, level, message, logged_at) VALUES ('default', 'ghost', 'info', 'm', 1);
         INSERT INTO task_metrics (ns, job_id, task, queue, attempt, success, duration_ms, recorded_at)
             VALUES ('default', 'ghost', 't', 'q', 1, 1, 5, 1);
         INSERT INTO job_partials (job_id, seq, data, published_at) VALUES ('ghost', 1, x'00', 1);
         INSERT INTO replays (id, ns, original_job_id, replay_job_id, replayed_at) VALUES ('r1', 'default', 'ghost', '{live}', 1);
         INSERT INTO job_deps (job_id, dep_id) VALUES ('ghost', '{live}');
         INSERT INTO task_logs (ns, job_id, level, message, logged_at) VALUES ('other', 'ghost', 'info', 'm', 1);
         INSERT INTO job_errors (id, ns, job_id, attempt, error, failed_at) VALUES ('e2', 'default', '{archived}', 1, 'x', 1);
         DELETE FROM jobs WHERE id = '{vanished}';"
    ))
    .unwrap();

    assert_eq!(
        s.remove_orphans().await.unwrap(),
        7,
        "errors, logs, metrics, partials, replays and two edges"
    );
    let j = s.get(&waiter).await.unwrap().unwrap();
    assert_eq!(
        (j.status, j.depends_on.len()),
        (JobStatus::Pending, 0),
        "the waiter starts as if it had no dependency"
    );
    for (sql, want) in [
        ("SELECT COUNT(*) FROM task_logs WHERE ns = 'other'", 1),
        ("SELECT COUNT(*) FROM job_errors", 1),
        ("SELECT COUNT(*) FROM task_metrics WHERE job_id = 'ghost'", 0),
        ("SELECT COUNT(*) FROM job_partials", 0),
        ("SELECT COUNT(*) FROM replays", 0),
        ("SELECT COUNT(*) FROM job_deps", 0),
    ] {
        assert_eq!(count(&conn, sql), want, "{sql}");
    }
    assert_eq!(s.job_logs(&archived).await.unwrap().len(), 1, "an archived job's history has an owner");
    assert!(s.get(&live).await.unwrap().is_some());
    assert_eq!(s.remove_orphans().await.unwrap(), 0, "a second sweep finds nothing");
    let other = s.with_namespace("other").unwrap();
    assert_eq!(other.remove_orphans().await.unwrap(), 1, "each namespace sweeps its own rows");
    s.close().await.unwrap();
}

#[tokio::test]
async fn obliterate_takes_the_archive_and_leaves_no_row_naming_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("obliterate.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    put(&s, job_on("gone")).await;
    let old = finish(&s, "gone", T0).await;
    let archive = ArchiveTerminalRequest { cutoff_ms: T0 + 1, limit: 10, now: T0 + 1 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    put(&s, job_on("gone")).await;
    let kept = put(&s, job_on("kept")).await;
    s.pause("gone").await.unwrap();
    let req = ObliterateRequest { queue: "gone".into(), force: false, count: 10, now: T0 + 2 };
    assert_eq!(s.obliterate(req).await.unwrap(), 0);
    assert!(s.get(&old).await.unwrap().is_none(), "the archived copy went too");
    let conn = raw(&path);
    for table in ["jobs", "archived_jobs", "queue_counts", "queue_state", "dead_letters"] {
        let n = count(&conn, &format!("SELECT COUNT(*) FROM {table} WHERE queue = 'gone'"));
        assert_eq!(n, 0, "{table} still names the queue");
    }
    assert_eq!(count(&conn, "SELECT COUNT(*) FROM task_logs"), 0, "the archived job's log went with it");
    assert!(s.get(&kept).await.unwrap().is_some());
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_job_found_only_in_the_archive_is_removed_with_its_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archived.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    put(&s, job_on("q")).await;
    let id = finish(&s, "q", T0).await;
    let archive = ArchiveTerminalRequest { cutoff_ms: T0 + 1, limit: 10, now: T0 + 1 };
    assert_eq!(s.archive_terminal(archive).await.unwrap(), 1);
    let req = RemoveJobRequest { job_id: id.clone(), remove_children: true, now: T0 + 2 };
    assert_eq!(s.remove_job(req.clone()).await.unwrap().jobs, vec![id.clone()]);
    assert!(s.get(&id).await.unwrap().is_none());
    let conn = raw(&path);
    assert_eq!(
        count(&conn, "SELECT COUNT(*) FROM task_logs") + count(&conn, "SELECT COUNT(*) FROM task_metrics"),
        0
    );
    assert_eq!(s.remove_job(req).await.unwrap_err().code(), "NOT_FOUND");
    s.close().await.unwrap();
}
