//! Connection loss: backends are terminated repeatedly while 1,000 jobs drain through
//! claim/ack loops that retry retryable errors; every job still ends completed exactly once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_core::store::{AckRequest, JobStore, ReleaseStaleRequest};
use flexiq_core::Error;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_backends_surface_as_retryable_and_lose_no_job() {
    let schema = fresh_schema("chaos");
    let s = open(&schema, 8).await;
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
    // A claim whose commit landed but whose reply was lost leaves a job running with no
    // holder: the stale-lease sweep gives it back.
    {
        let (s, done, retries) = (s.clone(), done.clone(), retries.clone());
        tasks.push(tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                retrying(&retries, || {
                    s.release_stale(ReleaseStaleRequest { stale_after_ms: 400, now: now_ms() })
                })
                .await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }));
    }
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
        tokio::time::sleep(Duration::from_millis(30)).await;
        if tally(&schema).await.0 == 1_000 {
            break;
        }
    }
    for _ in 0..600 {
        if tally(&schema).await.0 == 1_000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    let (completed, total, successes, duplicated) = tally(&schema).await;
    assert!(kills > 0, "no backend was terminated");
    assert!(retries.load(Ordering::Relaxed) > 0, "no retryable error surfaced");
    assert_eq!((completed, total, successes, duplicated), (1_000, 1_000, 1_000, 0));
    crate::counts::check(&schema, "backends were terminated mid-transaction").await;
    drop_schema(&schema).await;
}
