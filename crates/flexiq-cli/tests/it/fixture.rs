//! Running the binary and seeding a store with known jobs.

use std::process::Command;
use std::time::Duration;

use flexiq::core::store::ClaimRequest;
use flexiq::{connect, Backoff, ConnectOptions, EnqueueOptions, HandlerError, Queue, Worker, WorkerConfig};
use tempfile::TempDir;

/// What one run of the binary did.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The stdout as JSON, failing the test with both streams when it is not.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!("stdout is not json ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr)
        })
    }

    /// Asserts success and returns self.
    pub(crate) fn ok(self) -> Self {
        assert_eq!(self.code, 0, "exit {}\nstdout:\n{}\nstderr:\n{}", self.code, self.stdout, self.stderr);
        self
    }

    /// Asserts exit `code` with a one-line error on stderr containing `needle`.
    pub(crate) fn fails(self, code: i32, needle: &str) -> Self {
        assert_eq!(self.code, code, "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        let lines: Vec<&str> = self.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "stderr is not one line:\n{}", self.stderr);
        assert!(lines[0].starts_with("error: "), "{}", lines[0]);
        assert!(lines[0].contains(needle), "{:?} does not mention {needle:?}", lines[0]);
        self
    }
}

/// Runs `flexiq args...` with no FLEXIQ_* variables from the environment.
pub(crate) fn flexiq(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_flexiq"))
        .args(args)
        .env_remove("FLEXIQ_URL")
        .env_remove("FLEXIQ_NAMESPACE")
        .output()
        .expect("run flexiq");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `flexiq args...` as [`flexiq`] does, with `input` on its stdin.
pub(crate) fn flexiq_with_stdin(args: &[&str], input: &str) -> Run {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_flexiq"))
        .args(args)
        .env_remove("FLEXIQ_URL")
        .env_remove("FLEXIQ_NAMESPACE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run flexiq");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
    let out = child.wait_with_output().expect("wait for flexiq");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A temporary SQLite store seeded with known jobs.
pub(crate) struct Seeded {
    _dir: TempDir,
    pub(crate) url: String,
    /// Completed jobs on queue `mail` (task `mail.send`).
    pub(crate) completed: Vec<String>,
    /// The dead job (task `mail.bounce`, one attempt).
    pub(crate) dead: String,
    /// Pending jobs on the paused queue `later` (task `later.run`).
    pub(crate) pending: Vec<String>,
}

impl Seeded {
    /// `flexiq <args...> --url <this store>`.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--url", self.url.as_str()]);
        flexiq(&all)
    }

    /// The same store through the runtime.
    pub(crate) async fn queue(&self) -> Queue {
        connect(&self.url, ConnectOptions::default()).await.expect("connect")
    }
}

fn opts(queue: &str, retries: u32) -> EnqueueOptions {
    EnqueueOptions {
        queue: Some(queue.into()),
        max_retries: Some(retries),
        backoff: Some(Backoff::NONE),
        ..Default::default()
    }
}

/// Five completed jobs, one dead job and three pending jobs on a paused queue.
pub(crate) async fn seeded() -> Seeded {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("ops.db").display());
    let q = connect(&url, ConnectOptions::default()).await.expect("connect");
    q.pause("later").await.expect("pause");
    let mut completed = Vec::new();
    for i in 0..5 {
        completed.push(
            q.enqueue("mail.send", format!("{{\"i\":{i}}}"), opts("mail", 3)).await.unwrap().to_string(),
        );
    }
    let dead = q.enqueue("mail.bounce", b"{}".to_vec(), opts("mail", 0)).await.unwrap().to_string();
    let mut pending = Vec::new();
    for _ in 0..3 {
        pending.push(q.enqueue("later.run", b"{}".to_vec(), opts("later", 3)).await.unwrap().to_string());
    }
    let config = WorkerConfig {
        queues: vec!["mail".into()],
        poll_interval: Duration::from_millis(20),
        ..Default::default()
    };
    let mut w = Worker::new(q.clone(), config).unwrap();
    w.register("mail.send", |_ctx| async { Ok(Some(b"sent".to_vec())) }).unwrap();
    w.register("mail.bounce", |_ctx| async { Err(HandlerError::retryable("mailbox full")) }).unwrap();
    let handle = w.start();
    for _ in 0..500 {
        let s = q.stats_for_queue("mail").await.unwrap();
        if s.completed == 5 && s.dead == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    handle.shutdown().await.unwrap();
    let s = q.stats_for_queue("mail").await.unwrap();
    assert_eq!((s.completed, s.dead), (5, 1), "seeding did not finish");
    q.close().await.unwrap();
    Seeded { _dir: dir, url, completed, dead, pending }
}

/// Claims one pending job of `queue` directly, leaving it running with no worker.
pub(crate) async fn claim_one(q: &Queue, queue: &str) -> String {
    let now = q.now_ms();
    let claimed = q
        .store()
        .claim(ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: "gone-worker".into(), now })
        .await
        .unwrap();
    claimed.first().expect("a job to claim").job.id.to_string()
}
