//! Stats on a deep file (ids `sqlite/<op>/1000000x10q`): `stats(None)` and `stats_by_queue()`
//! over 1,000,000 jobs spread across 10 queues, a tenth of them completed or failed. Both read
//! the per (queue, status) counters the writer keeps, so their cost follows the number of
//! queues, not of jobs.
//!
//! Run: `cargo bench -p flexiq-store-sqlite --bench stats`. Building the file takes a while
//! (bulk enqueue of 1,000,000 jobs); it is built once per run.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use flexiq_core::store::{Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, Inspect, JobStore};
use flexiq_core::{EnqueueOptions, NewJob};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};
use tokio::runtime::Runtime;

const T0: i64 = 1_700_000_000_000;
const JOBS: usize = 1_000_000;
const QUEUES: usize = 10;
/// Jobs per bulk enqueue call.
const CHUNK: usize = 10_000;
/// Jobs per queue claimed and settled (completed, every tenth failed) so several statuses count.
const SETTLED_PER_QUEUE: usize = 10_000;

fn queue(i: usize) -> String {
    format!("q{i}")
}

fn jobs(n: usize, queue: &str) -> Vec<NewJob> {
    let opts = EnqueueOptions { queue: Some(queue.to_string()), ..Default::default() };
    (0..n).map(|_| NewJob::build("bench", b"{\"n\":1}".to_vec(), opts.clone(), T0).unwrap()).collect()
}

async fn build(store: &SqliteStore) {
    for q in 0..QUEUES {
        for _ in 0..JOBS / QUEUES / CHUNK {
            let batch = jobs(CHUNK, &queue(q));
            store.enqueue(EnqueueRequest { jobs: batch, max_pending: None, now: T0 }).await.unwrap();
        }
        let mut settled = 0;
        while settled < SETTLED_PER_QUEUE {
            let req = ClaimRequest { queues: vec![queue(q)], limit: 1_000, worker_id: "w".into(), now: T0 };
            let claimed = store.claim(req).await.unwrap();
            let acks = claimed
                .into_iter()
                .enumerate()
                .map(|(i, c)| Ack {
                    job_id: c.job.id,
                    fence: c.fence,
                    kind: if i % 10 == 9 {
                        AckKind::Fail { error: "bench".into(), retryable: false }
                    } else {
                        AckKind::Complete { result: None }
                    },
                })
                .collect::<Vec<_>>();
            settled += acks.len();
            store.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
        }
    }
}

fn stats(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let rt: Runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let store = SqliteStore::open(dir.path().join("stats.db"), SqliteOptions::default()).unwrap();
    let built = Instant::now();
    rt.block_on(build(&store));
    eprintln!("built {JOBS} jobs across {QUEUES} queues in {:?}", built.elapsed());
    let param = format!("{JOBS}x{QUEUES}q");
    let mut g = c.benchmark_group("sqlite");
    g.bench_function(BenchmarkId::new("stats", &param), |b| {
        b.to_async(&rt).iter(|| async {
            assert_eq!(store.stats(None).await.unwrap().total(), JOBS as u64);
        })
    });
    g.bench_function(BenchmarkId::new("stats_by_queue", &param), |b| {
        b.to_async(&rt).iter(|| async {
            assert_eq!(store.stats_by_queue().await.unwrap().len(), QUEUES);
        })
    });
    g.finish();
    rt.block_on(flexiq_core::Store::close(&store)).unwrap();
}

criterion_group!(benches, stats);
criterion_main!(benches);
