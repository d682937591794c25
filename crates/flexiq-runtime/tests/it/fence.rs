//! Fencing end to end: a worker that lost its lease can never overwrite the newer attempt.

use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::services::{RescueConfig, Rescuer};
use flexiq_runtime::{CancelReason, EnqueueOptions, JobStatus, Worker, WorkerConfig};
use tokio::sync::Notify;

use crate::backends::{self, Backend};
use crate::common::{eventually, manual, quiet_config};

#[tokio::test]
async fn a_lost_lease_is_superseded_and_the_newer_result_stands_on_sqlite() {
    lost_lease_is_superseded(backends::sqlite().await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_lost_lease_is_superseded_and_the_newer_result_stands_on_postgres() {
    lost_lease_is_superseded(backends::postgres().await).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn a_lost_lease_is_superseded_and_the_newer_result_stands_on_redis() {
    lost_lease_is_superseded(backends::redis().await).await;
}

/// A handler paused past its lease: the rescuer releases the job, a second worker re-claims and
/// finishes it, and the first worker's late result is `Superseded` and changes nothing.
async fn lost_lease_is_superseded(backend: Backend) {
    let (q, clock) = manual(backend.queue());
    let release_first = Arc::new(Notify::new());
    let first_saw = Arc::new(parking_lot::Mutex::new(None));

    // One slot and no prefetch: the first worker cannot re-claim the job itself.
    let config =
        WorkerConfig { worker_id: Some("first".into()), concurrency: 1, prefetch: Some(0), ..quiet_config() };
    let mut first = Worker::new(q.clone(), config).unwrap();
    let (gate, saw) = (release_first.clone(), first_saw.clone());
    first
        .register("job", move |ctx| {
            let (gate, saw) = (gate.clone(), saw.clone());
            async move {
                // Pause past the lease; note the lost lease, then finish anyway.
                ctx.cancellation().cancelled().await;
                *saw.lock() = ctx.cancel_reason();
                gate.notified().await;
                Ok(Some(b"first".to_vec()))
            }
        })
        .unwrap();
    let id = q.enqueue("job", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let first = first.start();
    eventually(5, "first claim", || async {
        q.get_job(id.as_str()).await.unwrap().unwrap().worker_id.as_deref() == Some("first")
    })
    .await;

    // A heartbeat after the handler started reports the start, so the release is a stall.
    clock.advance(10);
    eventually(5, "first start reported", || async {
        let job = q.get_job(id.as_str()).await.unwrap().unwrap();
        job.heartbeat_at > job.started_at
    })
    .await;
    // The first worker stops heartbeating in store time: the rescuer releases its lease.
    clock.advance(60_000);
    let rescuer = Rescuer::new(&q, RescueConfig { stale_after: Duration::from_secs(30) }).unwrap();
    assert_eq!(rescuer.run_once().await.unwrap().released, vec![id.clone()]);

    let mut second =
        Worker::new(q.clone(), WorkerConfig { worker_id: Some("second".into()), ..quiet_config() }).unwrap();
    second.register("job", |_| async { Ok(Some(b"second".to_vec())) }).unwrap();
    let second = second.start();
    let result = q.result(id.as_str(), Some(Duration::from_secs(10)), None).await.unwrap();
    assert_eq!(result.as_deref(), Some(&b"second"[..]));

    // The first worker learns of the lost lease, finishes anyway, and is superseded.
    eventually(5, "lease loss noticed", || async { first_saw.lock().is_some() }).await;
    release_first.notify_one();
    eventually(5, "first ack", || async { first.counters().superseded == 1 }).await;
    let c1 = first.shutdown().await.unwrap();
    second.shutdown().await.unwrap();
    assert_eq!((c1.superseded, c1.acknowledged), (1, 0));
    assert_eq!(*first_saw.lock(), Some(CancelReason::LeaseLost));
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Completed);
    assert_eq!(job.result.as_deref(), Some(&b"second"[..]));
    // The stall gave the first attempt back; the claim sequence still tells the claims apart.
    assert_eq!((job.attempt, job.claim_seq, job.stall_count), (1, 2, 1));
    backend.cleanup().await;
}
