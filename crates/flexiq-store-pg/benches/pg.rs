//! PostgreSQL store benchmarks: enqueue (one at a time, 16 callers, bulk), draining with
//! concurrent claim/ack loops, enqueue-to-claim wake-up latency, and a raw tokio-postgres
//! baseline doing the same work with hand-written SQL; and `stats` on a million jobs against
//! the count over the jobs table it replaced.
//!
//! Needs the server in `FLEXIQ_PG_URL` (default `postgres://postgres@127.0.0.1:5432/test`);
//! every group runs in its own schema, dropped at the end.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flexiq_core::store::{ClaimRequest, EnqueueRequest, Inspect, JobStore, WaitForWorkRequest};
use flexiq_core::{NewJob, Store};
use flexiq_store_pg::{PgOptions, PgStore};
use futures::pin_mut;
use support::{job, now_ms, url};
use tokio::runtime::Runtime;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;

async fn admin() -> tokio_postgres::Client {
    let (c, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    c
}

async fn open(schema: &str, pool: usize) -> PgStore {
    let opts = PgOptions { schema: schema.to_string(), pool_size: pool, ..Default::default() };
    PgStore::connect(&url(), opts).await.unwrap()
}

async fn drop_schema(schema: &str) {
    admin().await.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.unwrap();
}

async fn truncate(schema: &str) {
    admin()
        .await
        .batch_execute(&format!(
            "TRUNCATE \"{schema}\".jobs, \"{schema}\".task_metrics, \"{schema}\".job_errors, \"{schema}\".job_counts"
        ))
        .await
        .unwrap();
}

async fn enqueue_one(s: &PgStore) {
    s.enqueue(EnqueueRequest { jobs: vec![job("bench")], max_pending: None, now: now_ms() }).await.unwrap();
}

fn store_benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let schema = format!("fq_bench_{}", uuid::Uuid::new_v4().simple());
    let store = rt.block_on(open(&schema, 32));
    let mut g = c.benchmark_group("pg");
    g.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));

    g.throughput(Throughput::Elements(1));
    g.bench_function("enqueue/1", |b| {
        b.to_async(&rt).iter(|| enqueue_one(&store));
    });

    g.throughput(Throughput::Elements(16));
    g.bench_function("enqueue/16", |b| {
        b.to_async(&rt).iter(|| async {
            let tasks: Vec<_> = (0..16)
                .map(|_| {
                    let s = store.clone();
                    tokio::spawn(async move { enqueue_one(&s).await })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        });
    });

    g.throughput(Throughput::Elements(10_000));
    g.bench_function("enqueue_many/10000", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let jobs: Vec<NewJob> = (0..10_000).map(|_| job("bulk")).collect();
                    let t = Instant::now();
                    store.enqueue(EnqueueRequest { jobs, max_pending: None, now: now_ms() }).await.unwrap();
                    total += t.elapsed();
                }
                total
            }
        });
    });
    rt.block_on(truncate(&schema));

    g.throughput(Throughput::Elements(50_000));
    g.bench_function("drain/8x100", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            let schema = schema.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    truncate(&schema).await;
                    for _ in 0..5 {
                        let jobs: Vec<NewJob> = (0..10_000).map(|_| job("bench")).collect();
                        store
                            .enqueue(EnqueueRequest { jobs, max_pending: None, now: now_ms() })
                            .await
                            .unwrap();
                    }
                    let t = Instant::now();
                    flexiq_conformance::kit::drain(Arc::new(store.clone()), "bench", 50_000, 8).await;
                    total += t.elapsed();
                }
                total
            }
        });
    });
    rt.block_on(truncate(&schema));

    // An idle claimer on its own store (its own LISTEN connection) blocked in wait_for_work.
    let claimer = rt.block_on(open(&schema, 2));
    let samples: Arc<std::sync::Mutex<Vec<Duration>>> = Arc::default();
    g.throughput(Throughput::Elements(1));
    g.bench_function("latency/enqueue_to_claim", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (store, claimer, samples) = (store.clone(), claimer.clone(), samples.clone());
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let d = enqueue_to_claim(&store, &claimer).await;
                    samples.lock().unwrap().push(d);
                    total += d;
                }
                total
            }
        });
    });
    report_percentiles("pg/latency/enqueue_to_claim", &samples.lock().unwrap());
    raw_benches(&rt, &schema, &mut g);
    g.finish();
    rt.block_on(async {
        claimer.close().await.unwrap();
        store.close().await.unwrap();
        drop_schema(&schema).await;
    });
}

