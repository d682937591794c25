//! The workflow host loop against the store's own drain, on SQLite and (with the `postgres`
//! feature) PostgreSQL, measured in the same run so the ratio holds for this machine.
//!
//! - `workflow/<store>/enqueue_parallel/1000`: one `enqueue_parallel` of 1,000 stages.
//! - `workflow/<store>/plain_drain/1000x8`: the store's drain of 1,000 no-op jobs by 8 claim-and-
//!   complete loops (the conformance kit's drain, batches of 100), the baseline.
//! - `workflow/<store>/plain_drain/1000x8_batch1`: the same loops claiming one job at a time,
//!   the plain job's cost of the host loop's shape (one claim and one ack per job).
//! - `workflow/<store>/worker_drain/1000x8`: the same 1,000 no-op jobs drained by a flexiq
//!   `Worker` at concurrency 8 (claims and acks batched by the runtime): the store's drain rate
//!   for plain jobs as a user sees it, the issue's baseline.
//! - `workflow/<store>/host_drain/fair_off`: 1,000 stages drained by 8 concurrent hosts, each a
//!   view of its own doing `dequeue` + fenced `complete` one job at a time, fairness off.
//! - `workflow/<store>/host_drain/cap2_100groups`: the same with `fairness_cap` 2 and the stages
//!   spread over 100 groups read from the payload (`tenant`).
//! - `workflow/<store>/host_drain/*_ahead`: both again with `claim_ahead` on, each ack claiming
//!   its host's next job in the same store call.
//!
//! Each measured iteration starts from empty storage (a fresh SQLite file, a fresh PostgreSQL
//! schema in `FLEXIQ_PG_URL`, default `postgres://postgres@127.0.0.1:5432/test`, dropped after)
//! and times only the enqueue or the drain, not the setup.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use flexiq_conformance::kit;
use flexiq_runtime::core::store::EnqueueRequest;
use flexiq_runtime::{
    connect, AckOutcome, ConnectOptions, DequeueOptions, EnqueueItem, Queue, Worker, WorkerConfig,
    WorkflowJobSpec, WorkflowJobs, WorkflowOptions,
};
use tokio::runtime::Runtime;

const STAGES: usize = 1_000;
const HOSTS: usize = 8;
const GROUPS: usize = 100;

/// Where a measured iteration's storage lives, and how it goes away.
#[derive(Clone, Copy)]
enum Target {
    Sqlite,
    #[cfg(feature = "postgres")]
    Postgres,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Sqlite => "sqlite",
            #[cfg(feature = "postgres")]
            Target::Postgres => "postgres",
        }
    }
}

/// A queue on fresh storage and what removes it.
struct Fresh {
    queue: Queue,
    _dir: Option<tempfile::TempDir>,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    schema: Option<String>,
}

#[cfg(feature = "postgres")]
fn pg_url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

async fn fresh(target: Target) -> Fresh {
    match target {
        Target::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("wf.db").display());
            let queue = connect(&url, ConnectOptions::default()).await.unwrap();
            Fresh { queue, _dir: Some(dir), schema: None }
        }
        #[cfg(feature = "postgres")]
        Target::Postgres => {
            let schema = format!("fq_wfbench_{}", uuid::Uuid::new_v4().simple());
            let url = format!("{}?schema={schema}", pg_url());
            let opts = ConnectOptions { pool_size: Some(2 * HOSTS), ..Default::default() };
            let queue = connect(&url, opts).await.unwrap();
            Fresh { queue, _dir: None, schema: Some(schema) }
        }
    }
}

impl Fresh {
    async fn remove(self) {
        self.queue.close().await.unwrap();
        #[cfg(feature = "postgres")]
        if let Some(schema) = &self.schema {
            let (client, conn) = tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await.unwrap();
            tokio::spawn(conn);
            // Closing the queue ended whatever its pool still ran on the server, so nothing of
            // it holds locks the drop needs.
            client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.unwrap();
        }
    }
}

