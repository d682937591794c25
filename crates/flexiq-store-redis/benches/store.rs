//! Store benchmarks against a local Redis (`FLEXIQ_REDIS_URL`, default
//! `redis://127.0.0.1:6379`), under a key prefix of their own that is deleted afterwards.
//! Ids are `redis/<op>/<param>`; `redis/baseline_*` are raw fred round trips for scale.
//! Run: `cargo bench -p flexiq-store-redis --bench store`.

#[path = "../tests/support/harness.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod harness;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, Events, JobStore, WaitForWorkRequest,
};
use flexiq_core::{Backoff, EnqueueOptions, NewJob};
use fred::prelude::*;
use tokio::sync::mpsc;

use flexiq_conformance::kit::{bench_runtime, time_in_task};
use flexiq_store_redis::RedisStore;
use harness::RedisHarness;

fn wall() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

fn new_job(queue: &str) -> NewJob {
    let opts =
        EnqueueOptions { queue: Some(queue.into()), backoff: Some(Backoff::NONE), ..Default::default() };
    NewJob::build("noop", b"{}".to_vec(), opts, wall()).unwrap()
}

async fn raw_client(url: &str) -> Client {
    let c = Builder::from_config(Config::from_url(url).unwrap()).build().unwrap();
    c.init().await.unwrap();
    c
}

/// Server memory (bytes) used by `n` pending jobs with a two-byte payload, per job.
async fn memory_per_job(h: &RedisHarness, client: &Client, n: usize) -> i64 {
    let used = || async {
        let info: String = client.info(Some(fred::types::InfoKind::Memory)).await.unwrap();
        info.lines().find_map(|l| l.strip_prefix("used_memory:")).unwrap().trim().parse::<i64>().unwrap()
    };
    let store = h.store("memory").await.unwrap();
    let before = used().await;
    for _ in 0..n / 1_000 {
        let jobs: Vec<NewJob> = (0..1_000).map(|_| new_job("mem")).collect();
        store.enqueue(EnqueueRequest { jobs, max_pending: None, now: wall() }).await.unwrap();
    }
    (used().await - before) / n as i64
}

const DRAIN: usize = 50_000;

/// Drains `DRAIN` jobs enqueued beforehand (not timed) with 8 loops claiming 100 at a time.
fn drain_bench(b: &mut criterion::Bencher<'_>, rt: &tokio::runtime::Runtime, store: &RedisStore) {
    b.to_async(rt).iter_custom(|iters| {
        let store = store.clone();
        async move {
            let mut total = Duration::ZERO;
            for i in 0..iters {
                let queue = format!("drain{i}-{}", rand::random::<u32>());
                for _ in 0..DRAIN / 1_000 {
                    let jobs: Vec<NewJob> = (0..1_000).map(|_| new_job(&queue)).collect();
                    store.enqueue(EnqueueRequest { jobs, max_pending: None, now: wall() }).await.unwrap();
                }
                let start = Instant::now();
                flexiq_conformance::kit::drain(Arc::new(store.clone()), &queue, DRAIN as u64, 8).await;
                total += start.elapsed();
            }
            total
        }
    })
}

