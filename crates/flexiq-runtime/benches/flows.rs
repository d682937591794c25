//! Flows and dedup against the plain enqueue they build on, on each store, measured in the same
//! run so the ratios hold for this machine.
//!
//! - `flows/<store>/enqueue_many/101`: one `enqueue_many` of 101 independent jobs (baseline).
//! - `flows/<store>/add_flow/1+100`: one `add_flow` of a parent with 100 children (101 jobs
//!   and 100 edges in one transaction or script).
//! - `flows/<store>/enqueue/plain`: one `enqueue` (baseline).
//! - `flows/<store>/enqueue/debounce_new`: one debounced `enqueue` under a fresh key each time
//!   (the record is read and written beside the insert).
//! - `flows/<store>/enqueue/debounce_dup`: one debounced `enqueue` of a held key with `extend`
//!   and `replace` (the holder's payload and delay are rewritten instead of a row inserted).
//!
//! Each benchmark function gets fresh storage (a new SQLite file; with the `postgres` feature a
//! new schema in `FLEXIQ_PG_URL`, dropped after; with the `redis` feature a new key prefix in
//! `FLEXIQ_REDIS_URL`, deleted after).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion, Throughput};
use flexiq_runtime::{
    connect, ConnectOptions, DedupMode, DedupOptions, EnqueueItem, EnqueueOptions, FlowNode, Queue,
};
use tokio::runtime::Runtime;

const CHILDREN: usize = 100;

#[derive(Clone, Copy)]
enum Target {
    Sqlite,
    #[cfg(feature = "postgres")]
    Postgres,
    #[cfg(feature = "redis")]
    Redis,
}

impl Target {
    fn all() -> Vec<Target> {
        [
            Target::Sqlite,
            #[cfg(feature = "postgres")]
            Target::Postgres,
            #[cfg(feature = "redis")]
            Target::Redis,
        ]
        .to_vec()
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
}

/// A queue on fresh storage, and what removes it.
struct Fresh {
    queue: Queue,
    _dir: Option<tempfile::TempDir>,
    #[allow(dead_code)]
    scope: Option<String>,
    target: Target,
}

#[cfg(any(feature = "postgres", feature = "redis"))]
fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

async fn fresh(target: Target) -> Fresh {
    #[cfg(any(feature = "postgres", feature = "redis"))]
    let tag = uuid::Uuid::new_v4().simple().to_string();
    match target {
        Target::Sqlite => {
            let dir = tempfile::tempdir().unwrap();
            let url = format!("sqlite://{}", dir.path().join("flows.db").display());
            let queue = connect(&url, ConnectOptions::default()).await.unwrap();
            Fresh { queue, _dir: Some(dir), scope: None, target }
        }
        #[cfg(feature = "postgres")]
        Target::Postgres => {
            let schema = format!("fq_flowbench_{tag}");
            let base = env_or("FLEXIQ_PG_URL", "postgres://postgres@127.0.0.1:5432/test");
            let queue = connect(&format!("{base}?schema={schema}"), ConnectOptions::default()).await.unwrap();
            Fresh { queue, _dir: None, scope: Some(schema), target }
        }
        #[cfg(feature = "redis")]
        Target::Redis => {
            let prefix = format!("fqflowbench{tag}");
            let base = env_or("FLEXIQ_REDIS_URL", "redis://127.0.0.1:6379");
            let queue = connect(&format!("{base}?prefix={prefix}"), ConnectOptions::default()).await.unwrap();
            Fresh { queue, _dir: None, scope: Some(prefix), target }
        }
    }
}

impl Fresh {
    async fn remove(self) {
        let _ = self.queue.store().close().await;
        match (self.target, self.scope) {
            #[cfg(feature = "postgres")]
            (Target::Postgres, Some(schema)) => {
                let base = env_or("FLEXIQ_PG_URL", "postgres://postgres@127.0.0.1:5432/test");
                let (client, conn) = tokio_postgres::connect(&base, tokio_postgres::NoTls).await.unwrap();
                tokio::spawn(conn);
                client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.unwrap();
            }
            #[cfg(feature = "redis")]
            (Target::Redis, Some(prefix)) => {
                let url = env_or("FLEXIQ_REDIS_URL", "redis://127.0.0.1:6379");
                flexiq_conformance::redis_kit::delete_prefix(&url, &prefix).await
            }
            _ => {}
        }
    }
}

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions { queue: Some(queue.into()), ..Default::default() }
}

