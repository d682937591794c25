//! `flexiq-bench`: the four commands of the side-by-side harness through flexiq's public Rust
//! API, each printing one JSON line.
//!
//! The Python and Node SDKs (`crates/flexiq-py/bench/driver.py`, `crates/flexiq-node/bench/
//! driver.mjs`) and the peers (`bench/peers/`) answer the same commands with the same JSON, so
//! `cargo xtask bench --latency | --sdk-overhead | --peers` can put every system side by side:
//!
//! - `enqueue-single`: `--jobs` awaited enqueues one after another (each returns after its
//!   commit); the rate, and the median time of one call.
//! - `enqueue-batch`: the same jobs in batches of `--batch`, one awaited call per batch.
//! - `drain`: `--jobs` pending jobs (enqueued first, untimed) run by a worker with a no-op
//!   handler at `--concurrency`, timed from the worker's start until the last handler ran; also
//!   the longest gap between two handler starts, while every job is still due.
//! - `latency`: an idle, ready worker; `--jobs` jobs enqueued at `--rate` per second; from just
//!   before the enqueue call to the handler's first line, p50 and p99. The median awaited
//!   enqueue of the same run is the store's round trip, the floor under that figure.
//!
//! The store is whatever URL it is given; the caller isolates and cleans it up.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use flexiq::{connect, ConnectOptions, EnqueueItem, EnqueueOptions, Worker, WorkerConfig};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::Notify;

#[derive(Clone, Copy, ValueEnum)]
enum Command {
    EnqueueSingle,
    EnqueueBatch,
    Drain,
    Latency,
}

#[derive(Parser)]
#[command(name = "flexiq-bench", about = "flexiq through its Rust API: one harness command, one JSON line")]
struct Args {
    /// What to measure.
    #[arg(value_enum)]
    command: Command,
    /// The store: a SQLite path or `sqlite://`, `postgres://` or `redis://` URL.
    url: String,
    /// Jobs in the run.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
    /// Jobs per enqueue call (`enqueue-batch`, and how `drain` fills the queue).
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    batch: u64,
    /// Handler slots of the draining worker.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    concurrency: u32,
    /// Jobs per second in `latency`.
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
}

type Fail = Box<dyn std::error::Error>;

fn payload(i: u64) -> Vec<u8> {
    format!("{{\"i\":{i}}}").into_bytes()
}

fn index_of(payload: &[u8]) -> Option<usize> {
    let v: Value = serde_json::from_slice(payload).ok()?;
    v.get("i")?.as_u64().map(|i| i as usize)
}

