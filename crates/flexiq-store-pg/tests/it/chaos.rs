//! Connection loss: backends are terminated repeatedly while 1,000 jobs drain through
//! claim/ack loops that retry retryable errors; every job still ends completed exactly once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_core::store::{AckRequest, JobStore, QueueControl, ReleaseStaleRequest, SetMaxStalledRequest};
use flexiq_core::Error;
use flexiq_store_pg::PgStore;
use tokio::task::JoinHandle;

use crate::common::{admin, claim, completes, drop_schema, enqueue_n, fresh_schema, now_ms, open, tally};

/// Retries `op` while it fails with a retryable error, counting those; panics on any other.
pub(crate) async fn retrying<T, F, Fut>(retries: &AtomicUsize, mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    loop {
        match op().await {
            Ok(v) => return v,
            Err(e) if e.is_retryable() => {
                retries.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Err(e) => panic!("non-retryable error during connection loss: {e}"),
        }
    }
}

/// Lifts the stall budget of `queue`. Connections cut every 30 ms can strand one job's claims
/// (committed, reply lost) many times over; past a few such releases each counts as a stall,
/// and the budget, there to fail a job whose worker keeps dying, would end the job. These
/// tests check loss and duplication, so the budget is set out of reach.
pub(crate) async fn lift_stall_budget(s: &PgStore, queue: &str) {
    s.set_max_stalled(SetMaxStalledRequest { queue: queue.into(), max: Some(10_000) }).await.unwrap();
}

/// Job counts per status of the store on `schema`, for failure messages.
pub(crate) async fn statuses(schema: &str) -> Vec<(i16, i64)> {
    let rows = admin()
        .await
        .query(&format!("SELECT status, count(*) FROM \"{schema}\".jobs GROUP BY 1 ORDER BY 1"), &[])
        .await
        .unwrap();
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

/// Releases, every 100 ms until `done`, the claims whose lease lapsed 400 ms ago: a claim whose
/// commit landed but whose reply was lost leaves a job running with no holder.
pub(crate) fn sweeper(s: PgStore, done: Arc<AtomicBool>, retries: Arc<AtomicUsize>) -> JoinHandle<()> {
    tokio::spawn(async move {
        while !done.load(Ordering::Relaxed) {
            retrying(&retries, || {
                s.release_stale(ReleaseStaleRequest { stale_after_ms: 400, now: now_ms() })
            })
            .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// Terminates every connection of the store on `schema` every 30 ms (running `between` after
/// each round) until `want` jobs are completed or 400 rounds have passed, then waits up to 30 s
/// for the rest; returns how many connections were terminated.
pub(crate) async fn cut_until_completed(schema: &str, want: i64, mut between: impl AsyncFnMut()) -> i64 {
    let app: String = format!("flexiq {schema}").chars().take(63).collect();
    let killer = admin().await;
    let mut kills = 0;
    for _ in 0..400 {
        let r = killer
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
                &[&app],
            )
            .await
            .unwrap();
        kills += r.get::<_, i64>(0);
        between().await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        if tally(schema).await.0 == want {
            break;
        }
    }
    for _ in 0..600 {
        if tally(schema).await.0 == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    kills
}

/// Stops the store's users, checks that connections were cut and that errors surfaced as
/// retryable, and returns the tally of the store on `schema`.
pub(crate) async fn stop(
    done: &AtomicBool,
    tasks: Vec<JoinHandle<()>>,
    schema: &str,
    kills: i64,
    retries: &AtomicUsize,
) -> (i64, i64, i64, i64) {
    done.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    assert!(kills > 0, "no backend was terminated");
    assert!(retries.load(Ordering::Relaxed) > 0, "no retryable error surfaced");
    tally(schema).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_backends_surface_as_retryable_and_lose_no_job() {
    let schema = fresh_schema("chaos");
    let s = open(&schema, 8).await;
    lift_stall_budget(&s, "q").await;
    enqueue_n(&s, "q", 1_000, now_ms()).await;
    let done = Arc::new(AtomicBool::new(false));
    let retries = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for w in 0..4 {
        let (s, done, retries) = (s.clone(), done.clone(), retries.clone());
        tasks.push(tokio::spawn(async move {
            let me = format!("w{w}");
            while !done.load(Ordering::Relaxed) {
                let got = retrying(&retries, || claim(&s, "q", 20, &me, now_ms())).await;
                if got.is_empty() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                retrying(&retries, || s.ack(AckRequest { acks: completes(&got), now: now_ms() })).await;
            }
        }));
    }
    tasks.push(sweeper(s.clone(), done.clone(), retries.clone()));
    let kills = cut_until_completed(&schema, 1_000, async || {}).await;
    let (completed, total, successes, duplicated) = stop(&done, tasks, &schema, kills, &retries).await;
    assert_eq!(
        (completed, total, successes, duplicated),
        (1_000, 1_000, 1_000, 0),
        "jobs per status: {:?}",
        statuses(&schema).await
    );
    crate::counts::check(&schema, "backends were terminated mid-transaction").await;
    drop_schema(&schema).await;
}
