//! The worker process a crash campaign kills: this test binary re-executed with
//! `FLEXIQ_CRASH_CHILD_URL` set, running the runtime's own `Worker` until SIGKILL or until
//! the campaign leaves a stop file.
//!
//! Each execution is written down before the handler does anything else, one line per
//! (job id, attempt, claim) in an append-only file of this process. SIGKILL does not lose
//! written page cache, so the campaign reads every execution that started, killed or not.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::services::{ElectorConfig, EventTrimConfig, MaintenanceConfig, RescueConfig};
use flexiq_runtime::{connect, ConnectOptions, Worker, WorkerConfig};
use parking_lot::Mutex;

/// Names the store a re-executed binary works on; unset in the campaign itself.
pub(crate) const CHILD_URL_ENV: &str = "FLEXIQ_CRASH_CHILD_URL";
/// The campaign's directory: execution logs and the stop file.
pub(crate) const CHILD_DIR_ENV: &str = "FLEXIQ_CRASH_CHILD_DIR";
/// The task every campaign job runs.
pub(crate) const TASK: &str = "crash_step";
/// The queue every campaign job is on.
pub(crate) const QUEUE: &str = "crash";
/// The test that is the child's entry point.
const ENTRY_TEST: &str = "crash_worker_entry";

/// Short leases and maintenance rounds, so a killed worker's jobs come back within seconds;
/// the events stream is kept whole so the campaign can count every terminal event.
fn config(id: String) -> WorkerConfig {
    WorkerConfig {
        worker_id: Some(id),
        concurrency: 4,
        prefetch: Some(4),
        heartbeat_interval: Duration::from_millis(200),
        poll_interval: Duration::from_millis(100),
        shutdown_timeout: Duration::from_secs(10),
        maintenance: Some(MaintenanceConfig {
            interval: Duration::from_millis(250),
            elector: ElectorConfig { ttl: Duration::from_secs(1), ..Default::default() },
            rescue: RescueConfig { stale_after: Duration::from_millis(1_500) },
            events: EventTrimConfig { max_len: 100_000_000, max_age: None },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The file of the stop request the children poll for.
pub(crate) fn stop_file(dir: &Path) -> PathBuf {
    dir.join("stop")
}

/// The execution log of process `pid`.
pub(crate) fn exec_log(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("exec-{pid}.log"))
}

/// Where a child's stdout and stderr go.
pub(crate) fn output_log(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("worker-{pid}.out"))
}

/// Starts one worker process on `url`, its output in a file of `dir`.
pub(crate) fn spawn(url: &str, dir: &Path) -> Child {
    let spool = dir.join(format!("spawn-{}.out", uuid::Uuid::new_v4().simple()));
    let out = File::create(&spool).unwrap_or_else(|e| panic!("create {}: {e}", spool.display()));
    let err = out.try_clone().expect("clone an output handle");
    let child = Command::new(std::env::current_exe().expect("the test binary's path"))
        .args(["--exact", ENTRY_TEST, "--test-threads=1", "--nocapture"])
        .env(CHILD_URL_ENV, url)
        .env(CHILD_DIR_ENV, dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn a worker process on {url}: {e}"));
    let _ = std::fs::rename(&spool, output_log(dir, child.id()));
    child
}

/// Appends one line per execution; the lock keeps concurrent handlers' lines whole.
struct ExecLog(Mutex<File>);

impl ExecLog {
    fn record(&self, line: &str) {
        let mut f = self.0.lock();
        f.write_all(line.as_bytes()).unwrap_or_else(|e| panic!("write execution {line:?}: {e}"));
    }
}

/// The child's body: nothing unless [`CHILD_URL_ENV`] is set.
pub(crate) fn child_entry() {
    let (Ok(url), Ok(dir)) = (std::env::var(CHILD_URL_ENV), std::env::var(CHILD_DIR_ENV)) else { return };
    let dir = PathBuf::from(dir);
    let pid = std::process::id();
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(exec_log(&dir, pid))
        .unwrap_or_else(|e| panic!("open the execution log of worker {pid}: {e}"));
    let log = Arc::new(ExecLog(Mutex::new(file)));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let q = connect(&url, ConnectOptions::default())
            .await
            .unwrap_or_else(|e| panic!("worker {pid} could not connect to {url}: {e}"));
        let mut w = Worker::new(q, config(format!("crash-{pid}"))).unwrap();
        w.register(TASK, move |ctx| {
            let log = log.clone();
            async move {
                let job = ctx.job();
                log.record(&format!("{} {} {}\n", job.id.as_str(), job.attempt, job.claim_seq));
                // 2-9 ms of work, varied so kills land at different points of attempts.
                let spread = job.claim_seq.wrapping_add(job.payload.len() as u64) % 8;
                tokio::time::sleep(Duration::from_millis(2 + spread)).await;
                Ok(Some(ctx.payload().to_vec()))
            }
        })
        .unwrap();
        let running = w.start();
        let stop = stop_file(&dir);
        while !stop.exists() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let counters = running.shutdown().await.unwrap_or_else(|e| panic!("worker {pid} shutdown: {e}"));
        println!("worker {pid} stopped: {counters:?}");
    });
}