/// One enqueue observed by a claimer that is already blocked in `wait_for_work`.
async fn enqueue_to_claim(store: &PgStore, claimer: &PgStore) -> Duration {
    let c2 = claimer.clone();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let waiter = tokio::spawn(async move {
        let q = vec!["lat".to_string()];
        let mut ready = Some(ready_tx);
        loop {
            let wait = c2.wait_for_work(WaitForWorkRequest { queues: q.clone(), timeout_ms: 2_000 });
            tokio::pin!(wait);
            // Poll once so the waiter is registered before the producer is told to go.
            let first = futures::poll!(wait.as_mut());
            if let Some(r) = ready.take() {
                let _ = r.send(());
            }
            if first.is_pending() {
                wait.await.unwrap();
            }
            let got = c2
                .claim(ClaimRequest { queues: q.clone(), limit: 1, worker_id: "lat".into(), now: now_ms() })
                .await
                .unwrap();
            if !got.is_empty() {
                return Instant::now();
            }
        }
    });
    ready_rx.await.unwrap();
    // Let the waiter finish its due-work check and block.
    tokio::time::sleep(Duration::from_millis(3)).await;
    let t = Instant::now();
    store.enqueue(EnqueueRequest { jobs: vec![job("lat")], max_pending: None, now: now_ms() }).await.unwrap();
    waiter.await.unwrap() - t
}

fn report_percentiles(id: &str, samples: &[Duration]) {
    if samples.is_empty() {
        return;
    }
    let mut s: Vec<Duration> = samples.to_vec();
    s.sort();
    let at = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    eprintln!("{id}: {} samples, p50 {:?}, p99 {:?}", s.len(), at(0.50), at(0.99));
}

async fn raw_clients(n: usize) -> Vec<Arc<tokio_postgres::Client>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(Arc::new(admin().await));
    }
    out
}

/// The same work in hand-written SQL on plain tokio-postgres connections.
fn raw_benches(
    rt: &Runtime,
    schema: &str,
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
) {
    let table = format!("\"{schema}\".raw_jobs");
    let clients = rt.block_on(async {
        let c = admin().await;
        c.batch_execute(&format!(
            "CREATE TABLE {table} (id uuid PRIMARY KEY, queue text NOT NULL, task text NOT NULL, payload bytea NOT NULL, \
             priority int NOT NULL DEFAULT 0, status smallint NOT NULL DEFAULT 0, run_at bigint NOT NULL, created_at bigint NOT NULL); \
             CREATE INDEX ON {table} (queue, priority DESC, run_at, id) WHERE status = 0;"
        ))
        .await
        .unwrap();
        raw_clients(16).await
    });
    let insert = format!(
        "INSERT INTO {table} (id, queue, task, payload, run_at, created_at) VALUES ($1, 'bench', 'noop', $2, $3, $3)"
    );
    let raw_insert = |c: Arc<tokio_postgres::Client>, sql: String| async move {
        let t = now_ms();
        c.execute(&sql, &[&uuid::Uuid::now_v7(), &b"{}".to_vec(), &t]).await.unwrap();
    };
    g.throughput(Throughput::Elements(1));
    g.bench_function("raw_enqueue/1", |b| {
        b.to_async(rt).iter(|| raw_insert(clients[0].clone(), insert.clone()));
    });
    g.throughput(Throughput::Elements(16));
    g.bench_function("raw_enqueue/16", |b| {
        b.to_async(rt).iter(|| async {
            let tasks: Vec<_> =
                clients.iter().map(|c| tokio::spawn(raw_insert(c.clone(), insert.clone()))).collect();
            for t in tasks {
                t.await.unwrap();
            }
        });
    });
    let copy = format!("COPY {table} (id, queue, task, payload, run_at, created_at) FROM STDIN BINARY");
    g.throughput(Throughput::Elements(10_000));
    g.bench_function("raw_enqueue_many/10000", |b| {
        b.to_async(rt).iter(|| raw_copy(clients[0].clone(), copy.clone(), 10_000));
    });
    let claim = format!(
        "WITH c AS (SELECT id FROM {table} WHERE status = 0 AND queue = 'bench' ORDER BY priority DESC, run_at, id \
         LIMIT 100 FOR UPDATE SKIP LOCKED) UPDATE {table} j SET status = 1 FROM c WHERE j.id = c.id RETURNING j.id"
    );
    let ack = format!("UPDATE {table} SET status = 2 WHERE id = ANY($1)");
    g.throughput(Throughput::Elements(50_000));
    g.bench_function("raw_drain/8x100", |b| {
        b.to_async(rt).iter_custom(|iters| {
            let (clients, table, claim, ack) = (clients.clone(), table.clone(), claim.clone(), ack.clone());
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    clients[0]
                        .batch_execute(&format!(
                            "TRUNCATE {table}; INSERT INTO {table} (id, queue, task, payload, run_at, created_at) \
                             SELECT gen_random_uuid(), 'bench', 'noop', '\\x7b7d', g, g FROM generate_series(1, 50000) g;"
                        ))
                        .await
                        .unwrap();
                    clients[0].batch_execute(&format!("VACUUM ANALYZE {table}")).await.unwrap();
                    let left = Arc::new(AtomicU64::new(50_000));
                    let t = Instant::now();
                    let loops: Vec<_> = clients[..8]
                        .iter()
                        .map(|c| {
                            let (c, left, claim, ack) = (c.clone(), left.clone(), claim.clone(), ack.clone());
                            tokio::spawn(async move {
                                while left.load(Ordering::Relaxed) > 0 {
                                    let rows = c.query(&claim, &[]).await.unwrap();
                                    if rows.is_empty() {
                                        tokio::task::yield_now().await;
                                        continue;
                                    }
                                    let ids: Vec<uuid::Uuid> = rows.iter().map(|r| r.get(0)).collect();
                                    c.execute(&ack, &[&ids]).await.unwrap();
                                    left.fetch_sub(ids.len() as u64, Ordering::Relaxed);
                                }
                            })
                        })
                        .collect();
                    for l in loops {
                        l.await.unwrap();
                    }
                    total += t.elapsed();
                }
                total
            }
        });
    });
}