/// 1,000 stages of 10 runs, spread over 100 tenants.
fn stages(round: usize) -> Vec<WorkflowJobSpec> {
    (0..STAGES)
        .map(|i| WorkflowJobSpec {
            workflow_run_id: format!("run-{round}-{}", i % 10),
            workflow_id: "bench".into(),
            stage_id: format!("stage-{i}"),
            payload: format!(r#"{{"tenant":"t{:03}","i":{i}}}"#, i % GROUPS).into_bytes(),
            ..Default::default()
        })
        .collect()
}

fn view_options(cap: Option<u32>, ahead: bool, host: usize) -> WorkflowOptions {
    WorkflowOptions {
        fairness_group_by: cap.map(|_| "tenant".to_string()),
        fairness_cap: cap,
        worker_id: Some(format!("host-{host}")),
        claim_ahead: ahead,
        ..Default::default()
    }
}

/// One host: dequeue + fenced complete until every stage is done.
async fn host(wf: WorkflowJobs, left: Arc<AtomicU64>) {
    while left.load(Ordering::Acquire) > 0 {
        match wf.dequeue(DequeueOptions::default()).await.unwrap() {
            Some(d) => {
                let out = wf.complete(d.job.id.as_str(), Some(d.fence)).await.unwrap();
                assert_eq!(out, AckOutcome::Acknowledged, "job {} was superseded", d.job.id);
                left.fetch_sub(1, Ordering::AcqRel);
            }
            None => tokio::task::yield_now().await,
        }
    }
}

async fn host_drain_once(target: Target, cap: Option<u32>, ahead: bool, round: usize) -> Duration {
    let f = fresh(target).await;
    let first = f.queue.workflow_jobs(view_options(cap, false, 0)).unwrap();
    first.enqueue_parallel(stages(round)).await.unwrap();
    let left = Arc::new(AtomicU64::new(STAGES as u64));
    let views: Vec<WorkflowJobs> =
        (0..HOSTS).map(|h| f.queue.workflow_jobs(view_options(cap, ahead, h)).unwrap()).collect();
    let start = Instant::now();
    let tasks: Vec<_> = views.into_iter().map(|wf| tokio::spawn(host(wf, left.clone()))).collect();
    for t in tasks {
        t.await.expect("a host panicked");
    }
    let took = start.elapsed();
    f.remove().await;
    took
}

async fn plain_drain_once(target: Target, batch: u32) -> Duration {
    let f = fresh(target).await;
    let store = f.queue.store().clone();
    let req =
        EnqueueRequest { jobs: kit::noop_jobs("bench", STAGES), max_pending: None, now: kit::wall_ms() };
    store.enqueue(req).await.unwrap();
    let left = Arc::new(AtomicU64::new(STAGES as u64));
    let start = Instant::now();
    let loops: Vec<_> = (0..HOSTS)
        .map(|w| {
            let queues = vec!["bench".to_string()];
            tokio::spawn(kit::drain_loop(store.clone(), queues, format!("w{w}"), batch, left.clone()))
        })
        .collect();
    let mut done = 0;
    for l in loops {
        done += l.await.expect("a drain loop panicked");
    }
    let took = start.elapsed();
    assert_eq!(done, STAGES as u64);
    f.remove().await;
    took
}

async fn worker_drain_once(target: Target) -> Duration {
    let f = fresh(target).await;
    let items = (0..STAGES).map(|i| EnqueueItem::new("noop", i.to_string())).collect();
    f.queue.enqueue_many(items).await.unwrap();
    let config = WorkerConfig { concurrency: HOSTS as u32, maintenance: None, ..Default::default() };
    let mut w = Worker::new(f.queue.clone(), config).unwrap();
    w.register("noop", |_| async { Ok(None) }).unwrap();
    let start = Instant::now();
    let running = w.start();
    while running.counters().acknowledged < STAGES as u64 {
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let took = start.elapsed();
    running.shutdown().await.unwrap();
    f.remove().await;
    took
}

async fn enqueue_once(target: Target, round: usize) -> Duration {
    let f = fresh(target).await;
    let wf = f.queue.workflow_jobs(view_options(Some(2), false, 0)).unwrap();
    let specs = stages(round);
    let start = Instant::now();
    wf.enqueue_parallel(specs).await.unwrap();
    let took = start.elapsed();
    f.remove().await;
    took
}

/// Times `iters` runs of `once` (each on fresh storage) inside one task on the runtime.
fn timed<F, Fut>(rt: &Runtime, iters: u64, once: F) -> Duration
where
    F: Fn(usize) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Duration> + Send,
{
    rt.block_on(async move {
        tokio::spawn(async move {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                total += once(i as usize).await;
            }
            total
        })
        .await
        .expect("the timed task panicked")
    })
}

fn bench_target(c: &mut Criterion, target: Target) {
    let rt = kit::bench_runtime();
    let mut g = c.benchmark_group(format!("workflow/{}", target.name()));
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(STAGES as u64));
    g.bench_function(BenchmarkId::new("enqueue_parallel", STAGES), |b| {
        b.iter_custom(|iters| timed(&rt, iters, move |r| enqueue_once(target, r)))
    });
    g.bench_function(BenchmarkId::new("plain_drain", format!("{STAGES}x{HOSTS}")), |b| {
        b.iter_custom(|iters| timed(&rt, iters, move |_| plain_drain_once(target, 100)))
    });
    g.bench_function(BenchmarkId::new("plain_drain", format!("{STAGES}x{HOSTS}_batch1")), |b| {
        b.iter_custom(|iters| timed(&rt, iters, move |_| plain_drain_once(target, 1)))
    });
    g.bench_function(BenchmarkId::new("worker_drain", format!("{STAGES}x{HOSTS}")), |b| {
        b.iter_custom(|iters| timed(&rt, iters, move |_| worker_drain_once(target)))
    });
    for ahead in [false, true] {
        let tail = if ahead { "_ahead" } else { "" };
        g.bench_function(BenchmarkId::new("host_drain", format!("fair_off{tail}")), |b| {
            b.iter_custom(|iters| timed(&rt, iters, move |r| host_drain_once(target, None, ahead, r)))
        });
        g.bench_function(BenchmarkId::new("host_drain", format!("cap2_{GROUPS}groups{tail}")), |b| {
            b.iter_custom(|iters| timed(&rt, iters, move |r| host_drain_once(target, Some(2), ahead, r)))
        });
    }
    g.finish();
}

fn sqlite(c: &mut Criterion) {
    bench_target(c, Target::Sqlite);
}

#[cfg(feature = "postgres")]
fn postgres(c: &mut Criterion) {
    bench_target(c, Target::Postgres);
}

#[cfg(not(feature = "postgres"))]
criterion_group!(benches, sqlite);
#[cfg(feature = "postgres")]
criterion_group!(benches, sqlite, postgres);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