fn tree() -> FlowNode {
    let child = |i: usize| FlowNode {
        task: "child".into(),
        payload: format!("{{\"i\":{i}}}").into_bytes(),
        options: on("bench-children"),
        ..Default::default()
    };
    FlowNode {
        task: "parent".into(),
        payload: b"{}".to_vec(),
        options: on("bench-parents"),
        children: (0..CHILDREN).map(child).collect(),
        ..Default::default()
    }
}

fn debounce(key: String) -> EnqueueOptions {
    let d = DedupOptions {
        id: key,
        mode: DedupMode::Debounce,
        ttl_ms: Some(3_600_000),
        extend: true,
        replace: true,
    };
    EnqueueOptions { dedup: Some(d), delay_ms: Some(60_000), ..on("bench-dedup") }
}

/// Runs `op` `iters` times on one fresh queue for this benchmark function, timing only `op`.
fn timed<F, Fut>(rt: &Runtime, q: &Queue, iters: u64, op: F) -> Duration
where
    F: Fn(Queue, u64) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    rt.block_on(async {
        let start = Instant::now();
        for i in 0..iters {
            op(q.clone(), i).await;
        }
        start.elapsed()
    })
}

fn bench_target(c: &mut Criterion, rt: &Runtime, target: Target) {
    let mut g = c.benchmark_group(format!("flows/{}", target.name()));
    g.sample_size(20);
    g.throughput(Throughput::Elements((CHILDREN + 1) as u64));
    let f = rt.block_on(fresh(target));
    g.bench_function("enqueue_many/101", |b| {
        b.iter_custom(|iters| {
            timed(rt, &f.queue, iters, |q, _| async move {
                let items = (0..=CHILDREN)
                    .map(|i| EnqueueItem {
                        options: on("bench-many"),
                        ..EnqueueItem::new("child", format!("{{\"i\":{i}}}"))
                    })
                    .collect();
                q.enqueue_many(items).await.unwrap();
            })
        })
    });
    g.bench_function("add_flow/1+100", |b| {
        b.iter_custom(|iters| {
            timed(rt, &f.queue, iters, |q, _| async move {
                q.add_flow(tree()).await.unwrap();
            })
        })
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("enqueue/plain", |b| {
        b.iter_custom(|iters| {
            timed(rt, &f.queue, iters, |q, _| async move {
                q.enqueue("one", b"{}".to_vec(), on("bench-plain")).await.unwrap();
            })
        })
    });
    let fresh_keys = Arc::new(AtomicU64::new(0));
    g.bench_function("enqueue/debounce_new", |b| {
        let keys = fresh_keys.clone();
        b.iter_custom(|iters| {
            let keys = keys.clone();
            timed(rt, &f.queue, iters, move |q, _| {
                let key = format!("k{}", keys.fetch_add(1, Ordering::Relaxed));
                async move {
                    q.enqueue("one", b"{}".to_vec(), debounce(key)).await.unwrap();
                }
            })
        })
    });
    g.bench_function("enqueue/debounce_dup", |b| {
        b.iter_custom(|iters| {
            timed(rt, &f.queue, iters, |q, i| async move {
                q.enqueue("one", format!("{{\"v\":{i}}}").into_bytes(), debounce("held".into()))
                    .await
                    .unwrap();
            })
        })
    });
    g.finish();
    rt.block_on(f.remove());
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    for t in Target::all() {
        bench_target(c, &rt, t);
    }
}

criterion_group!(flows, benches);

fn main() {
    flows();
    Criterion::default().configure_from_args().final_summary();
}
