//! Store benchmarks on SQLite files in a temp dir (ids `store/<op>/<param>`), with raw
//! rusqlite baselines (`store/raw_*`) doing the same enqueue and claim-and-complete work on a
//! file with the store's schema, so the store's overhead shows.
//!
//! Run: `cargo bench -p flexiq-store-sqlite --bench store`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use flexiq_core::cursor::Cursor;
use flexiq_core::store::{
    Ack, AckKind, AckRequest, ClaimRequest, EnqueueRequest, Inspect, JobStore, ListJobsAfterRequest,
};
use flexiq_core::{EnqueueOptions, JobFilter, NewJob};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};
use tokio::runtime::Runtime;

const T0: i64 = 1_700_000_000_000;
const DEEP_ROWS: usize = 1_000_000;

fn rt() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

fn jobs(n: usize, queue: &str) -> Vec<NewJob> {
    let opts = EnqueueOptions { queue: Some(queue.to_string()), ..Default::default() };
    (0..n).map(|_| NewJob::build("bench", b"{\"n\":1}".to_vec(), opts.clone(), T0).unwrap()).collect()
}

fn open(dir: &Path, name: &str) -> SqliteStore {
    SqliteStore::open(dir.join(name), SqliteOptions::default()).unwrap()
}

fn enqueue(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let store = open(dir.path(), "enqueue.db");
    let mut g = c.benchmark_group("store");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    const N: usize = 1_000;
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(BenchmarkId::new("enqueue", "sequential"), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let batch = jobs(N, "seq");
                    let start = Instant::now();
                    for j in batch {
                        store
                            .enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: T0 })
                            .await
                            .unwrap();
                    }
                    total += start.elapsed();
                }
                total
            }
        })
    });
    g.bench_function(BenchmarkId::new("enqueue", "concurrent16"), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let per: Vec<Vec<NewJob>> = (0..16).map(|_| jobs(N / 16 + 1, "conc")).collect();
                    let start = Instant::now();
                    let tasks: Vec<_> = per
                        .into_iter()
                        .map(|batch| {
                            let store = store.clone();
                            tokio::spawn(async move {
                                for j in batch {
                                    store
                                        .enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: T0 })
                                        .await
                                        .unwrap();
                                }
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await.unwrap();
                    }
                    total += start.elapsed();
                }
                total
            }
        })
    });
    const MANY: usize = 10_000;
    g.throughput(Throughput::Elements(MANY as u64));
    g.bench_function(BenchmarkId::new("enqueue_many", MANY), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let batch = jobs(MANY, "many");
                    let start = Instant::now();
                    store.enqueue(EnqueueRequest { jobs: batch, max_pending: None, now: T0 }).await.unwrap();
                    total += start.elapsed();
                }
                total
            }
        })
    });
    let raw_path = open(dir.path(), "raw_enqueue.db").path().to_path_buf();
    let raw = rusqlite::Connection::open(&raw_path).unwrap();
    raw.execute_batch("PRAGMA synchronous = NORMAL").unwrap();
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function(BenchmarkId::new("raw_enqueue", "sequential"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let ids = raw_ids(N);
                let start = Instant::now();
                for id in &ids {
                    raw_enqueue(&raw, std::slice::from_ref(id), "seq");
                }
                total += start.elapsed();
            }
            total
        })
    });
    g.throughput(Throughput::Elements(MANY as u64));
    g.bench_function(BenchmarkId::new("raw_enqueue_many", MANY), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let ids = raw_ids(MANY);
                let start = Instant::now();
                raw_enqueue(&raw, &ids, "many");
                total += start.elapsed();
            }
            total
        })
    });
    g.finish();
}

fn raw_ids(n: usize) -> Vec<String> {
    (0..n).map(|_| flexiq_core::JobId::new().to_string()).collect()
}

/// The least an enqueue writes, in plain SQL on a file with the store's schema: one transaction
/// inserting the rows (the same columns the store fills for a default job) and adding them to
/// the queue's pending count. No wake-up, no admission or revoked-task checks.
fn raw_enqueue(conn: &rusqlite::Connection, ids: &[String], queue: &str) {
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    {
        let mut insert = conn
            .prepare_cached(
                "INSERT INTO jobs (id, ns, queue, task, payload, priority, status, attempt, max_retries,
                    backoff_base, backoff_max, created_at, run_at, has_deps)
                 VALUES (?1, 'default', ?2, 'bench', ?3, 0, 0, 0, 3, 1000, 3600000, ?4, ?4, 0)",
            )
            .unwrap();
        for id in ids {
            insert.execute((id, queue, b"{\"n\":1}".as_slice(), T0)).unwrap();
        }
    }
    conn.prepare_cached(
        "INSERT INTO queue_counts (ns, queue, status, n) VALUES ('default', ?1, 0, ?2)
         ON CONFLICT DO UPDATE SET n = n + excluded.n",
    )
    .unwrap()
    .execute((queue, ids.len() as i64))
    .unwrap();
    conn.execute_batch("COMMIT").unwrap();
}

async fn fill(store: &SqliteStore, queue: &str, n: usize) {
    for chunk in (0..n).collect::<Vec<_>>().chunks(10_000) {
        let batch = jobs(chunk.len(), queue);
        store.enqueue(EnqueueRequest { jobs: batch, max_pending: None, now: T0 }).await.unwrap();
    }
}

