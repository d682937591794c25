//! Listing and stats benchmarks on a million jobs, against a local Redis (`FLEXIQ_REDIS_URL`,
//! default `redis://127.0.0.1:6379`), under a key prefix of their own deleted afterwards. The
//! data is bulk-loaded once, through the store's own enqueue.
//!
//! - `redis/list/<shape>/first` and `redis/list/<shape>/depth1000000`: one keyset page of 50
//!   from the newest job, and from a cursor 1,000,000 jobs deep, for each listing shape (no
//!   filter, status, queue, task, status + queue, status + task), over 1,001,000 pending jobs.
//! - `redis/stats/1000000x10q` (`stats(None)`) and `redis/stats_by_queue/1000000x10q`, over
//!   1,000,000 jobs spread across 10 queues.
//!
//! Run: `cargo bench -p flexiq-store-redis --bench inspect`.

#[path = "../tests/support/harness.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod harness;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use flexiq_core::store::{EnqueueRequest, Inspect, JobStore, ListJobsAfterRequest};
use flexiq_core::{Backoff, Cursor, EnqueueOptions, JobFilter, JobStatus, NewJob};
use flexiq_store_redis::RedisStore;
use fred::prelude::*;

use flexiq_conformance::kit::{bench_runtime, time_in_task};
use harness::RedisHarness;

/// Rows skipped by the deep pages.
const DEPTH: i64 = 1_000_000;
/// Jobs of the listing data set: the depth plus a few pages.
const LISTED: usize = 1_001_000;
/// Jobs of the stats data set, and its queues.
const COUNTED: usize = 1_000_000;
const QUEUES: usize = 10;
const PAGE: u32 = 50;
const BATCH: usize = 5_000;
const NOW: i64 = 1_700_000_000_000;

/// Enqueues `total` jobs in batches, job `i` in queue `queue(i)`, task `task`.
async fn load(store: &RedisStore, total: usize, task: &str, queue: impl Fn(usize) -> String) {
    let started = Instant::now();
    let mut i = 0;
    while i < total {
        let n = BATCH.min(total - i);
        let jobs: Vec<NewJob> = (i..i + n)
            .map(|k| {
                let opts = EnqueueOptions {
                    queue: Some(queue(k)),
                    backoff: Some(Backoff::NONE),
                    ..Default::default()
                };
                NewJob::build(task, b"{}".to_vec(), opts, NOW).unwrap()
            })
            .collect();
        // One created_at per batch, older batches first, as a steady producer leaves them.
        let now = NOW + (i / BATCH) as i64;
        store.enqueue(EnqueueRequest { jobs, max_pending: None, now }).await.unwrap();
        i += n;
    }
    eprintln!("loaded {total} jobs in {:?}", started.elapsed());
}

/// The cursor that starts a page `DEPTH` rows deep in the newest-first listing of `filter`:
/// the member at that reverse rank of the pending index (every loaded job is pending, in one
/// queue and one task, so every shape lists the same jobs in the same order).
async fn deep_cursor(client: &Client, h: &RedisHarness, ns: &str, filter: &JobFilter) -> String {
    let index = format!("{{{}:{ns}}}:ix:s:{}", h.prefix, JobStatus::Pending.code());
    let members: Vec<String> =
        client.zrange(&index, DEPTH - 1, DEPTH - 1, None, true, None, false).await.unwrap();
    let (created, id) = members[0].split_once('|').unwrap();
    Cursor {
        listing: "jobs".into(),
        filter_fp: filter.fingerprint(),
        sort_key: created.parse().unwrap(),
        id: id.to_string(),
    }
    .encode()
}

fn benches(c: &mut Criterion) {
    let rt = bench_runtime();
    let h = RedisHarness::new();
    let client = rt.block_on(async {
        let c = Builder::from_config(Config::from_url(&h.url).unwrap()).build().unwrap();
        c.init().await.unwrap();
        c
    });

    let listed = rt.block_on(h.store("listed")).unwrap();
    rt.block_on(load(&listed, LISTED, "deep", |_| "deep".to_string()));
    let shapes: [(&str, JobFilter); 6] = [
        ("all", JobFilter::default()),
        ("status", JobFilter { status: Some(JobStatus::Pending), ..Default::default() }),
        ("queue", JobFilter { queue: Some("deep".into()), ..Default::default() }),
        ("task", JobFilter { task: Some("deep".into()), ..Default::default() }),
        (
            "status_queue",
            JobFilter { status: Some(JobStatus::Pending), queue: Some("deep".into()), ..Default::default() },
        ),
        (
            "status_task",
            JobFilter { status: Some(JobStatus::Pending), task: Some("deep".into()), ..Default::default() },
        ),
    ];
    let mut g = c.benchmark_group("redis/list");
    for (shape, filter) in shapes {
        let deep = rt.block_on(deep_cursor(&client, &h, "listed", &filter));
        // The deep page really is 1,000,000 rows in: it starts right after the cursor's row.
        let page = rt
            .block_on(listed.list_jobs_after(ListJobsAfterRequest {
                filter: filter.clone(),
                limit: PAGE,
                after: Some(deep.clone()),
            }))
            .unwrap();
        assert_eq!(page.items.len(), PAGE as usize, "{shape}");
        for (param, after) in [("first", None), ("depth1000000", Some(deep))] {
            g.bench_function(BenchmarkId::new(shape, param), |b| {
                b.iter_custom(|iters| {
                    let (store, filter, after) = (listed.clone(), filter.clone(), after.clone());
                    time_in_task(&rt, iters, move || {
                        let (store, filter, after) = (store.clone(), filter.clone(), after.clone());
                        async move {
                            let req = ListJobsAfterRequest { filter, limit: PAGE, after };
                            let page = store.list_jobs_after(req).await.unwrap();
                            assert_eq!(page.items.len(), PAGE as usize);
                        }
                    })
                })
            });
        }
    }
    g.finish();

    let counted = rt.block_on(h.store("counted")).unwrap();
    rt.block_on(load(&counted, COUNTED, "t", |k| format!("q{}", k % QUEUES)));
    let mut g = c.benchmark_group("redis");
    let param = format!("{COUNTED}x{QUEUES}q");
    g.bench_function(BenchmarkId::new("stats", &param), |b| {
        b.iter_custom(|iters| {
            let store = counted.clone();
            time_in_task(&rt, iters, move || {
                let store = store.clone();
                async move {
                    let st = store.stats(None).await.unwrap();
                    assert_eq!(st.total(), COUNTED as u64);
                }
            })
        })
    });
    g.bench_function(BenchmarkId::new("stats_by_queue", &param), |b| {
        b.iter_custom(|iters| {
            let store = counted.clone();
            time_in_task(&rt, iters, move || {
                let store = store.clone();
                async move {
                    let by = store.stats_by_queue().await.unwrap();
                    assert_eq!(by.len(), QUEUES);
                }
            })
        })
    });
    g.finish();

    rt.block_on(async {
        let _ = client.quit().await;
        h.cleanup_now().await;
    });
}

criterion_group! {
    name = inspect_benches;
    config = Criterion::default().sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(inspect_benches);
