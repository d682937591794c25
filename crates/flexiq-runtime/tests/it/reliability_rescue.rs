//! Rescue from the outside: what a killed or frozen worker process leaves behind.
//!
//! Both tests re-execute this test binary as a child worker process (selected by
//! `FLEXIQ_IT_RESCUE_CHILD`, which carries the mode, the store URL and a file of executions).
//!
//! - A worker with a large prefetch buffer is killed with SIGKILL several times mid-run. Every
//!   handler run appends its job id to the executions file first, so afterwards each job's
//!   attempt and stall count can be checked against how often it really ran: a job that sat in
//!   a killed worker's buffer and never ran must have spent neither an attempt nor a stall.
//! - A worker holding the cleaner lease is frozen with SIGSTOP while it runs a job. With the
//!   default cleaner lease and round interval another worker takes the lease over and rescues
//!   the job within a bound set by those defaults and the job lease, well before the 30 s the
//!   cleaner lease once held rescues back.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flexiq_runtime::core::store::LeaseRequest;
use flexiq_runtime::services::CLEANER_LEASE;
use flexiq_runtime::{
    connect, ConnectOptions, EnqueueItem, EnqueueOptions, JobStatus, Queue, Worker, WorkerConfig,
};

use crate::backends::{self, Backend};
use crate::common::eventually;

const CHILD_ENV: &str = "FLEXIQ_IT_RESCUE_CHILD";
const JOBS: usize = 400;
/// The job lease of the frozen-leader test (the cleaner settings stay at their defaults).
const LEASE: Duration = Duration::from_secs(2);

/// A worker that claims far more than it runs, with short leases so killed ones come back fast.
fn buffering_config(id: &str) -> WorkerConfig {
    crate::common::crash_config(id, 2, 24)
}

/// Appends `line` to the executions file in one write (`O_APPEND` keeps lines whole across
/// processes).
fn record(path: &Path, line: &str) {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    f.write_all(format!("{line}\n").as_bytes()).unwrap();
}

/// Registers `step`, which records its run before doing a little work.
fn register_recorded_step(w: &mut Worker, path: &Path) {
    let path = path.to_path_buf();
    w.register("step", move |ctx| {
        record(&path, ctx.id().as_str());
        async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok(None)
        }
    })
    .unwrap();
}

/// Entry point of a child worker process: does nothing unless this binary was re-executed with
/// `FLEXIQ_IT_RESCUE_CHILD` set (`buffer|<url>|<file>` or `leader|<url>`), and then runs a
/// worker until it is killed.
#[test]
fn rescue_child_process_entry() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let mut parts = spec.splitn(3, '|');
    let (mode, url) = (parts.next().unwrap().to_string(), parts.next().unwrap().to_string());
    let file = parts.next().map(|f| f.to_string());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let q = connect(&url, ConnectOptions::default()).await.unwrap();
        let id = format!("child-{}", std::process::id());
        let running = if mode == "buffer" {
            let mut w = Worker::new(q, buffering_config(&id)).unwrap();
            register_recorded_step(&mut w, Path::new(&file.unwrap()));
            w.start()
        } else {
            let config = WorkerConfig { worker_id: Some(id), ..WorkerConfig::default().with_lease(LEASE) };
            let mut w = Worker::new(q, config).unwrap();
            w.register("hold", |_ctx| async move {
                tokio::time::sleep(Duration::from_secs(300)).await;
                Ok(None)
            })
            .unwrap();
            w.start()
        };
        tokio::time::sleep(Duration::from_secs(120)).await;
        running.shutdown().await.unwrap();
    });
}

fn spawn_child(spec: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "reliability_rescue::rescue_child_process_entry", "--test-threads=1"])
        .env(CHILD_ENV, spec)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Handler runs per job id, from the executions file.
fn executions(path: &Path) -> HashMap<String, u32> {
    let mut runs = HashMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        *runs.entry(line.to_string()).or_default() += 1;
    }
    runs
}

async fn killed_buffering_workers_spend_nothing_on_jobs_they_never_ran(b: Backend) {
    let q = b.queue().clone();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("executions");
    let spec = format!("buffer|{}|{}", b.url(), file.display());
    let items = (0..JOBS)
        .map(|i| EnqueueItem {
            task: "step".into(),
            payload: i.to_string().into_bytes(),
            options: EnqueueOptions { max_retries: Some(3), ..Default::default() },
        })
        .collect();
    q.enqueue_many(items).await.unwrap();

    let mut child = spawn_child(&spec);
    eventually(30, "the child running jobs", || async { q.stats().await.unwrap().completed > 0 }).await;
    let mut survivor =
        Worker::new(q.clone(), WorkerConfig { prefetch: Some(1), ..buffering_config("survivor") }).unwrap();
    register_recorded_step(&mut survivor, &file);
    let survivor = survivor.start();
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        child.kill().unwrap(); // SIGKILL: its buffer and running jobs are left leased
        child.wait().unwrap();
        child = spawn_child(&spec);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    child.kill().unwrap();
    child.wait().unwrap();
    eventually(60, "all jobs finished", || async {
        let s = q.stats().await.unwrap();
        s.completed + s.dead == JOBS as u64
    })
    .await;
    survivor.shutdown().await.unwrap();

    let runs = executions(&file);
    let (mut unstarted_releases, mut bad) = (0, Vec::new());
    for job in q.list_jobs(&Default::default(), 10_000, 0).await.unwrap() {
        let ran = runs.get(job.id.as_str()).copied().unwrap_or(0);
        // Each attempt spent and each stall counted must stand for a run that happened; a
        // completed job's last run is the one that completed, a dead one (a run killed more
        // often than the stall budget allows) died of its stalls.
        let runs_behind_stalls = match job.status {
            JobStatus::Completed => job.stall_count + 1,
            JobStatus::Dead => job.stall_count,
            _ => u32::MAX,
        };
        if job.attempt > ran || runs_behind_stalls > ran {
            bad.push((job.id.to_string(), job.status, job.attempt, job.stall_count, ran));
        }
        let errors = q.get_job_errors(job.id.as_str()).await.unwrap();
        unstarted_releases +=
            errors.iter().filter(|e| e.error.contains("before it reported starting")).count();
    }
    assert!(
        bad.is_empty(),
        "jobs charged for runs that never happened (id, status, attempt, stalls, runs): {bad:?}"
    );
    assert!(unstarted_releases > 0, "no buffered claim was ever released: the kills missed every buffer");
    b.cleanup().await;
}

