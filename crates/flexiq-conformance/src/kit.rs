//! The test kit the store benches and reliability tests share: wall-clock time, a no-op
//! workload, and the claim-and-complete drain loop a worker runs, written once so every store
//! is measured and stressed by the same code.
//!
//! The conformance cases use an injected clock ([`crate::fixtures::T0`]); benches and
//! multi-process tests use the wall clock, since other processes and servers read it too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flexiq_core::store::{Ack, AckKind, AckRequest, ClaimRequest};
use flexiq_core::{Backoff, EnqueueOptions, NewJob, Store};

/// Now on the wall clock (Unix ms).
pub fn wall_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// `n` no-op jobs (task `noop`, payload `{}`, no backoff) on `queue`, built at the wall clock.
pub fn noop_jobs(queue: &str, n: usize) -> Vec<NewJob> {
    let now = wall_ms();
    (0..n)
        .map(|_| {
            let opts = EnqueueOptions {
                queue: Some(queue.to_string()),
                backoff: Some(Backoff::NONE),
                ..Default::default()
            };
            NewJob::build("noop", b"{}".to_vec(), opts, now).expect("a valid no-op job")
        })
        .collect()
}

/// Claims from `queues` in batches of up to `batch` as worker `worker_id` and completes every job
/// claimed, until `left` reaches zero; returns how many jobs this loop completed. Run several at
/// once (sharing `left`) to drain with that many workers.
pub async fn drain_loop(
    store: Arc<dyn Store>,
    queues: Vec<String>,
    worker_id: String,
    batch: u32,
    left: Arc<AtomicU64>,
) -> u64 {
    let mut done = 0;
    while left.load(Ordering::Acquire) > 0 {
        let req = ClaimRequest {
            queues: queues.clone(),
            limit: batch,
            worker_id: worker_id.clone(),
            now: wall_ms(),
        };
        let claimed = store.claim(req).await.unwrap_or_else(|e| panic!("claim as {worker_id}: {e}"));
        if claimed.is_empty() {
            tokio::task::yield_now().await;
            continue;
        }
        let acks: Vec<Ack> = claimed
            .iter()
            .map(|c| Ack {
                job_id: c.job.id.clone(),
                fence: c.fence,
                kind: AckKind::Complete { result: None },
            })
            .collect();
        let n = acks.len() as u64;
        store
            .ack(AckRequest { acks, now: wall_ms() })
            .await
            .unwrap_or_else(|e| panic!("ack as {worker_id}: {e}"));
        let _ = left.fetch_update(Ordering::AcqRel, Ordering::Acquire, |l| Some(l.saturating_sub(n)));
        done += n;
    }
    done
}

/// Drains `total` jobs from `queue` with `loops` concurrent drain loops (batches of 100), the
/// shape every store's drain bench measures.
pub async fn drain(store: Arc<dyn Store>, queue: &str, total: u64, loops: usize) -> u64 {
    let left = Arc::new(AtomicU64::new(total));
    let tasks: Vec<_> = (0..loops)
        .map(|w| {
            tokio::spawn(drain_loop(
                store.clone(),
                vec![queue.to_string()],
                format!("w{w}"),
                100,
                left.clone(),
            ))
        })
        .collect();
    let mut done = 0;
    for t in tasks {
        done += t.await.expect("drain loop panicked");
    }
    done
}

/// A two-thread runtime, the shape benches measure on (one thread for the caller's work, one for
/// the client's I/O).
pub fn bench_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Runs `iters` sequential calls of `op` in one task on the runtime's workers, as a worker or a
/// server's request handler calls the store, and returns the time they took. (Awaiting from
/// `block_on` instead adds a hop to the blocked thread on every reply.)
pub fn time_in_task<F, Fut>(rt: &tokio::runtime::Runtime, iters: u64, op: F) -> std::time::Duration
where
    F: Fn() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    rt.block_on(async move {
        tokio::spawn(async move {
            let start = std::time::Instant::now();
            for _ in 0..iters {
                op().await;
            }
            start.elapsed()
        })
        .await
        .expect("the timed task panicked")
    })
}
