//! Delay and priority control and the stall budget through the Queue on every store: the
//! rescuer recovers a stalled job once by default and fails it with `STALLED` after that, and
//! each bad argument is refused with nothing changed.

use std::time::Duration;

use flexiq_runtime::core::store::HeartbeatRequest;
use flexiq_runtime::services::{RescueConfig, Rescuer};
use flexiq_runtime::{EnqueueOptions, JobStatus, Queue};

use crate::common::{claim, manual};
use crate::{assert_code, on_every_store};

on_every_store!(
    delays_and_promotion_move_pending_jobs,
    priority_and_lifo_reorder_claims,
    stalls_spend_the_queue_budget,
    bad_input_changes_nothing,
);

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions { queue: Some(queue.into()), ..Default::default() }
}

async fn run_at(q: &Queue, id: &str) -> i64 {
    q.get_job(id).await.unwrap().unwrap().run_at
}

async fn delays_and_promotion_move_pending_jobs(q: &Queue) {
    let (q, clock) = manual(q);
    let id = q.enqueue("t", b"".to_vec(), on("rs")).await.unwrap();
    q.change_delay(id.as_str(), 60_000).await.unwrap();
    assert_eq!(run_at(&q, id.as_str()).await, q.now_ms() + 60_000);
    assert!(claim(&q, 1).await.is_empty(), "delayed now");
    q.promote(id.as_str()).await.unwrap();
    assert_code!(q.promote(id.as_str()).await, "CONFLICT");
    let later = EnqueueOptions { delay_ms: Some(10_000), ..on("rs") };
    for _ in 0..3 {
        q.enqueue("t", b"".to_vec(), later.clone()).await.unwrap();
    }
    clock.advance(1);
    assert_eq!(q.promote_jobs("rs", 2).await.unwrap(), 2);
    assert_eq!(q.promote_jobs("rs", 2).await.unwrap(), 1);
    assert_eq!(q.promote_jobs("rs", 2).await.unwrap(), 0);
    assert_eq!(claim(&q, 10).await.len(), 4);
    assert_code!(q.change_delay(id.as_str(), 5).await, "CONFLICT");
}

async fn priority_and_lifo_reorder_claims(q: &Queue) {
    let (q, clock) = manual(q);
    let a = q.enqueue("t", b"".to_vec(), on("rs")).await.unwrap();
    clock.advance(1);
    let b = q.enqueue("t", b"".to_vec(), on("rs")).await.unwrap();
    clock.advance(1);
    let c = q.enqueue("t", b"".to_vec(), EnqueueOptions { lifo: true, ..on("rs") }).await.unwrap();
    clock.advance(1);
    q.change_priority(a.as_str(), 3, false).await.unwrap();
    q.change_priority(b.as_str(), 0, true).await.unwrap();
    let order: Vec<_> = claim(&q, 3).await.into_iter().map(|c| c.job.id).collect();
    assert_eq!(order, vec![a, b, c]);
}

/// Claims one job straight from the store and reports its start, as a worker's heartbeat does
/// once the handler runs: only a started job's lapsed lease is a stall.
async fn claim_started(q: &Queue) {
    let c = claim(q, 1).await.remove(0);
    let req = HeartbeatRequest { jobs: vec![(c.job.id, c.fence)], now: q.now_ms() };
    q.store().heartbeat(req).await.unwrap();
}

async fn stalls_spend_the_queue_budget(q: &Queue) {
    let (q, clock) = manual(q);
    let rescuer = Rescuer::new(&q, RescueConfig { stale_after: Duration::from_secs(30) }).unwrap();
    let id = q.enqueue("t", b"".to_vec(), on("rs")).await.unwrap();
    claim_started(&q).await;
    clock.advance(31_000);
    assert_eq!(rescuer.run_once().await.unwrap().released, vec![id.clone()]);
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!((job.status, job.stall_count, job.attempt), (JobStatus::Pending, 1, 0));
    claim_started(&q).await;
    clock.advance(31_000);
    rescuer.run_once().await.unwrap();
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!((job.status, job.stall_count), (JobStatus::Dead, 2));
    assert!(job.last_error.unwrap_or_default().starts_with("STALLED"));
    q.set_queue_max_stalled("rs", 2).await.unwrap();
    assert_eq!(q.queue_config("rs").await.unwrap().max_stalled_count, Some(2));
    let id = q.enqueue("t", b"".to_vec(), on("rs")).await.unwrap();
    for _ in 0..2 {
        claim_started(&q).await;
        clock.advance(31_000);
        rescuer.run_once().await.unwrap();
    }
    assert_eq!(q.get_job(id.as_str()).await.unwrap().unwrap().status, JobStatus::Pending, "a budget of 2");
    q.clear_queue_max_stalled("rs").await.unwrap();
    assert_eq!(q.queue_config("rs").await.unwrap().max_stalled_count, None);
}

async fn bad_input_changes_nothing(q: &Queue) {
    let id =
        q.enqueue("t", b"".to_vec(), EnqueueOptions { delay_ms: Some(5_000), ..on("rs") }).await.unwrap();
    let before = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_code!(q.change_delay(id.as_str(), -1).await, "INVALID_ARGUMENT");
    assert_code!(q.change_delay("not-an-id", 1).await, "INVALID_ARGUMENT");
    assert_code!(q.change_priority(id.as_str(), i64::from(i32::MAX) + 1, false).await, "INVALID_ARGUMENT");
    assert_code!(q.change_priority(id.as_str(), 3_000_000, false).await, "INVALID_ARGUMENT");
    assert_code!(q.change_priority(id.as_str(), 1, true).await, "CONFLICT");
    assert_code!(q.promote_jobs("rs", 0).await, "INVALID_ARGUMENT");
    assert_code!(q.promote_jobs("rs", -3).await, "INVALID_ARGUMENT");
    assert_code!(q.promote_jobs("", 3).await, "INVALID_ARGUMENT");
    assert_code!(q.set_queue_max_stalled("rs", -1).await, "INVALID_ARGUMENT");
    assert_code!(q.set_queue_max_stalled("rs", 10_001).await, "INVALID_ARGUMENT");
    let unknown = flexiq_runtime::core::JobId::at(q.now_ms());
    assert_code!(q.promote(unknown.as_str()).await, "NOT_FOUND");
    let lifo_delayed = EnqueueOptions { lifo: true, delay_ms: Some(5), ..on("rs") };
    assert_code!(q.enqueue("t", b"".to_vec(), lifo_delayed).await, "INVALID_ARGUMENT");
    assert_eq!(q.get_job(id.as_str()).await.unwrap().unwrap(), before);
    assert_eq!(q.queue_config("rs").await.unwrap().max_stalled_count, None);
}
