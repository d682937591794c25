//! Crash and shutdown reliability.
//!
//! The crash test re-executes this test binary as a child worker process (selected by the
//! `FLEXIQ_IT_CHILD_DB` environment variable) and kills it with SIGKILL several times in the
//! middle of a run, while a second worker in this process keeps going and rescues the dead
//! worker's leases. Every job must complete exactly once: one success metric row per job.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flexiq_runtime::{connect, ConnectOptions, EnqueueItem, EnqueueOptions, Queue, Worker, WorkerConfig};

use crate::common::{self, eventually, open};

const CHILD_ENV: &str = "FLEXIQ_IT_CHILD_DB";
const JOBS: usize = 1_000;

/// The crash tests' worker: four slots, a small prefetch buffer.
fn crash_config(id: &str) -> WorkerConfig {
    common::crash_config(id, 4, 2)
}

fn register_step(w: &mut Worker) {
    w.register("step", |ctx| async move {
        tokio::time::sleep(Duration::from_millis(15)).await;
        Ok(Some(ctx.payload().to_vec()))
    })
    .unwrap();
}

/// Entry point of the child worker process: does nothing unless this binary was re-executed
/// with `FLEXIQ_IT_CHILD_DB` set, and then runs a worker until it is killed.
#[test]
fn child_worker_process_entry() {
    let Ok(db) = std::env::var(CHILD_ENV) else { return };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let q = connect(&db, ConnectOptions::default()).await.unwrap();
        let mut w = Worker::new(q, crash_config(&format!("child-{}", std::process::id()))).unwrap();
        register_step(&mut w);
        let running = w.start();
        tokio::time::sleep(Duration::from_secs(120)).await;
        running.shutdown().await.unwrap();
    });
}

fn spawn_child(db: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "reliability::child_worker_process_entry", "--test-threads=1", "--nocapture"])
        .env(CHILD_ENV, db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

async fn enqueue_steps(q: &Queue, n: usize, max_retries: u32) {
    let items = (0..n)
        .map(|i| EnqueueItem {
            task: "step".into(),
            payload: i.to_string().into_bytes(),
            options: EnqueueOptions { max_retries: Some(max_retries), ..Default::default() },
        })
        .collect();
    q.enqueue_many(items).await.unwrap();
}

/// Every job has exactly one success metric row.
async fn assert_completed_exactly_once(q: &Queue, n: usize) {
    let rows = q.get_metrics(0, Some("step")).await.unwrap();
    let mut successes: HashMap<String, u32> = HashMap::new();
    for r in rows.iter().filter(|r| r.success) {
        *successes.entry(r.job_id.clone()).or_default() += 1;
    }
    assert_eq!(successes.len(), n, "every job completed");
    let twice: Vec<_> = successes.iter().filter(|(_, c)| **c > 1).collect();
    assert!(twice.is_empty(), "jobs completed more than once: {twice:?}");
    let s = q.stats().await.unwrap();
    assert_eq!((s.completed, s.running, s.pending, s.dead), (n as u64, 0, 0, 0), "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_worker_processes_never_complete_a_job_twice() {
    let q = open().await;
    let db = q.url.clone();
    enqueue_steps(&q, JOBS, 50).await;

    let mut child = spawn_child(&db);
    eventually(30, "child worker running jobs", || async { q.stats().await.unwrap().completed > 0 }).await;
    let mut second = Worker::new(q.queue.clone(), crash_config("survivor")).unwrap();
    register_step(&mut second);
    let second = second.start();

    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        child.kill().unwrap(); // SIGKILL: no shutdown, no acks, leases left behind
        child.wait().unwrap();
        child = spawn_child(&db);
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    child.kill().unwrap();
    child.wait().unwrap();

    eventually(60, "all jobs completed", || async { q.stats().await.unwrap().completed == JOBS as u64 })
        .await;
    second.shutdown().await.unwrap();
    assert_completed_exactly_once(&q, JOBS).await;

    // The kills really landed mid-attempt: some leases were rescued.
    let mut rescued = 0;
    for job in q.list_jobs(&Default::default(), 10_000, 0).await.unwrap() {
        let errors = q.get_job_errors(job.id.as_str()).await.unwrap();
        rescued += errors.iter().filter(|e| e.error.starts_with("LEASE_HEARTBEAT_LOST")).count();
    }
    assert!(rescued > 0, "no lease was ever rescued: the kills missed every running job");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_under_load_leaves_nothing_running() {
    let q = open().await;
    enqueue_steps(&q, 500, 3).await;
    let config = WorkerConfig { concurrency: 8, ..crash_config("first") };
    let mut w = Worker::new(q.queue.clone(), config.clone()).unwrap();
    register_step(&mut w);
    let running = w.start();
    eventually(10, "work under way", || async { q.stats().await.unwrap().completed >= 50 }).await;
    let first = running.shutdown().await.unwrap();
    let s = q.stats().await.unwrap();
    assert_eq!(s.running, 0, "{s:?}");
    assert_eq!(s.completed + s.pending, 500, "{s:?}");
    assert!(s.pending > 0, "shut down before the end: {s:?}");
    assert_eq!(first.succeeded, s.completed);

    let mut w =
        Worker::new(q.queue.clone(), WorkerConfig { worker_id: Some("second".into()), ..config }).unwrap();
    register_step(&mut w);
    let running = w.start();
    eventually(30, "the rest completed", || async { q.stats().await.unwrap().completed == 500 }).await;
    running.shutdown().await.unwrap();
    assert_completed_exactly_once(&q, 500).await;
}
