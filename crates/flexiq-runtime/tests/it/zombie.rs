//! The zombie worker from the outside, on every store.
//!
//! Worker A is this test binary re-executed as a child process (selected by
//! `FLEXIQ_IT_ZOMBIE_URL`). Its handler writes a start marker and waits for a release file.
//! The test freezes A with SIGSTOP mid-attempt: its heartbeats stop, its lease lapses, and
//! worker B (in this process, with its own maintenance) rescues the job, re-claims it and
//! completes it. A is then resumed with SIGCONT and finishes its handler late. A fenced store
//! must refuse that ack (`superseded`, counted by A's worker): the job keeps B's result and
//! claim, and was completed exactly once (one success metric row, one `completed` event).
//! A, alone when it starts, is the namespace's elected cleaner when it freezes: B's own
//! maintenance takes the cleaner lease over once A's lapses, then rescues the job.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flexiq_runtime::core::store::LeaseRequest;
use flexiq_runtime::core::transition::LEASE_HEARTBEAT_LOST;
use flexiq_runtime::services::{ElectorConfig, MaintenanceConfig, RescueConfig, CLEANER_LEASE};
use flexiq_runtime::{
    connect, ConnectOptions, EnqueueOptions, EventKind, JobStatus, Queue, Worker, WorkerConfig,
    WorkerCounters,
};

use crate::backends::{self, Backend};
use crate::common::eventually;

const URL_ENV: &str = "FLEXIQ_IT_ZOMBIE_URL";
const DIR_ENV: &str = "FLEXIQ_IT_ZOMBIE_DIR";
const TASK: &str = "zombie.work";
const ZOMBIE: &str = "zombie-a";
const RESCUER: &str = "zombie-b";

/// A one-slot worker with no prefetch, a 1 s lease and a cleaner that rounds every 100 ms
/// and hands over within 500 ms of its leader freezing.
fn zombie_config(id: &str) -> WorkerConfig {
    WorkerConfig {
        worker_id: Some(id.into()),
        concurrency: 1,
        prefetch: Some(0),
        heartbeat_interval: Duration::from_millis(200),
        poll_interval: Duration::from_millis(50),
        shutdown_timeout: Duration::from_secs(10),
        maintenance: Some(MaintenanceConfig {
            interval: Duration::from_millis(100),
            elector: ElectorConfig { ttl: Duration::from_millis(500), ..Default::default() },
            rescue: RescueConfig { stale_after: Duration::from_secs(1) },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Polls until `path` exists or `secs` pass; whether it appeared.
async fn wait_for_file(path: &Path, secs: u64) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !path.exists() {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    true
}

/// Entry point of worker A: does nothing unless this binary was re-executed with
/// `FLEXIQ_IT_ZOMBIE_URL` set. Runs one attempt of the test's job, then shuts down and
/// writes its counters to `counters` in the marker folder.
#[test]
fn zombie_child_process_entry() {
    let Ok(url) = std::env::var(URL_ENV) else { return };
    let dir = PathBuf::from(std::env::var(DIR_ENV).expect("the marker folder"));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let q = connect(&url, ConnectOptions::default()).await.unwrap();
        let mut w = Worker::new(q, zombie_config(ZOMBIE)).unwrap();
        let markers = dir.clone();
        w.register(TASK, move |ctx| {
            let markers = markers.clone();
            async move {
                std::fs::write(markers.join("started"), ctx.job().id.as_str()).unwrap();
                // Released by the test once it has resumed this process; the bound only keeps
                // a forgotten child from lingering.
                wait_for_file(&markers.join("release"), 60).await;
                std::fs::write(markers.join("finished"), b"").unwrap();
                Ok(Some(ZOMBIE.as_bytes().to_vec()))
            }
        })
        .unwrap();
        let running = w.start();
        assert!(wait_for_file(&dir.join("finished"), 90).await, "worker A's handler never finished");
        // Shutdown writes the pending ack before it returns the counters.
        let c = running.shutdown().await.unwrap();
        std::fs::write(dir.join("counters"), format_counters(&c)).unwrap();
    });
}

fn format_counters(c: &WorkerCounters) -> String {
    format!(
        "succeeded={}\nacknowledged={}\nsuperseded={}\nack_errors={}\n",
        c.succeeded, c.acknowledged, c.superseded, c.ack_errors
    )
}

/// Worker A's process; SIGKILLed and reaped if the test ends before it exits.
struct ZombieProcess {
    child: Child,
    dir: PathBuf,
}

impl ZombieProcess {
    fn spawn(url: &str, dir: &Path) -> Self {
        let log = std::fs::File::create(dir.join("child.log")).unwrap();
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "zombie::zombie_child_process_entry", "--test-threads=1", "--nocapture"])
            .env(URL_ENV, url)
            .env(DIR_ENV, dir)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        ZombieProcess { child, dir: dir.to_path_buf() }
    }

    fn signal(&self, sig: &str) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args([sig, &pid]).status().expect("run kill");
        assert!(status.success(), "kill {sig} {pid} failed: {status}");
    }

    /// Waits up to `secs` for the process to exit; panics with its log otherwise.
    fn wait_exit(&mut self, secs: u64) -> std::process::ExitStatus {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "worker A did not exit within {secs} s: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("child.log")).unwrap_or_default()
    }
}