/// `n` rows in one binary COPY, in one transaction: the least a bulk enqueue writes.
async fn raw_copy(c: Arc<tokio_postgres::Client>, copy: String, n: usize) {
    let types = [Type::UUID, Type::TEXT, Type::TEXT, Type::BYTEA, Type::INT8, Type::INT8];
    let rows: Vec<(uuid::Uuid, i64)> = (0..n).map(|_| (uuid::Uuid::now_v7(), now_ms())).collect();
    c.batch_execute("BEGIN").await.unwrap();
    let sink = c.copy_in(&copy).await.unwrap();
    let writer = BinaryCopyInWriter::new(sink, &types);
    pin_mut!(writer);
    let payload: &[u8] = b"{}";
    for (id, t) in &rows {
        writer.as_mut().write(&[id, &"bench", &"noop", &payload, t, t]).await.unwrap();
    }
    writer.finish().await.unwrap();
    c.batch_execute("COMMIT").await.unwrap();
}

/// `stats(None)` and `stats_by_queue` on 1,000,000 jobs across 10 queues (loaded through the
/// store's `COPY` enqueue path, then 40% of them moved to other statuses by one statement each,
/// so the counts come from every kind of change), and in the same run the statements they
/// replaced: a count over the jobs table grouped by status, and by queue and status.
fn stats_benches(c: &mut Criterion) {
    const JOBS: usize = 1_000_000;
    let rt = Runtime::new().unwrap();
    let schema = format!("fq_bench_stats_{}", uuid::Uuid::new_v4().simple());
    let store = rt.block_on(open(&schema, 4));
    let loaded = Instant::now();
    rt.block_on(async {
        for b in 0..JOBS / 10_000 {
            let jobs: Vec<NewJob> =
                (0..10_000).map(|i| job(&format!("q{}", (b * 10_000 + i) % 10))).collect();
            store.enqueue(EnqueueRequest { jobs, max_pending: None, now: now_ms() }).await.unwrap();
        }
        let a = admin().await;
        let jobs = format!("\"{schema}\".jobs");
        for (status, share) in [(2, 20), (1, 5), (3, 5), (4, 5), (5, 5)] {
            a.batch_execute(&format!(
                "UPDATE {jobs} SET status = {status} WHERE id IN \
                 (SELECT id FROM {jobs} WHERE status = 0 ORDER BY random() LIMIT {})",
                JOBS * share / 100
            ))
            .await
            .unwrap();
        }
        a.batch_execute(&format!("VACUUM ANALYZE {jobs}")).await.unwrap();
    });
    eprintln!("pg/stats: {JOBS} jobs loaded in {:?}", loaded.elapsed());
    let by_status =
        format!("SELECT status, count(*) FROM \"{schema}\".jobs WHERE namespace = 'default' GROUP BY status");
    let by_queue = format!(
        "SELECT queue, status, count(*) FROM \"{schema}\".jobs WHERE namespace = 'default' GROUP BY queue, status"
    );
    let raw = rt.block_on(admin());
    let (got, want) = rt.block_on(async {
        let got = store.stats(None).await.unwrap();
        let rows = raw.query(&by_status, &[]).await.unwrap();
        (got.total(), rows.iter().map(|r| r.get::<_, i64>(1)).sum::<i64>() as u64)
    });
    assert_eq!(got, want, "the counts agree with a count over the table");
    let mut g = c.benchmark_group("pg");
    g.sample_size(20).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    g.bench_function("stats/1000000x10q", |b| {
        b.to_async(&rt).iter(|| async { store.stats(None).await.unwrap() });
    });
    g.bench_function("stats_by_queue/1000000x10q", |b| {
        b.to_async(&rt).iter(|| async { store.stats_by_queue().await.unwrap() });
    });
    g.bench_function("raw_stats/1000000x10q", |b| {
        b.to_async(&rt).iter(|| async { raw.query(&by_status, &[]).await.unwrap() });
    });
    g.bench_function("raw_stats_by_queue/1000000x10q", |b| {
        b.to_async(&rt).iter(|| async { raw.query(&by_queue, &[]).await.unwrap() });
    });
    g.finish();
    rt.block_on(async {
        store.close().await.unwrap();
        drop_schema(&schema).await;
    });
}

criterion_group!(benches, store_benches, stats_benches);
criterion_main!(benches);
