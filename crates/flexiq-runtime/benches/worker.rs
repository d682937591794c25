//! Worker benchmarks on the SQLite store.
//!
//! - `worker/drain/100000`: a Rust worker at concurrency 8 drains 100,000 pre-enqueued no-op
//!   jobs; the time runs from the worker's start to the last ack written.
//! - `worker/latency/single`: enqueue-to-handler-start latency of one job at a time to an idle
//!   worker.
//! - Before criterion runs, 1,000 jobs are enqueued at 100/s to an idle worker and the
//!   enqueue-to-handler-start p50 / p99 are printed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use flexiq_runtime::{connect, ConnectOptions, EnqueueItem, EnqueueOptions, Queue, Worker, WorkerConfig};
use parking_lot::Mutex;
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

const DRAIN_JOBS: usize = 100_000;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

async fn fresh_queue(dir: &tempfile::TempDir, name: &str) -> Queue {
    let url = format!("sqlite://{}", dir.path().join(name).display());
    connect(&url, ConnectOptions::default()).await.unwrap()
}

fn bench_config() -> WorkerConfig {
    WorkerConfig { concurrency: 8, maintenance: None, ..Default::default() }
}

async fn drain_once(dir: &tempfile::TempDir, round: usize) -> Duration {
    let q = fresh_queue(dir, &format!("drain-{round}.db")).await;
    for chunk in 0..DRAIN_JOBS / 10_000 {
        let items = (0..10_000).map(|i| EnqueueItem::new("noop", (chunk * 10_000 + i).to_string())).collect();
        q.enqueue_many(items).await.unwrap();
    }
    let mut w = Worker::new(q.clone(), bench_config()).unwrap();
    w.register("noop", |_| async { Ok(None) }).unwrap();
    let start = Instant::now();
    let running = w.start();
    while running.counters().acknowledged < DRAIN_JOBS as u64 {
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let took = start.elapsed();
    running.shutdown().await.unwrap();
    q.close().await.unwrap();
    took
}

fn drain(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("worker/drain");
    g.sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(DRAIN_JOBS as u64));
    let round = Arc::new(Mutex::new(0usize));
    g.bench_function(BenchmarkId::from_parameter(DRAIN_JOBS), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (dir, round) = (&dir, round.clone());
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let r = {
                        let mut r = round.lock();
                        *r += 1;
                        *r
                    };
                    total += drain_once(dir, r).await;
                }
                total
            }
        })
    });
    g.finish();
}

/// An idle worker whose handler reports when it starts each job.
async fn idle_worker(q: &Queue) -> (flexiq_runtime::WorkerHandle, mpsc::UnboundedReceiver<Instant>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut w = Worker::new(q.clone(), bench_config()).unwrap();
    w.register("ping", move |_| {
        let at = Instant::now();
        let tx = tx.clone();
        async move {
            let _ = tx.send(at);
            Ok(None)
        }
    })
    .unwrap();
    let running = w.start();
    tokio::time::sleep(Duration::from_millis(100)).await;
    (running, rx)
}

fn latency(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let (q, running, rx) = rt.block_on(async {
        let q = fresh_queue(&dir, "latency.db").await;
        let (running, rx) = idle_worker(&q).await;
        (q, running, rx)
    });
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let mut g = c.benchmark_group("worker/latency");
    g.sample_size(50);
    g.bench_function("single", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (q, rx) = (q.clone(), rx.clone());
            async move {
                let mut rx = rx.lock().await;
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t0 = Instant::now();
                    q.enqueue("ping", Vec::new(), EnqueueOptions::default()).await.unwrap();
                    let started = rx.recv().await.unwrap();
                    total += started.duration_since(t0);
                }
                total
            }
        })
    });
    g.finish();
    rt.block_on(running.shutdown()).unwrap();
}

/// 1,000 jobs at 100/s to an idle worker; prints p50 / p99 of enqueue-to-handler-start.
fn latency_report() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    rt.block_on(async {
        let q = fresh_queue(&dir, "latency-report.db").await;
        let (running, mut rx) = idle_worker(&q).await;
        let mut samples = Vec::with_capacity(1_000);
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        for _ in 0..1_000 {
            tick.tick().await;
            let t0 = Instant::now();
            q.enqueue("ping", Vec::new(), EnqueueOptions::default()).await.unwrap();
            let started = rx.recv().await.unwrap();
            samples.push(started.duration_since(t0));
        }
        running.shutdown().await.unwrap();
        samples.sort();
        let pct = |p: f64| samples[((p / 100.0) * samples.len() as f64).ceil() as usize - 1];
        println!(
            "worker/latency/1000@100per_s: enqueue to handler start p50 = {:.3} ms, p99 = {:.3} ms, max = {:.3} ms",
            pct(50.0).as_secs_f64() * 1e3,
            pct(99.0).as_secs_f64() * 1e3,
            samples[samples.len() - 1].as_secs_f64() * 1e3,
        );
    });
}

criterion_group!(benches, drain, latency);

fn main() {
    let filter_given = std::env::args().skip(1).any(|a| !a.starts_with('-'));
    if !filter_given || std::env::args().any(|a| a.contains("latency")) {
        latency_report();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