fn benches(c: &mut Criterion) {
    let rt = bench_runtime();
    let h = RedisHarness::new();
    let store = rt.block_on(h.store("bench")).unwrap();
    let client = rt.block_on(raw_client(&h.url));
    let per_job = rt.block_on(memory_per_job(&h, &client, 20_000));
    eprintln!("redis memory per pending job (2-byte payload, default options): {per_job} bytes");
    let popper = rt.block_on(raw_client(&h.url));
    let list = format!("{{{}}}:baseline", h.prefix);

    let mut g = c.benchmark_group("redis");
    g.throughput(Throughput::Elements(1));
    g.bench_function(BenchmarkId::new("baseline_lpush", 1), |b| {
        b.iter_custom(|iters| {
            let (client, list) = (client.clone(), list.clone());
            time_in_task(&rt, iters, move || {
                let (client, list) = (client.clone(), list.clone());
                async move {
                    let _: i64 = client.lpush(&list, "x").await.unwrap();
                }
            })
        })
    });
    let _: i64 = rt.block_on(client.del(&list)).unwrap();
    g.bench_function(BenchmarkId::new("baseline_lpush_brpop", 1), |b| {
        b.to_async(&rt).iter(|| async {
            let (push, pop) =
                tokio::join!(client.lpush::<i64, _, _>(&list, "x"), popper.brpop::<Value, _>(&list, 1.0));
            push.unwrap();
            pop.unwrap();
        })
    });
    g.bench_function(BenchmarkId::new("enqueue", 1), |b| {
        b.iter_custom(|iters| {
            let store = store.clone();
            time_in_task(&rt, iters, move || {
                let store = store.clone();
                async move {
                    let req = EnqueueRequest { jobs: vec![new_job("one")], max_pending: None, now: wall() };
                    store.enqueue(req).await.unwrap();
                }
            })
        })
    });
    g.throughput(Throughput::Elements(1_000));
    g.bench_function(BenchmarkId::new("enqueue_many", 1_000), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let jobs: Vec<NewJob> = (0..1_000).map(|_| new_job("many")).collect();
                    let start = Instant::now();
                    store.enqueue(EnqueueRequest { jobs, max_pending: None, now: wall() }).await.unwrap();
                    total += start.elapsed();
                }
                total
            }
        })
    });
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(DRAIN as u64));
    // The same drain in a namespace with events switched off: what the events stream costs.
    let quiet = rt.block_on(h.store("quiet")).unwrap();
    rt.block_on(quiet.set_events_enabled(false)).unwrap();
    for (id, store) in [("drain_8x100", &store), ("drain_8x100_events_off", &quiet)] {
        g.bench_function(BenchmarkId::new(id, DRAIN), |b| drain_bench(b, &rt, store));
    }
    g.finish();

    let mut g = c.benchmark_group("redis");
    g.throughput(Throughput::Elements(1));
    let producer = rt.block_on(h.store("latency")).unwrap();
    let claimer = rt.block_on(h.store("latency")).unwrap();
    let (tx, rx) = mpsc::unbounded_channel::<(Instant, ClaimRequest, Ack)>();
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let claim_task = rt.spawn({
        let claimer = claimer.clone();
        async move {
            let queues = vec!["lat".to_string()];
            loop {
                let req =
                    ClaimRequest { queues: queues.clone(), limit: 1, worker_id: "idle".into(), now: wall() };
                let Ok(got) = claimer.claim(req.clone()).await else { return };
                if let Some(c) = got.into_iter().next() {
                    let ack = Ack {
                        job_id: c.job.id.clone(),
                        fence: c.fence,
                        kind: AckKind::Complete { result: None },
                    };
                    if tx.send((Instant::now(), req, ack)).is_err() {
                        return;
                    }
                    continue;
                }
                let wait = WaitForWorkRequest { queues: queues.clone(), timeout_ms: 1_000 };
                if claimer.wait_for_work(wait).await.is_err() {
                    return;
                }
            }
        }
    });
    let samples: Arc<std::sync::Mutex<Vec<Duration>>> = Arc::default();
    g.bench_function(BenchmarkId::new("enqueue_to_claim", "idle"), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (producer, claimer) = (producer.clone(), claimer.clone());
            let (rx, samples) = (rx.clone(), samples.clone());
            async move {
                let mut rx = rx.lock().await;
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    let start = Instant::now();
                    let now = wall();
                    producer
                        .enqueue(EnqueueRequest { jobs: vec![new_job("lat")], max_pending: None, now })
                        .await
                        .unwrap();
                    let (claimed_at, _, ack) = rx.recv().await.unwrap();
                    let lat = claimed_at - start;
                    samples.lock().unwrap().push(lat);
                    total += lat;
                    claimer.ack(AckRequest { acks: vec![ack], now: wall() }).await.unwrap();
                }
                total
            }
        })
    });
    g.finish();
    claim_task.abort();
    let mut samples = samples.lock().unwrap().clone();
    samples.sort();
    if !samples.is_empty() {
        let pct = |p: f64| samples[((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1];
        eprintln!(
            "redis/enqueue_to_claim/idle over {} samples: p50 {:?}, p99 {:?}",
            samples.len(),
            pct(0.50),
            pct(0.99)
        );
    }
    rt.block_on(async {
        let _ = client.quit().await;
        let _ = popper.quit().await;
        h.cleanup_now().await;
    });
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