/// The value at quantile `q` (0..=1) of `xs`, sorted in place; 0 for an empty slice.
fn quantile(xs: &mut [f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let at = ((xs.len() - 1) as f64 * q).round() as usize;
    xs[at]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

async fn fill(queue: &flexiq::Queue, jobs: u64, batch: u64) -> Result<(), Fail> {
    let mut next = 0;
    while next < jobs {
        let end = (next + batch).min(jobs);
        let items = (next..end).map(|i| EnqueueItem::new("noop", payload(i))).collect();
        queue.enqueue_many(items).await?;
        next = end;
    }
    Ok(())
}

async fn enqueue_single(queue: &flexiq::Queue, jobs: u64) -> Result<Value, Fail> {
    let mut calls = Vec::with_capacity(jobs as usize);
    let t0 = Instant::now();
    for i in 0..jobs {
        let t = Instant::now();
        queue.enqueue("noop", payload(i), EnqueueOptions::default()).await?;
        calls.push(ms(t.elapsed()));
    }
    let secs = t0.elapsed().as_secs_f64();
    Ok(json!({ "secs": secs, "rate": jobs as f64 / secs, "call_p50_ms": quantile(&mut calls, 0.5) }))
}

async fn enqueue_batch(queue: &flexiq::Queue, jobs: u64, batch: u64) -> Result<Value, Fail> {
    let t0 = Instant::now();
    fill(queue, jobs, batch).await?;
    let secs = t0.elapsed().as_secs_f64();
    Ok(json!({ "secs": secs, "rate": jobs as f64 / secs, "batch": batch }))
}

/// Handler start times of one run, and a wake-up for when all have been seen.
struct Starts {
    at: Mutex<Vec<Instant>>,
    seen: AtomicUsize,
    want: usize,
    all: Notify,
}

impl Starts {
    fn new(want: usize) -> Arc<Self> {
        Arc::new(Starts {
            at: Mutex::new(Vec::with_capacity(want)),
            seen: AtomicUsize::new(0),
            want,
            all: Notify::new(),
        })
    }

    fn record(&self) {
        self.at.lock().push(Instant::now());
        if self.seen.fetch_add(1, Ordering::AcqRel) + 1 == self.want {
            self.all.notify_one();
        }
    }

    /// The longest time between two consecutive handler starts (ms).
    fn longest_gap_ms(&self) -> f64 {
        let mut at = self.at.lock().clone();
        at.sort();
        at.windows(2).map(|w| ms(w[1] - w[0])).fold(0.0, f64::max)
    }
}

async fn drain(queue: &flexiq::Queue, jobs: u64, batch: u64, concurrency: u32) -> Result<Value, Fail> {
    fill(queue, jobs, batch).await?;
    let starts = Starts::new(jobs as usize);
    let mut worker =
        Worker::new(queue.clone(), WorkerConfig { concurrency, maintenance: None, ..Default::default() })?;
    let s = starts.clone();
    worker.register("noop", move |_ctx| {
        s.record();
        async { Ok(None) }
    })?;
    let t0 = Instant::now();
    let running = worker.start();
    let done = starts.all.notified();
    if starts.seen.load(Ordering::Acquire) < jobs as usize {
        done.await;
    }
    let secs = t0.elapsed().as_secs_f64();
    running.shutdown().await?;
    Ok(json!({
        "secs": secs,
        "rate": jobs as f64 / secs,
        "concurrency": concurrency,
        "max_gap_ms": starts.longest_gap_ms(),
    }))
}

async fn latency(queue: &flexiq::Queue, jobs: u64, rate: f64) -> Result<Value, Fail> {
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("rate {rate} must be a positive number of jobs per second").into());
    }
    let n = jobs as usize;
    let sent: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; n]));
    let waits: Arc<Mutex<Vec<f64>>> = Arc::new(Mutex::new(Vec::with_capacity(n)));
    let seen = Starts::new(n);
    let mut worker =
        Worker::new(queue.clone(), WorkerConfig { concurrency: 1, maintenance: None, ..Default::default() })?;
    let (s, w, k) = (sent.clone(), waits.clone(), seen.clone());
    worker.register("noop", move |ctx| {
        let now = Instant::now();
        if let Some(t) = index_of(ctx.payload()).and_then(|i| s.lock().get(i).copied().flatten()) {
            w.lock().push(ms(now - t));
        }
        k.record();
        async { Ok(None) }
    })?;
    let running = worker.start();
    running.ready().await?;
    let mut calls = Vec::with_capacity(n);
    let every = Duration::from_secs_f64(1.0 / rate);
    let t0 = Instant::now();
    for i in 0..jobs {
        tokio::time::sleep_until((t0 + every * i as u32).into()).await;
        let t = Instant::now();
        sent.lock()[i as usize] = Some(t);
        queue.enqueue("noop", payload(i), EnqueueOptions::default()).await?;
        calls.push(ms(t.elapsed()));
    }
    let done = seen.all.notified();
    if seen.seen.load(Ordering::Acquire) < n {
        done.await;
    }
    running.shutdown().await?;
    let mut waits = std::mem::take(&mut *waits.lock());
    Ok(json!({
        "rate": rate,
        "p50_ms": quantile(&mut waits, 0.5),
        "p99_ms": quantile(&mut waits, 0.99),
        "enqueue_p50_ms": quantile(&mut calls, 0.5),
    }))
}

fn backend(url: &str) -> &'static str {
    if url.starts_with("postgres") {
        "postgres"
    } else if url.starts_with("redis") {
        "redis"
    } else {
        "sqlite"
    }
}

#[tokio::main]
async fn main() -> Result<(), Fail> {
    let args = Args::parse();
    let queue = connect(&args.url, ConnectOptions::default()).await?;
    let (name, mut out) = match args.command {
        Command::EnqueueSingle => ("enqueue-single", enqueue_single(&queue, args.jobs).await?),
        Command::EnqueueBatch => ("enqueue-batch", enqueue_batch(&queue, args.jobs, args.batch).await?),
        Command::Drain => ("drain", drain(&queue, args.jobs, args.batch, args.concurrency).await?),
        Command::Latency => ("latency", latency(&queue, args.jobs, args.rate).await?),
    };
    queue.close().await?;
    let head =
        json!({ "system": "flexiq-rust", "store": backend(&args.url), "command": name, "jobs": args.jobs });
    if let (Value::Object(o), Value::Object(h)) = (&mut out, head) {
        o.extend(h);
    }
    println!("{out}");
    Ok(())
}