impl Drop for ZombieProcess {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill(); // SIGKILL ends a stopped process too
            let _ = self.child.wait();
        }
    }
}

/// Stops A outside a store write. On SQLite a process stopped inside a write transaction keeps
/// the database's write lock until it resumes, so every other process waits for it (an outage
/// of its own, not the case under test): a probe write must get through while A is stopped, or
/// A runs on for a moment and is stopped again.
async fn freeze(zombie: &ZombieProcess, q: &Queue, sqlite: bool) {
    for _ in 0..20 {
        zombie.signal("-STOP");
        if !sqlite {
            return;
        }
        let probe = tokio::time::timeout(Duration::from_millis(500), q.set_events_enabled(true)).await;
        if let Ok(written) = probe {
            written.unwrap();
            return;
        }
        zombie.signal("-CONT");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    panic!("worker A was stopped inside a write transaction 20 times running: {}", zombie.log());
}

/// `key=value` lines of worker A's counters file.
fn read_counter(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {key} in worker A's counters: {text}"))
        .parse()
        .unwrap()
}

/// Waits for two lease renewals of the running attempt after `seen` (its heartbeat when the
/// handler was seen running): the second was sent after the handler started, so the store has
/// recorded the start, and a lapsed lease is a stall of a started attempt.
async fn reported_started(q: &Queue, id: &str, seen: Option<i64>) {
    let mut last = seen;
    for renewal in ["first", "second"] {
        eventually(30, &format!("the {renewal} lease renewal of job {id}"), || async {
            let beat = q.get_job(id).await.unwrap().and_then(|j| j.heartbeat_at);
            beat.is_some() && beat != last
        })
        .await;
        last = q.get_job(id).await.unwrap().and_then(|j| j.heartbeat_at);
    }
}

/// The worker holding the namespace's cleaner lease now, if one does.
async fn cleaner(q: &Queue) -> Option<String> {
    let req = LeaseRequest { name: CLEANER_LEASE.into(), now: q.now_ms() };
    q.store().lease(req).await.unwrap().map(|l| l.holder)
}

/// The worker ids of the job's `active` events (one per claim), in order.
async fn claimed_by(q: &Queue, job_id: &str) -> Vec<String> {
    let events = q.read_events(None, 0, 1_000).await.unwrap();
    events
        .iter()
        .filter(|e| e.kind == EventKind::Active && e.job_id.as_deref() == Some(job_id))
        .map(|e| e.data["worker_id"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The job's events of `kind`, read from the start of the stream.
async fn events_of(q: &Queue, job_id: &str, kind: EventKind) -> usize {
    let events = q.read_events(None, 0, 1_000).await.unwrap();
    events.iter().filter(|e| e.kind == kind && e.job_id.as_deref() == Some(job_id)).count()
}

async fn a_frozen_worker_late_ack_is_superseded(b: Backend) {
    let q = b.queue().clone();
    let dir = tempfile::tempdir().unwrap();
    let id = q.enqueue(TASK, b"{}".to_vec(), EnqueueOptions::default()).await.unwrap();
    let id = id.as_str().to_string();

    let mut zombie = ZombieProcess::spawn(b.url(), dir.path());
    let started = dir.path().join("started");
    eventually(60, "worker A starting the job", || async { started.exists() }).await;
    let first = q.get_job(&id).await.unwrap().unwrap();
    assert_eq!(first.status, JobStatus::Running, "{first:?}");
    assert_eq!(first.worker_id.as_deref(), Some(ZOMBIE), "{first:?}");
    assert_eq!(first.claim_seq, 1, "{first:?}");
    reported_started(&q, &id, first.heartbeat_at).await;
    eventually(30, "worker A elected cleaner", || async { cleaner(&q).await.as_deref() == Some(ZOMBIE) })
        .await;

    // Frozen mid-attempt: no heartbeats, no maintenance rounds, no ack.
    freeze(&zombie, &q, matches!(b, Backend::Sqlite(_))).await;
    let mut rescuer = Worker::new(q.clone(), zombie_config(RESCUER)).unwrap();
    rescuer.register(TASK, |_ctx| async move { Ok(Some(RESCUER.as_bytes().to_vec())) }).unwrap();
    let rescuer = rescuer.start();
    eventually(30, "worker B completing the job after A's lease lapsed", || async {
        q.get_job(&id).await.unwrap().is_some_and(|j| j.status == JobStatus::Completed)
    })
    .await;
    let done = q.get_job(&id).await.unwrap().unwrap();
    assert_eq!(done.result.as_deref(), Some(RESCUER.as_bytes()), "{done:?}");
    assert_eq!((done.claim_seq, done.stall_count), (2, 1), "{done:?}");
    assert_eq!(claimed_by(&q, &id).await, [ZOMBIE, RESCUER], "the workers that claimed job {id}");
    let errors = q.get_job_errors(&id).await.unwrap();
    assert!(
        errors.iter().any(|e| e.error.starts_with(LEASE_HEARTBEAT_LOST)),
        "job {id} was not rescued from a lapsed lease: {errors:?}"
    );

    // Resumed: A's handler finishes late and its worker acks the stale attempt.
    std::fs::write(dir.path().join("release"), b"").unwrap();
    zombie.signal("-CONT");
    let status = zombie.wait_exit(60);
    assert!(status.success(), "worker A failed ({status}): {}", zombie.log());
    let counters = std::fs::read_to_string(dir.path().join("counters")).unwrap();
    assert_eq!(read_counter(&counters, "succeeded"), 1, "A's handler ran to the end: {counters}");
    assert_eq!(read_counter(&counters, "superseded"), 1, "A's late ack was not superseded: {counters}");
    assert_eq!(read_counter(&counters, "acknowledged"), 0, "A's late ack was applied: {counters}");
    assert_eq!(read_counter(&counters, "ack_errors"), 0, "{counters}");

    let after = q.get_job(&id).await.unwrap().unwrap();
    assert_eq!(
        (after.status, &after.result, &after.worker_id, after.attempt, after.claim_seq, after.finished_at),
        (done.status, &done.result, &done.worker_id, done.attempt, done.claim_seq, done.finished_at),
        "A's late ack changed job {id}"
    );
    let rows = q.get_metrics(0, Some(TASK)).await.unwrap();
    let successes = rows.iter().filter(|r| r.job_id == id && r.success).count();
    assert_eq!(successes, 1, "job {id} has {successes} success metric rows: {rows:?}");
    assert_eq!(events_of(&q, &id, EventKind::Completed).await, 1, "job {id}'s completed events");
    assert_eq!(events_of(&q, &id, EventKind::Stalled).await, 1, "job {id}'s stalled events");
    assert_eq!(claimed_by(&q, &id).await, [ZOMBIE, RESCUER], "the workers that claimed job {id}");

    assert_eq!(cleaner(&q).await.as_deref(), Some(RESCUER), "the cleaner after A froze");
    let b_counters = rescuer.shutdown().await.unwrap();
    assert_eq!((b_counters.acknowledged, b_counters.superseded), (1, 0), "{b_counters:?}");
    drop(zombie);
    b.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zombie_process_ack_is_superseded_on_sqlite() {
    a_frozen_worker_late_ack_is_superseded(backends::sqlite().await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zombie_process_ack_is_superseded_on_postgres() {
    a_frozen_worker_late_ack_is_superseded(backends::postgres().await).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zombie_process_ack_is_superseded_on_redis() {
    a_frozen_worker_late_ack_is_superseded(backends::redis().await).await;
}
