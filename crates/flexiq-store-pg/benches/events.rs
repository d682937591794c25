//! What the events stream costs the hot paths on PostgreSQL: draining 50,000 jobs with 8
//! claim/ack loops (batches of 100), and 16 concurrent single-job enqueues, each with events
//! on, switched off for the namespace, and with the events triggers disabled (the cost before
//! events existed).
//!
//! Needs the server in `FLEXIQ_PG_URL` (default `postgres://postgres@127.0.0.1:5432/test`);
//! each mode runs in its own schema, dropped at the end.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flexiq_core::store::{EnqueueRequest, Events, JobStore};
use flexiq_core::{NewJob, Store};
use flexiq_store_pg::{PgOptions, PgStore};
use support::{job, now_ms, url};

const DRAIN_JOBS: usize = 50_000;

async fn admin(sql: &str) {
    let (c, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    c.batch_execute(sql).await.unwrap();
}

/// How a mode leaves the events stream.
#[derive(Clone, Copy)]
enum Mode {
    On,
    Off,
    NoTriggers,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::On => "on",
            Mode::Off => "off",
            Mode::NoTriggers => "no_triggers",
        }
    }
}

async fn open(mode: Mode) -> (PgStore, String) {
    let schema = format!("fq_bench_events_{}", uuid::Uuid::new_v4().simple());
    let opts = PgOptions { schema: schema.clone(), pool_size: 32, ..Default::default() };
    let s = PgStore::connect(&url(), opts).await.unwrap();
    match mode {
        Mode::On => {}
        Mode::Off => s.set_events_enabled(false).await.unwrap(),
        Mode::NoTriggers => {
            admin(&format!(
                "ALTER TABLE \"{schema}\".jobs DISABLE TRIGGER events_insert, DISABLE TRIGGER events_update"
            ))
            .await
        }
    }
    (s, schema)
}

async fn drain_once(s: &PgStore, schema: &str) -> Duration {
    admin(&format!(
        "TRUNCATE \"{schema}\".jobs, \"{schema}\".task_metrics, \"{schema}\".job_counts, \"{schema}\".events"
    ))
    .await;
    for _ in 0..DRAIN_JOBS / 10_000 {
        let jobs: Vec<NewJob> = (0..10_000).map(|_| job("bench")).collect();
        s.enqueue(EnqueueRequest { jobs, max_pending: None, now: now_ms() }).await.unwrap();
    }
    let t = Instant::now();
    flexiq_conformance::kit::drain(Arc::new(s.clone()), "bench", DRAIN_JOBS as u64, 8).await;
    t.elapsed()
}

fn events_benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut g = c.benchmark_group("events");
    // A drain takes seconds: warm up over a few, so the first runs on a new schema are not measured.
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(8));
    for mode in [Mode::On, Mode::Off, Mode::NoTriggers] {
        let (s, schema) = rt.block_on(open(mode));
        g.throughput(Throughput::Elements(DRAIN_JOBS as u64));
        g.bench_function(BenchmarkId::new("drain/8x100", mode.name()), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let (s, schema) = (s.clone(), schema.clone());
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += drain_once(&s, &schema).await;
                    }
                    total
                }
            });
        });
        g.throughput(Throughput::Elements(16));
        g.bench_function(BenchmarkId::new("enqueue/16", mode.name()), |b| {
            b.to_async(&rt).iter(|| async {
                let tasks: Vec<_> = (0..16)
                    .map(|_| {
                        let s = s.clone();
                        tokio::spawn(async move {
                            let req =
                                EnqueueRequest { jobs: vec![job("one")], max_pending: None, now: now_ms() };
                            s.enqueue(req).await.unwrap();
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
            });
        });
        rt.block_on(async {
            s.close().await.unwrap();
            admin(&format!("DROP SCHEMA \"{schema}\" CASCADE")).await;
        });
    }
    g.finish();
}

criterion_group!(benches, events_benches);
criterion_main!(benches);
