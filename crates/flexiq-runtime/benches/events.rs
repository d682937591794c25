//! What the events stream costs and how fast it delivers, on each store built in (SQLite
//! always; PostgreSQL and Redis with their features).
//!
//! - `events/<store>/drain/on` and `.../off`: a Rust worker at concurrency 8 drains
//!   pre-enqueued no-op jobs, with the namespace's events switched on (every enqueue, claim and
//!   completion writes an event) and off (`set_events_enabled(false)` before the enqueue). The
//!   time runs from the worker's start to the last ack. The ratio off / on is the throughput
//!   the stream keeps.
//! - Before criterion runs, delivery latency: a reader in another process (this binary
//!   re-run with `FLEXIQ_EVENTS_READER=<url>`) blocks in `read_events`; this process enqueues
//!   one job every 20 ms and the reader stamps the wall clock when each event reaches it. p50 /
//!   p99 are printed from the moment the enqueue call returned (the commit is then known to the
//!   writer) and, as a bound, from the moment it was made.
//!
//! PostgreSQL runs in a schema of its own (`FLEXIQ_PG_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`), Redis under a key prefix of its own
//! (`FLEXIQ_REDIS_URL`, default `redis://127.0.0.1:6379`); both are removed afterwards.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{BenchmarkId, Criterion, Throughput};
use flexiq_runtime::{connect, ConnectOptions, EnqueueItem, EnqueueOptions, Queue, Worker, WorkerConfig};

const READER_ENV: &str = "FLEXIQ_EVENTS_READER";
const LATENCY_SAMPLES: usize = 200;

#[derive(Clone, Copy, Debug)]
enum Target {
    Sqlite,
    #[cfg(feature = "postgres")]
    Postgres,
    #[cfg(feature = "redis")]
    Redis,
}

impl Target {
    fn all() -> Vec<Target> {
        vec![
            Target::Sqlite,
            #[cfg(feature = "postgres")]
            Target::Postgres,
            #[cfg(feature = "redis")]
            Target::Redis,
        ]
    }

    fn name(self) -> &'static str {
        match self {
            Target::Sqlite => "sqlite",
            #[cfg(feature = "postgres")]
            Target::Postgres => "postgres",
            #[cfg(feature = "redis")]
            Target::Redis => "redis",
        }
    }

    /// Jobs per drain: enough for a drain to take a second or so on this store.
    fn drain_jobs(self) -> usize {
        match self {
            Target::Sqlite => 20_000,
            #[cfg(feature = "postgres")]
            Target::Postgres => 5_000,
            #[cfg(feature = "redis")]
            Target::Redis => 10_000,
        }
    }
}

/// Fresh storage on a store, and what removes it.
struct Fresh {
    url: String,
    _dir: Option<tempfile::TempDir>,
    cleanup: Cleanup,
}

enum Cleanup {
    Nothing,
    #[cfg(feature = "postgres")]
    Schema(String),
    #[cfg(feature = "redis")]
    Prefix(String),
}

#[cfg(feature = "postgres")]
fn pg_url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

#[cfg(feature = "redis")]
fn redis_url() -> String {
    std::env::var("FLEXIQ_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string())
}

fn fresh(target: Target) -> Fresh {
    let tag = uuid::Uuid::new_v4().simple().to_string();
    match target {
        Target::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("events.db").display());
            Fresh { url, _dir: Some(dir), cleanup: Cleanup::Nothing }
        }
        #[cfg(feature = "postgres")]
        Target::Postgres => {
            let schema = format!("fq_evbench_{tag}");
            Fresh {
                url: format!("{}?schema={schema}", pg_url()),
                _dir: None,
                cleanup: Cleanup::Schema(schema),
            }
        }
        #[cfg(feature = "redis")]
        Target::Redis => {
            let prefix = format!("fqevbench{tag}");
            Fresh {
                url: format!("{}?prefix={prefix}", redis_url()),
                _dir: None,
                cleanup: Cleanup::Prefix(prefix),
            }
        }
    }
}

impl Fresh {
    async fn remove(self) {
        match self.cleanup {
            Cleanup::Nothing => {}
            #[cfg(feature = "postgres")]
            Cleanup::Schema(schema) => {
                let (client, conn) = tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await.unwrap();
                tokio::spawn(conn);
                client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.unwrap();
            }
            #[cfg(feature = "redis")]
            Cleanup::Prefix(prefix) => {
                flexiq_conformance::redis_kit::delete_prefix(&redis_url(), &prefix).await
            }
        }
    }
}

fn unix_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as i128
}

