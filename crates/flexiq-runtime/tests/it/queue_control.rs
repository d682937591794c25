//! Queue control: pause, limits, purges, revocation, requeue.

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::{EnqueueOptions, JobStatus};

use crate::assert_code;
use crate::common::{claim, finish, manual, open};

const UNKNOWN: &str = "0190aaaa-0000-7000-8000-000000000000";

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions { queue: Some(queue.into()), ..Default::default() }
}

#[tokio::test]
async fn pause_and_resume_gate_claims() {
    let q = open().await;
    q.enqueue("t", b"".to_vec(), on("q1")).await.unwrap();
    q.pause("q1").await.unwrap();
    q.pause_queue("q2").await.unwrap();
    assert_eq!(q.paused_queues().await.unwrap(), ["q1", "q2"]);
    assert_eq!(q.list_paused_queues().await.unwrap(), ["q1", "q2"]);
    assert!(claim(&q, 10).await.is_empty());
    q.resume("q1").await.unwrap();
    q.resume_queue("q2").await.unwrap();
    assert!(q.paused_queues().await.unwrap().is_empty());
    assert_eq!(claim(&q, 10).await.len(), 1);
    assert_code!(q.pause("").await, "INVALID_ARGUMENT");
    assert_code!(q.resume("").await, "INVALID_ARGUMENT");
    assert_code!(q.pause_queue("").await, "INVALID_ARGUMENT");
    assert_code!(q.resume_queue("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn set_queue_rate_limit_parses_and_persists() {
    let q = open().await;
    q.set_queue_rate_limit("q1", "10/s").await.unwrap();
    assert_eq!(q.queue_config("q1").await.unwrap().rate_limit.unwrap().to_string(), "10/s");
    q.clear_queue_rate_limit("q1").await.unwrap();
    assert!(q.queue_config("q1").await.unwrap().rate_limit.is_none());
    for bad in ["", "10", "ten/s", "0/s", "5/d"] {
        assert_code!(q.set_queue_rate_limit("q1", bad).await, "INVALID_ARGUMENT");
    }
    assert_code!(q.set_queue_rate_limit("", "1/s").await, "INVALID_ARGUMENT");
    assert_code!(q.clear_queue_rate_limit("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn set_queue_concurrency_caps_running_jobs() {
    let q = open().await;
    for _ in 0..3 {
        q.enqueue("t", b"".to_vec(), on("q1")).await.unwrap();
    }
    q.set_queue_concurrency("q1", 1).await.unwrap();
    assert_eq!(q.queue_config("q1").await.unwrap().concurrency, Some(1));
    assert_eq!(claim(&q, 10).await.len(), 1);
    q.clear_queue_concurrency("q1").await.unwrap();
    assert_eq!(claim(&q, 10).await.len(), 2);
    assert_code!(q.set_queue_concurrency("q1", 0).await, "INVALID_ARGUMENT");
    assert_code!(q.set_queue_concurrency("q1", -4).await, "INVALID_ARGUMENT");
    assert_code!(q.queue_config("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn purge_cancels_pending_jobs_of_one_queue() {
    let q = open().await;
    let a = q.enqueue("t", b"".to_vec(), on("a")).await.unwrap();
    q.enqueue("t", b"".to_vec(), on("a")).await.unwrap();
    q.enqueue("t", b"".to_vec(), on("b")).await.unwrap();
    assert_eq!(q.purge("a").await.unwrap(), 2);
    assert_eq!(q.get_job(a.as_str()).await.unwrap().unwrap().status, JobStatus::Cancelled);
    assert_eq!(q.purge_queue("b").await.unwrap(), 1);
    assert_code!(q.purge("").await, "INVALID_ARGUMENT");
    assert_code!(q.purge_queue("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn revoke_task_refuses_future_enqueues() {
    let q = open().await;
    let before = q.enqueue("old", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    q.revoke_task("old").await.unwrap();
    assert_code!(q.enqueue("old", b"".to_vec(), EnqueueOptions::default()).await, "TASK_REVOKED");
    q.enqueue("new", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_code!(q.revoke_task("").await, "INVALID_ARGUMENT");
    assert_eq!(q.revoked_tasks().await.unwrap(), vec!["old"]);
    assert_eq!(
        q.get_job(before.as_str()).await.unwrap().unwrap().status,
        JobStatus::Pending,
        "a job enqueued before the revocation stays pending, to be claimed"
    );
    assert!(q.unrevoke_task("old").await.unwrap());
    assert!(!q.unrevoke_task("old").await.unwrap());
    assert!(q.revoked_tasks().await.unwrap().is_empty());
    q.enqueue("old", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_code!(q.unrevoke_task("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn purge_completed_deletes_old_completed_jobs() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    finish(&q, AckKind::Complete { result: None }).await;
    assert_eq!(q.purge_completed(60).await.unwrap(), 0);
    clock.advance(61_000);
    assert_eq!(q.purge_completed(60).await.unwrap(), 1);
    assert!(q.get_job(id.as_str()).await.unwrap().is_none());
    assert_code!(q.purge_completed(-1).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn requeue_job_returns_a_running_job_to_pending() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert!(!q.requeue_job(id.as_str()).await.unwrap());
    claim(&q, 1).await;
    assert!(q.requeue_job(id.as_str()).await.unwrap());
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!((job.status, job.attempt), (JobStatus::Pending, 0));
    assert!(!q.requeue_job(UNKNOWN).await.unwrap());
    assert_code!(q.requeue_job("bad").await, "INVALID_ARGUMENT");
}
