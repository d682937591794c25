//! The fair claim of workflow stages for 8 workers at once (what the runtime's claim combiner
//! sends when 8 hosts dequeue together), on backlogs of 1,000 and 100,000 stages:
//!
//! - `pg/fair_claim/fair_off/<backlog>x8`: fairness off, the best 8 stages.
//! - `pg/fair_claim/cap2_100groups/<backlog>x8`: a group cap of 2 over 100 groups.
//!
//! Only the claim is timed. After each one the claimed stages are put back to pending by hand
//! (as if they finished and were upserted again), so the backlog stays the same size while the
//! round-robin cursor keeps moving. Needs the server in `FLEXIQ_PG_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); each case runs in its own schema, dropped after.

mod support;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flexiq_core::store::{ClaimFairRequest, UpsertStagesRequest, Workflows};
use flexiq_core::{EnqueueOptions, NewJob, Store};
use flexiq_store_pg::{PgOptions, PgStore};
use support::{now_ms, url};
use tokio::runtime::Runtime;

const WORKERS: usize = 8;
const GROUPS: usize = 100;

async fn admin() -> tokio_postgres::Client {
    let (c, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    c
}

/// Stage `i` of the backlog: 10 runs, 100 tenants.
fn stage(i: usize, now: i64) -> NewJob {
    let opts = EnqueueOptions {
        queue: Some("workflow".into()),
        group_key: Some(format!("t{:03}", i % GROUPS)),
        workflow_run_id: Some(format!("run-{}", i % 10)),
        workflow_stage_id: Some(format!("stage-{i}")),
        ..Default::default()
    };
    NewJob::build("bench", b"{}".to_vec(), opts, now).unwrap()
}

/// A store on a fresh schema holding `backlog` pending stages, analyzed.
async fn loaded(schema: &str, backlog: usize) -> PgStore {
    let opts = PgOptions { schema: schema.to_string(), pool_size: 4, ..Default::default() };
    let store = PgStore::connect(&url(), opts).await.unwrap();
    let now = now_ms();
    for start in (0..backlog).step_by(5_000) {
        let jobs = (start..backlog.min(start + 5_000)).map(|i| stage(i, now)).collect();
        store.upsert_stages(UpsertStagesRequest { jobs, now }).await.unwrap();
    }
    admin().await.batch_execute(&format!("VACUUM ANALYZE \"{schema}\".jobs")).await.unwrap();
    store
}

fn fair_claim_benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let mut g = c.benchmark_group("pg/fair_claim");
    g.sample_size(20).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(WORKERS as u64));
    for backlog in [1_000, 100_000] {
        for (mode, cap) in [("fair_off", None), ("cap2_100groups", Some(2))] {
            let schema = format!("fq_bench_fair_{}", uuid::Uuid::new_v4().simple());
            let store = rt.block_on(loaded(&schema, backlog));
            let reset = rt.block_on(admin());
            let put_back = format!(
                "UPDATE \"{schema}\".jobs SET status = 0, started_at = NULL, heartbeat_at = NULL, worker_id = NULL \
                 WHERE id = ANY($1)"
            );
            let workers: Vec<String> = (0..WORKERS).map(|w| format!("host-{w}")).collect();
            g.bench_function(format!("{mode}/{backlog}x{WORKERS}"), |b| {
                b.to_async(&rt).iter_custom(|iters| {
                    let (store, reset, put_back, workers) = (&store, &reset, &put_back, workers.clone());
                    async move {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let req = ClaimFairRequest {
                                queues: vec!["workflow".into()],
                                serves: Vec::new(),
                                workers: workers.clone(),
                                group_cap: cap,
                                now: now_ms(),
                            };
                            let t = Instant::now();
                            let got = store.claim_fair(req).await.unwrap();
                            total += t.elapsed();
                            assert_eq!(got.len(), WORKERS, "the backlog has work for every worker");
                            let ids: Vec<uuid::Uuid> = got
                                .iter()
                                .map(|c| uuid::Uuid::parse_str(c.job.id.as_str()).unwrap())
                                .collect();
                            reset.execute(put_back.as_str(), &[&ids]).await.unwrap();
                        }
                        total
                    }
                });
            });
            rt.block_on(async {
                store.close().await.unwrap();
                reset.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.unwrap();
            });
        }
    }
    g.finish();
}

criterion_group!(benches, fair_claim_benches);
criterion_main!(benches);