/// The reader process: prints `ready`, then `<job id> <unix ns>` for each enqueued event.
fn reader(url: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let q = connect(url, ConnectOptions::default()).await.unwrap();
        let mut after = q.last_event_id().await.unwrap();
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready").unwrap();
        out.flush().unwrap();
        let mut seen = 0;
        while seen < LATENCY_SAMPLES {
            let events = q.read_events(after.as_deref(), 5_000, 100).await.unwrap();
            let now = unix_ns();
            for e in &events {
                if let Some(id) = &e.job_id {
                    writeln!(out, "{id} {now}").unwrap();
                    seen += 1;
                }
            }
            out.flush().unwrap();
            if let Some(last) = events.last() {
                after = Some(last.id.clone());
            }
        }
        q.close().await.unwrap();
    });
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Delivery latency to a reader in another process: (p50, p99) from the enqueue's return and
/// p50 from its call, in ms.
fn latency(rt: &tokio::runtime::Runtime, target: Target) -> (f64, f64, f64) {
    let f = fresh(target);
    let q = rt.block_on(connect(&f.url, ConnectOptions::default())).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(READER_ENV, &f.url)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the reader");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    let stamps = std::thread::spawn(move || {
        let mut got = HashMap::new();
        for line in lines {
            let line = line.unwrap();
            let (id, ns) = line.split_once(' ').unwrap();
            got.insert(id.to_string(), ns.parse::<i128>().unwrap());
        }
        got
    });
    let sent = rt.block_on(async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut sent = Vec::new();
        for i in 0..LATENCY_SAMPLES {
            let called = unix_ns();
            let id = q.enqueue("noop", i.to_string(), EnqueueOptions::default()).await.unwrap();
            sent.push((id.to_string(), called, unix_ns()));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        sent
    });
    let got = stamps.join().unwrap();
    child.wait().unwrap();
    let mut from_return: Vec<f64> = Vec::new();
    let mut from_call: Vec<f64> = Vec::new();
    for (id, called, returned) in sent {
        let at = got[&id];
        from_return.push((at - returned) as f64 / 1e6);
        from_call.push((at - called) as f64 / 1e6);
    }
    from_return.sort_by(f64::total_cmp);
    from_call.sort_by(f64::total_cmp);
    rt.block_on(async {
        q.close().await.unwrap();
        f.remove().await;
    });
    (percentile(&from_return, 0.5), percentile(&from_return, 0.99), percentile(&from_call, 0.5))
}

async fn drain_once(target: Target, events: bool) -> Duration {
    let f = fresh(target);
    let jobs = target.drain_jobs();
    let q: Queue = connect(&f.url, ConnectOptions::default()).await.unwrap();
    q.set_events_enabled(events).await.unwrap();
    for chunk in 0..jobs.div_ceil(5_000) {
        let n = 5_000.min(jobs - chunk * 5_000);
        let items = (0..n).map(|i| EnqueueItem::new("noop", (chunk * 5_000 + i).to_string())).collect();
        q.enqueue_many(items).await.unwrap();
    }
    let config = WorkerConfig { concurrency: 8, maintenance: None, ..Default::default() };
    let mut w = Worker::new(q.clone(), config).unwrap();
    w.register("noop", |_| async { Ok(None) }).unwrap();
    let start = Instant::now();
    let running = w.start();
    while running.counters().acknowledged < jobs as u64 {
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    let took = start.elapsed();
    running.shutdown().await.unwrap();
    q.close().await.unwrap();
    f.remove().await;
    took
}

fn drains(c: &mut Criterion, rt: &tokio::runtime::Runtime, target: Target) {
    let mut g = c.benchmark_group(format!("events/{}/drain", target.name()));
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(target.drain_jobs() as u64));
    for (name, on) in [("on", true), ("off", false)] {
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async move {
                    tokio::spawn(async move {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            total += drain_once(target, on).await;
                        }
                        total
                    })
                    .await
                    .expect("the drain panicked")
                })
            })
        });
    }
    g.finish();
}

fn main() {
    if let Ok(url) = std::env::var(READER_ENV) {
        reader(&url);
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    for target in Target::all() {
        let (p50, p99, call_p50) = latency(&rt, target);
        println!(
            "events/{}/latency: commit-to-reader in another process over {LATENCY_SAMPLES} events: \
             p50 {p50:.3} ms, p99 {p99:.3} ms (from the enqueue call: p50 {call_p50:.3} ms)",
            target.name()
        );
    }
    let mut c = Criterion::default().configure_from_args();
    for target in Target::all() {
        drains(&mut c, &rt, target);
    }
    c.final_summary();
}