fn claim_complete(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let store = open(dir.path(), "claim.db");
    let raw = open(dir.path(), "raw.db");
    let mut g = c.benchmark_group("store");
    g.measurement_time(Duration::from_secs(4));
    const BATCH: u32 = 100;
    g.throughput(Throughput::Elements(u64::from(BATCH)));
    g.bench_function(BenchmarkId::new("claim_complete", BATCH), |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            async move {
                fill(&store, "cc", iters as usize * BATCH as usize).await;
                let start = Instant::now();
                for _ in 0..iters {
                    let claimed = store
                        .claim(ClaimRequest {
                            queues: vec!["cc".into()],
                            limit: BATCH,
                            worker_id: "w".into(),
                            now: T0,
                        })
                        .await
                        .unwrap();
                    let acks = claimed
                        .into_iter()
                        .map(|c| Ack {
                            job_id: c.job.id,
                            fence: c.fence,
                            kind: AckKind::Complete { result: None },
                        })
                        .collect();
                    store.ack(AckRequest { acks, now: T0 + 1 }).await.unwrap();
                }
                start.elapsed()
            }
        })
    });
    let raw_path = raw.path().to_path_buf();
    drop(raw);
    let raw_conn = Arc::new(std::sync::Mutex::new(rusqlite::Connection::open(&raw_path).unwrap()));
    raw_conn.lock().unwrap().execute_batch("PRAGMA synchronous = NORMAL").unwrap();
    g.bench_function(BenchmarkId::new("raw_claim_complete", BATCH), |b| {
        b.iter_custom(|iters| {
            let store = open(dir.path(), "raw.db");
            rt.block_on(fill(&store, "cc", iters as usize * BATCH as usize));
            drop(store);
            let conn = raw_conn.lock().unwrap();
            let start = Instant::now();
            for _ in 0..iters {
                raw_batch(&conn, BATCH);
            }
            start.elapsed()
        })
    });
    g.finish();
}

/// The same claim-and-complete work as the store does, in plain SQL: one `UPDATE ... RETURNING`
/// claims the batch in one transaction, one transaction completes it by id.
fn raw_batch(conn: &rusqlite::Connection, batch: u32) {
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let claimed: Vec<(String, Vec<u8>)> = {
        let mut stmt = conn
            .prepare_cached(
                "UPDATE jobs SET status = 1, attempt = attempt + 1, started_at = ?3, heartbeat_at = ?3,
                    worker_id = 'w'
                 WHERE id IN (SELECT id FROM jobs WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6)
                    AND run_at <= ?3 ORDER BY priority DESC, run_at, id LIMIT ?4)
                 RETURNING id, payload",
            )
            .unwrap();
        let rows = stmt.query_map(("default", "cc", T0, batch), |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.collect::<rusqlite::Result<_>>().unwrap()
    };
    conn.execute_batch("COMMIT; BEGIN IMMEDIATE").unwrap();
    {
        let mut stmt = conn
            .prepare_cached(
                "UPDATE jobs SET status = 2, finished_at = ?2, worker_id = NULL, heartbeat_at = NULL
                 WHERE id = ?1 AND status = 1",
            )
            .unwrap();
        for (id, _) in &claimed {
            stmt.execute((id, T0 + 1)).unwrap();
        }
    }
    conn.execute_batch("COMMIT").unwrap();
}

fn deep(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let rt = rt();
    let store = open(dir.path(), "deep.db");
    let built = Instant::now();
    rt.block_on(fill(&store, "deep", DEEP_ROWS));
    eprintln!("built {DEEP_ROWS} pending jobs in {:?}", built.elapsed());
    let filter = JobFilter::default();
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let (sort_key, id): (i64, String) = conn
        .query_row("SELECT created_at, id FROM jobs ORDER BY created_at, id LIMIT 1 OFFSET 100", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let deep_cursor =
        Cursor { listing: "jobs".into(), filter_fp: filter.fingerprint(), sort_key, id }.encode();
    let mut g = c.benchmark_group("store");
    g.bench_function(BenchmarkId::new("count_pending", DEEP_ROWS), |b| {
        b.to_async(&rt)
            .iter(|| async { assert_eq!(store.count_pending("deep").await.unwrap(), DEEP_ROWS as u64) })
    });
    g.bench_function(BenchmarkId::new("keyset_page", "first"), |b| {
        b.to_async(&rt).iter(|| async {
            assert_eq!(
                store
                    .list_jobs_after(ListJobsAfterRequest { filter: filter.clone(), limit: 100, after: None })
                    .await
                    .unwrap()
                    .items
                    .len(),
                100
            )
        })
    });
    g.bench_function(BenchmarkId::new("keyset_page", "depth_1000000"), |b| {
        b.to_async(&rt).iter(|| async {
            let req =
                ListJobsAfterRequest { filter: filter.clone(), limit: 100, after: Some(deep_cursor.clone()) };
            let page = store.list_jobs_after(req).await.unwrap();
            assert_eq!(page.items.len(), 100);
        })
    });
    g.finish();
}

criterion_group!(benches, enqueue, claim_complete, deep);
criterion_main!(benches);
