//! Crash test: a private `redis-server` with AOF (`appendfsync always`) is SIGKILLed and
//! restarted while workers drain 1,000 jobs through claim / ack loops that retry retryable
//! errors. Every job must end completed exactly once (one success metric row per job).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, GetMetricsRequest, History, Inspect, JobStore,
    ReleaseStaleRequest, WaitForWorkRequest,
};
use flexiq_core::{EnqueueOptions, Error, NewJob, Store};
use flexiq_store_redis::{RedisOptions, RedisStore};

use crate::harness::random_prefix;

const REDIS_SERVER: &str = "/usr/bin/redis-server";
const JOBS: usize = 1_000;

/// A private server that is killed when dropped.
struct Server {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        assert!(
            Path::new(REDIS_SERVER).exists(),
            "{REDIS_SERVER} is missing: install it (apt-get install -y redis-server) to run the crash test"
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut s = Server { child: None, port, dir: tempfile::tempdir().unwrap() };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let child = Command::new(REDIS_SERVER)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen on port {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn wall() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Runs `f` until it succeeds, retrying retryable errors.
async fn retrying<T, F, Fut>(mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match f().await {
            Ok(v) => return v,
            Err(e) if e.is_retryable() && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("non-retryable error: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_job_completes_exactly_once_across_a_server_crash() {
    let mut server = Server::start();
    let opts = RedisOptions { namespace: "crash".into(), prefix: random_prefix("fxr") };
    let store = RedisStore::connect(&server.url(), opts).await.unwrap();

    let jobs: Vec<NewJob> = (0..JOBS)
        .map(|i| {
            NewJob::build("work", i.to_string().into_bytes(), EnqueueOptions::default(), wall()).unwrap()
        })
        .collect();
    let ids: Vec<_> = jobs.iter().map(|j| j.id.clone()).collect();
    for chunk in jobs.chunks(100) {
        let req = EnqueueRequest { jobs: chunk.to_vec(), max_pending: None, now: wall() };
        retrying(|| store.enqueue(req.clone())).await;
    }

    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..4 {
        let (store, acked, stop) = (store.clone(), acked.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Acquire) {
                let req = ClaimRequest { queues: vec![], limit: 20, worker_id: format!("w{w}"), now: wall() };
                let claimed = match store.claim(req).await {
                    Ok(c) => c,
                    Err(e) if e.is_retryable() => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                    Err(e) => panic!("claim: {e}"),
                };
                if claimed.is_empty() {
                    let _ =
                        store.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: wall() }).await;
                    let _ = store.wait_for_work(WaitForWorkRequest { queues: vec![], timeout_ms: 50 }).await;
                    continue;
                }
                let acks: Vec<Ack> = claimed
                    .iter()
                    .map(|c| Ack {
                        job_id: c.job.id.clone(),
                        fence: c.fence,
                        kind: AckKind::Complete { result: Some(c.job.payload.clone()) },
                    })
                    .collect();
                let outcomes = retrying(|| store.ack(AckRequest { acks: acks.clone(), now: wall() })).await;
                acked.fetch_add(outcomes.len() as u64, Ordering::AcqRel);
            }
        }));
    }

    while acked.load(Ordering::Acquire) < 300 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.kill();
    let at_crash = acked.load(Ordering::Acquire);
    assert!(at_crash < JOBS as u64, "the crash must land mid-run ({at_crash} acked)");
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.spawn();

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stats = retrying(|| store.stats(None)).await;
        if stats.completed == JOBS as u64 {
            break;
        }
        assert!(Instant::now() < deadline, "jobs did not all complete: {stats:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Release);
    for w in workers {
        w.await.unwrap();
    }

    let stats = retrying(|| store.stats(None)).await;
    assert_eq!((stats.completed, stats.total()), (JOBS as u64, JOBS as u64), "{stats:?}");
    let metrics =
        retrying(|| store.get_metrics(GetMetricsRequest { since_ms: 0, task: Some("work".into()) })).await;
    let successes = metrics.iter().filter(|m| m.success).count();
    assert_eq!(successes, JOBS, "each job completes exactly once");
    for id in &ids {
        let job = retrying(|| store.get(id)).await.expect("job survives the crash");
        assert_eq!(job.result.as_deref(), Some(job.payload.as_slice()), "job {id}");
    }
    store.close().await.unwrap();
    server.kill();
}
