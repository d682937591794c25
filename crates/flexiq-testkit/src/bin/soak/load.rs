//! The steady mixed load: producers, a worker pool and periodic maintenance on one queue,
//! through the runtime's public API only.
//!
//! Producers send single jobs (some delayed, with priorities), batches mixing jobs that
//! succeed, succeed on a retry, fail for good or dead-letter, flows of a parent and its
//! children, and jobs that depend on a flow's root. Two workers drain every queue; the elected
//! cleaner rescues, trims events and sweeps metrics, errors and logs older than a minute, with
//! archival and dead-letter retention off so that only the soak's own maintenance removes jobs
//! (`purge_completed`, `clean` of dead and failed ones), counting each, and every job stays
//! accounted for: "enqueued = terminal + removed + still pending". Removing them also keeps
//! the store's size steady, so its caches stop growing once warm and what grows is a leak.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::services::{ArchiveConfig, MaintenanceConfig, RetentionSweepConfig};
use flexiq_runtime::{
    Backoff, CancellationToken, EnqueueItem, EnqueueOptions, FlowNode, HandlerError, JobContext, Queue,
    Retention, Stats, Worker, WorkerConfig, WorkerHandle,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Tasks of the load and what their handlers do.
const OK: &str = "soak.ok";
const FLAKY: &str = "soak.flaky";
const DOOMED: &str = "soak.doomed";
const FATAL: &str = "soak.fatal";

/// Completed jobs older than this are purged by the soak's maintenance (seconds).
const PURGE_AFTER_SECS: i64 = 20;
/// Events kept by the soak's maintenance.
const EVENTS_KEPT: i64 = 2_000;

/// What the load did, readable while it runs.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Jobs the store acknowledged (single, batch, flow and dependent jobs).
    pub(crate) enqueued: AtomicU64,
    /// Completed jobs the soak's maintenance purged.
    pub(crate) purged: AtomicU64,
    /// Dead and failed jobs the soak's maintenance removed.
    pub(crate) cleaned: AtomicU64,
    /// Events trimmed by the soak's maintenance.
    pub(crate) trimmed: AtomicU64,
    /// Store calls of the producers or the maintenance that failed.
    pub(crate) errors: AtomicU64,
    /// Handler runs.
    pub(crate) runs: AtomicU64,
}

impl Tally {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// A counter's value.
    pub(crate) fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// The running load: its workers, producer and maintenance tasks.
pub(crate) struct Load {
    queue: Queue,
    tally: Arc<Tally>,
    workers: Vec<WorkerHandle>,
    stop_producing: CancellationToken,
    producer: tokio::task::JoinHandle<()>,
    maintenance: tokio::task::JoinHandle<()>,
}

fn worker_config(id: String) -> WorkerConfig {
    let maintenance = MaintenanceConfig {
        retention: RetentionSweepConfig {
            retention: Some(Retention {
                task_logs: Some(60),
                task_metrics: Some(60),
                job_errors: Some(60),
                ..Retention::default()
            }),
        },
        archive: ArchiveConfig { after: Duration::from_secs(365 * 86_400), ..Default::default() },
        ..Default::default()
    };
    WorkerConfig { worker_id: Some(id), concurrency: 8, maintenance: Some(maintenance), ..Default::default() }
}

async fn run_job(ctx: JobContext, tally: Arc<Tally>) -> Result<Option<Vec<u8>>, HandlerError> {
    Tally::add(&tally.runs, 1);
    tokio::time::sleep(Duration::from_millis(1 + u64::from(ctx.payload().first().copied().unwrap_or(0) % 4)))
        .await;
    match ctx.task() {
        FLAKY if ctx.attempt() == 1 => {
            Err(HandlerError::retryable(format!("job {} fails its first attempt", ctx.id())))
        }
        DOOMED => Err(HandlerError::retryable(format!("job {} always fails", ctx.id()))),
        FATAL => Err(HandlerError::fatal(format!("job {} fails for good", ctx.id()))),
        _ => Ok(Some(b"done".to_vec())),
    }
}

impl Load {
    /// Starts two workers, the producer (about `rate` jobs a second) and the maintenance.
    pub(crate) async fn start(queue: Queue, seed: u64, rate: u32) -> Result<Load, String> {
        let tally = Arc::new(Tally::default());
        let mut workers = Vec::new();
        for n in 0..2 {
            let mut w = Worker::new(queue.clone(), worker_config(format!("soak-worker-{n}")))
                .map_err(|e| format!("worker soak-worker-{n}: {e}"))?;
            for task in [OK, FLAKY, DOOMED, FATAL] {
                let t = tally.clone();
                w.register(task, move |ctx| run_job(ctx, t.clone()))
                    .map_err(|e| format!("register {task}: {e}"))?;
            }
            let handle = w.start();
            handle.ready().await.map_err(|e| format!("worker soak-worker-{n} did not start: {e}"))?;
            workers.push(handle);
        }
        let stop_producing = CancellationToken::new();
        let producer =
            tokio::spawn(produce(queue.clone(), tally.clone(), stop_producing.clone(), seed, rate));
        let maintenance = tokio::spawn(maintain(queue.clone(), tally.clone(), stop_producing.clone()));
        Ok(Load { queue, tally, workers, stop_producing, producer, maintenance })
    }

