//! Two processes on one file. Each test re-executes this test binary as a child process
//! (switched by an environment variable) that opens the same file.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use flexiq_core::store::{ClaimRequest, EnqueueRequest, JobStore, WaitForWorkRequest};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::{job_on, T0};

const ROLE: &str = "FLEXIQ_IT_CHILD_ROLE";
const DB: &str = "FLEXIQ_IT_CHILD_DB";
const OUT: &str = "FLEXIQ_IT_CHILD_OUT";

pub(crate) fn spawn_child(test: &str, role: &str, db: &Path, out: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads", "1", "--nocapture"])
        .env(ROLE, role)
        .env(DB, db)
        .env(OUT, out)
        .spawn()
        .unwrap()
}

pub(crate) fn child_role() -> Option<(String, SqliteStore, std::path::PathBuf)> {
    let role = std::env::var(ROLE).ok()?;
    let db = std::env::var(DB).unwrap();
    let out = std::env::var(OUT).unwrap();
    Some((role, SqliteStore::open(db, SqliteOptions::default()).unwrap(), out.into()))
}

async fn claim_all(s: &SqliteStore, worker: &str) -> Vec<String> {
    let mut ids = Vec::new();
    loop {
        let req = ClaimRequest { queues: vec!["race".into()], limit: 10, worker_id: worker.into(), now: T0 };
        let got = s.claim(req).await.unwrap();
        if got.is_empty() {
            return ids;
        }
        ids.extend(got.into_iter().map(|c| c.job.id.to_string()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_enqueue_wakes_a_waiting_claimer() {
    if let Some((_, s, _)) = child_role() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        s.enqueue(EnqueueRequest { jobs: vec![job_on("wake")], max_pending: None, now: T0 }).await.unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("wake.db");
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let mut child = spawn_child(
        "two_process::another_process_enqueue_wakes_a_waiting_claimer",
        "enqueue",
        &db,
        &dir.path().join("out"),
    );
    let start = Instant::now();
    let claimed = loop {
        let req = ClaimRequest { queues: vec!["wake".into()], limit: 1, worker_id: "parent".into(), now: T0 };
        let got = s.claim(req).await.unwrap();
        if !got.is_empty() {
            break got;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no job from the child process");
        s.wait_for_work(WaitForWorkRequest { queues: vec!["wake".to_string()], timeout_ms: 30_000 })
            .await
            .unwrap();
    };
    let waited = start.elapsed();
    assert!(child.wait().unwrap().success());
    assert_eq!(claimed.len(), 1);
    assert!(waited < Duration::from_secs(10), "the wait was not woken by the other process ({waited:?})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_never_claim_the_same_job() {
    if let Some((_, s, out)) = child_role() {
        let ids = claim_all(&s, "child").await;
        std::fs::write(out, ids.join("\n")).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("race.db");
    let out = dir.path().join("child-ids.txt");
    let s = SqliteStore::open(&db, SqliteOptions::default()).unwrap();
    let jobs: Vec<_> = (0..3_000).map(|_| job_on("race")).collect();
    s.enqueue(EnqueueRequest { jobs, max_pending: None, now: T0 }).await.unwrap();
    let mut child = spawn_child("two_process::two_processes_never_claim_the_same_job", "claim", &db, &out);
    let mine = claim_all(&s, "parent").await;
    assert!(child.wait().unwrap().success());
    let theirs: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    let all: HashSet<&String> = mine.iter().chain(theirs.iter()).collect();
    assert_eq!(mine.len() + theirs.len(), 3_000, "every job claimed exactly once");
    assert_eq!(all.len(), 3_000, "a job was claimed twice");
}