/// The pid of the child holding the cleaner lease now, if one does.
async fn leader_pid(q: &Queue) -> Option<u32> {
    let req = LeaseRequest { name: CLEANER_LEASE.into(), now: q.now_ms() };
    let lease = q.store().lease(req).await.unwrap()?;
    lease.holder.strip_prefix("child-")?.parse().ok()
}

/// Sends `pid` SIGSTOP. With an SQLite file, only at a moment the process holds no write lock
/// on it: nothing can take that lock back from a stopped process, so one frozen inside a write
/// transaction stops every writer of the file until it runs again. That is SQLite's limit, not
/// the rescue's, so the freeze is retried (SIGCONT, a pause, SIGSTOP) until a write from here
/// can start.
async fn freeze_outside_a_write(pid: u32, sqlite_file: Option<&Path>) {
    let signal = |sig: &str| {
        let sent = Command::new("kill").args([sig, &pid.to_string()]).status().unwrap();
        assert!(sent.success(), "{sig} to child {pid}");
    };
    for _ in 0..100 {
        signal("-STOP");
        let Some(file) = sqlite_file else { return };
        let conn = rusqlite::Connection::open(file).unwrap();
        conn.busy_timeout(Duration::from_millis(200)).unwrap();
        if conn.execute_batch("BEGIN IMMEDIATE; ROLLBACK").is_ok() {
            return;
        }
        signal("-CONT");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("child {pid} held the write lock of {sqlite_file:?} at each of 100 freezes");
}

async fn a_frozen_cleaner_holds_back_rescue_only_briefly(b: Backend) {
    let q = b.queue().clone();
    let job = q.enqueue("hold", b"{}".to_vec(), EnqueueOptions::default()).await.unwrap();
    let mut child = spawn_child(&format!("leader|{}", b.url()));
    let pid = child.id();
    eventually(30, "the child leading and running the job", || async {
        let running = q.get_job(job.as_str()).await.unwrap().is_some_and(|j| j.status == JobStatus::Running);
        running && leader_pid(&q).await == Some(pid)
    })
    .await;
    freeze_outside_a_write(pid, b.url().strip_prefix("sqlite://").map(Path::new)).await;

    // Another worker with the default cleaner settings, started after the freeze.
    let mut other = Worker::new(q.clone(), WorkerConfig::default().with_lease(LEASE)).unwrap();
    other.register("hold", |_ctx| async move { Ok(None) }).unwrap();
    let other = other.start();
    eventually(15, "the frozen leader's job rescued and completed elsewhere", || async {
        q.get_job(job.as_str()).await.unwrap().is_some_and(|j| j.status == JobStatus::Completed)
    })
    .await;
    other.shutdown().await.unwrap();
    child.kill().unwrap(); // SIGKILL ends a stopped process too
    child.wait().unwrap();
    let errors = q.get_job_errors(job.as_str()).await.unwrap();
    assert!(errors.iter().any(|e| e.error.starts_with("LEASE_HEARTBEAT_LOST")), "{errors:?}");
    b.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffered_jobs_of_killed_workers_keep_their_attempts_on_sqlite() {
    killed_buffering_workers_spend_nothing_on_jobs_they_never_ran(backends::sqlite().await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffered_jobs_of_killed_workers_keep_their_attempts_on_postgres() {
    killed_buffering_workers_spend_nothing_on_jobs_they_never_ran(backends::postgres().await).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffered_jobs_of_killed_workers_keep_their_attempts_on_redis() {
    killed_buffering_workers_spend_nothing_on_jobs_they_never_ran(backends::redis().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_cleaner_delays_rescue_briefly_on_sqlite() {
    a_frozen_cleaner_holds_back_rescue_only_briefly(backends::sqlite().await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_cleaner_delays_rescue_briefly_on_postgres() {
    a_frozen_cleaner_holds_back_rescue_only_briefly(backends::postgres().await).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_cleaner_delays_rescue_briefly_on_redis() {
    a_frozen_cleaner_holds_back_rescue_only_briefly(backends::redis().await).await;
}