    /// The load's counters.
    pub(crate) fn tally(&self) -> &Arc<Tally> {
        &self.tally
    }

    /// Stops producing, lets the workers drain for at most `drain`, then shuts them down.
    /// Returns the queue's stats after the workers stopped.
    pub(crate) async fn finish(self, drain: Duration) -> Result<Stats, String> {
        self.stop_producing.cancel();
        let _ = self.producer.await;
        let _ = self.maintenance.await;
        let deadline = tokio::time::Instant::now() + drain;
        loop {
            let s = self.queue.stats().await.map_err(|e| format!("stats during drain: {e}"))?;
            if s.pending + s.running + s.waiting == 0 || tokio::time::Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        for w in self.workers {
            let id = w.id().to_string();
            w.shutdown().await.map_err(|e| format!("worker {id} shutdown: {e}"))?;
        }
        self.queue.stats().await.map_err(|e| format!("final stats: {e}"))
    }
}

fn opts(priority: i32, delay_ms: Option<u64>, max_retries: u32) -> EnqueueOptions {
    EnqueueOptions {
        priority: Some(priority),
        delay_ms,
        max_retries: Some(max_retries),
        backoff: Some(Backoff { base_ms: 100, max_ms: 500 }),
        ..Default::default()
    }
}

/// One producer tick every 100 ms: a single job; every 5th tick a batch of ten; every 20th a
/// flow of a parent and three children plus a job depending on the flow's root.
async fn produce(queue: Queue, tally: Arc<Tally>, stop: CancellationToken, seed: u64, rate: u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Jobs per tick at 10 ticks a second: one single + 10/5 batch + 5/20 flow ones ≈ 3.25.
    let ticks_per_sec = (f64::from(rate) / 3.25).max(1.0);
    let mut every = tokio::time::interval(Duration::from_secs_f64(1.0 / ticks_per_sec));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut tick: u64 = 0;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        tick += 1;
        let payload = vec![rng.random::<u8>(); 64];
        let delay = rng.random_bool(0.2).then(|| rng.random_range(0..2_000));
        let r = queue.enqueue(OK, payload, opts(rng.random_range(-5..=5), delay, 3)).await;
        count(&tally, r.map(|_| 1));
        if tick % 5 == 0 {
            let items = (0..10)
                .map(|i| {
                    let (task, retries) = match i {
                        0 => (DOOMED, 1),
                        1 => (FLAKY, 3),
                        2 if tick % 10 == 0 => (FATAL, 3),
                        _ => (OK, 3),
                    };
                    let delay = rng.random_bool(0.1).then(|| rng.random_range(0..1_000));
                    EnqueueItem {
                        task: task.to_string(),
                        payload: vec![rng.random::<u8>(); 32],
                        options: opts(rng.random_range(-5..=5), delay, retries),
                    }
                })
                .collect();
            let r = queue.enqueue_many(items).await;
            count(&tally, r.map(|ids| ids.len() as u64));
        }
        if tick % 20 == 0 {
            let child = |n: u8| FlowNode { task: OK.to_string(), payload: vec![n; 16], ..Default::default() };
            let root = FlowNode {
                task: OK.to_string(),
                children: vec![child(1), child(2), child(3)],
                ..Default::default()
            };
            match queue.add_flow(root).await {
                Ok(ids) => {
                    Tally::add(&tally.enqueued, ids.len() as u64);
                    let dep = EnqueueOptions { depends_on: vec![ids[0].to_string()], ..opts(0, None, 3) };
                    count(&tally, queue.enqueue(OK, vec![9; 16], dep).await.map(|_| 1));
                }
                Err(e) => {
                    Tally::add(&tally.errors, 1);
                    eprintln!("soak: add_flow failed: {e}");
                }
            }
        }
    }
}

fn count(tally: &Tally, r: flexiq_runtime::Result<u64>) {
    match r {
        Ok(n) => Tally::add(&tally.enqueued, n),
        Err(e) => {
            Tally::add(&tally.errors, 1);
            eprintln!("soak: enqueue failed: {e}");
        }
    }
}

/// Every 5 s: purge completed jobs and remove dead and failed ones that finished more than
/// [`PURGE_AFTER_SECS`] ago, and trim the events stream to [`EVENTS_KEPT`], counting what went.
async fn maintain(queue: Queue, tally: Arc<Tally>, stop: CancellationToken) {
    let mut every = tokio::time::interval(Duration::from_secs(5));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = every.tick() => {}
        }
        match queue.purge_completed(PURGE_AFTER_SECS).await {
            Ok(n) => Tally::add(&tally.purged, n),
            Err(e) => {
                Tally::add(&tally.errors, 1);
                eprintln!("soak: purge_completed failed: {e}");
            }
        }
        for status in ["dead", "failed"] {
            match queue.clean("default", status, PURGE_AFTER_SECS * 1_000, 10_000).await {
                Ok(ids) => Tally::add(&tally.cleaned, ids.len() as u64),
                Err(e) => {
                    Tally::add(&tally.errors, 1);
                    eprintln!("soak: clean {status} failed: {e}");
                }
            }
        }
        match queue.trim_events(EVENTS_KEPT, None).await {
            Ok(n) => Tally::add(&tally.trimmed, n),
            Err(e) => {
                Tally::add(&tally.errors, 1);
                eprintln!("soak: trim_events failed: {e}");
            }
        }
    }
}
