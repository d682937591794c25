//! Job entry points: enqueue, fetch, cancel, errors, replay, the graph, partials, logs, progress.

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::{ConnectOptions, EnqueueItem, EnqueueOptions, JobStatus};

use crate::assert_code;
use crate::common::{claim, finish, open, open_with, retries};

const UNKNOWN: &str = "0190aaaa-0000-7000-8000-000000000000";

#[tokio::test]
async fn enqueue_stores_the_job_and_refuses_bad_options() {
    let q = open().await;
    let opts = EnqueueOptions { queue: Some("mail".into()), priority: Some(5), ..Default::default() };
    let id = q.enqueue("send", b"hi".to_vec(), opts).await.unwrap();
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!((job.queue.as_str(), job.task.as_str(), job.priority), ("mail", "send", 5));
    assert_eq!(job.payload, b"hi");
    assert_eq!(job.status, JobStatus::Pending);
    assert_code!(q.enqueue("", b"".to_vec(), EnqueueOptions::default()).await, "INVALID_ARGUMENT");
    let bad = EnqueueOptions { metadata: Some("[]".into()), ..Default::default() };
    assert_code!(q.enqueue("t", b"".to_vec(), bad).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn enqueue_passes_max_pending_from_connect_options() {
    let q = open_with(ConnectOptions { max_pending: Some(2), ..Default::default() }).await;
    for _ in 0..2 {
        q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    }
    assert_code!(q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await, "QUEUE_FULL");
    assert_eq!(q.count_pending_by_queue("default").await.unwrap(), 2);
}

#[tokio::test]
async fn enqueue_many_writes_all_or_nothing() {
    let q = open().await;
    let ids = q.enqueue_many(vec![EnqueueItem::new("a", "1"), EnqueueItem::new("b", "2")]).await.unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(q.get_job(ids[1].as_str()).await.unwrap().unwrap().task, "b");
    assert_code!(q.enqueue_many(vec![]).await, "INVALID_ARGUMENT");
    let bad = vec![EnqueueItem::new("ok", "1"), EnqueueItem::new("", "2")];
    assert_code!(q.enqueue_many(bad).await, "INVALID_ARGUMENT");
    assert_eq!(q.stats().await.unwrap().pending, 2);
}

#[tokio::test]
async fn get_job_is_none_for_unknown_and_invalid_for_garbage() {
    let q = open().await;
    assert!(q.get_job(UNKNOWN).await.unwrap().is_none());
    assert_code!(q.get_job("not-an-id").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn get_result_is_none_until_completed() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_eq!(q.get_result(id.as_str()).await.unwrap(), None);
    finish(&q, AckKind::Complete { result: Some(b"done".to_vec()) }).await;
    assert_eq!(q.get_result(id.as_str()).await.unwrap().as_deref(), Some(&b"done"[..]));
    assert_code!(q.get_result(UNKNOWN).await, "NOT_FOUND");
    assert_code!(q.get_result("zz").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn request_cancel_and_is_cancel_requested() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    claim(&q, 1).await;
    assert!(!q.is_cancel_requested(id.as_str()).await.unwrap());
    assert!(q.request_cancel(id.as_str()).await.unwrap());
    assert!(q.is_cancel_requested(id.as_str()).await.unwrap());
    let pending = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert!(q.request_cancel(pending.as_str()).await.unwrap());
    assert_eq!(q.get_job(pending.as_str()).await.unwrap().unwrap().status, JobStatus::Cancelled);
    assert!(!q.request_cancel(pending.as_str()).await.unwrap());
    assert_code!(q.request_cancel(UNKNOWN).await, "NOT_FOUND");
    assert_code!(q.is_cancel_requested(UNKNOWN).await, "NOT_FOUND");
    assert_code!(q.request_cancel("bad").await, "INVALID_ARGUMENT");
    assert_code!(q.is_cancel_requested("bad").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn cancel_job_cancels_pending_only() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert!(q.cancel_job(id.as_str()).await.unwrap());
    assert!(!q.cancel_job(id.as_str()).await.unwrap());
    let running = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    claim(&q, 1).await;
    assert!(!q.cancel_job(running.as_str()).await.unwrap());
    assert_code!(q.cancel_job(UNKNOWN).await, "NOT_FOUND");
    assert_code!(q.cancel_job("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn get_job_errors_lists_every_failed_attempt() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), retries(2)).await.unwrap();
    for n in 1..=2 {
        finish(&q, AckKind::Fail { error: format!("boom {n}"), retryable: true }).await;
    }
    let errors = q.get_job_errors(id.as_str()).await.unwrap();
    assert_eq!(errors.iter().map(|e| e.error.as_str()).collect::<Vec<_>>(), ["boom 1", "boom 2"]);
    assert_eq!(errors[1].attempt, 2);
    assert_code!(q.get_job_errors(UNKNOWN).await, "NOT_FOUND");
    assert_code!(q.get_job_errors("x").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn replay_makes_a_new_job_and_records_it() {
    let q = open().await;
    let id = q.enqueue("t", b"payload".to_vec(), retries(0)).await.unwrap();
    finish(&q, AckKind::Fail { error: "nope".into(), retryable: false }).await;
    let first = q.replay(id.as_str()).await.unwrap();
    let second = q.replay_job(id.as_str()).await.unwrap();
    assert_ne!(first, id);
    assert_eq!(q.get_job(first.as_str()).await.unwrap().unwrap().payload, b"payload");
    let history = q.replay_history(id.as_str()).await.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].replay_job_id, second.as_str());
    assert_eq!(history[1].original_error.as_deref(), Some("nope"));
    assert_eq!(q.get_replay_history(id.as_str()).await.unwrap(), history);
    assert_code!(q.replay(UNKNOWN).await, "NOT_FOUND");
    assert_code!(q.replay_job("?").await, "INVALID_ARGUMENT");
    assert_code!(q.replay_history("?").await, "INVALID_ARGUMENT");
    assert_code!(q.get_replay_history("?").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn job_dag_shows_both_directions() {
    let q = open().await;
    let a = q.enqueue("a", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let dep = EnqueueOptions { depends_on: vec![a.to_string()], ..Default::default() };
    let b = q.enqueue("b", b"".to_vec(), dep).await.unwrap();
    let dag = q.job_dag(b.as_str()).await.unwrap();
    assert_eq!(dag.nodes.len(), 2);
    assert_eq!((dag.edges[0].from.as_str(), dag.edges[0].to.as_str()), (a.as_str(), b.as_str()));
    assert_code!(q.job_dag(UNKNOWN).await, "NOT_FOUND");
    assert_code!(q.job_dag("nope").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn partials_logs_and_progress_of_a_running_job() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let c = claim(&q, 1).await.pop().unwrap();
    assert_eq!(q.publish_partial(id.as_str(), b"one".to_vec()).await.unwrap(), 1);
    assert_eq!(q.publish_partial(id.as_str(), b"two".to_vec()).await.unwrap(), 2);
    q.log(id.as_str(), "info", "working").await.unwrap();
    assert_eq!(q.job_logs(id.as_str()).await.unwrap()[0].message, "working");
    assert_eq!(
        q.set_progress(id.as_str(), c.fence, 50.0).await.unwrap(),
        flexiq_runtime::AckOutcome::Acknowledged
    );
    assert_eq!(q.get_job(id.as_str()).await.unwrap().unwrap().progress, Some(50.0));
    let stale = flexiq_runtime::Fence { attempt: 9, ..c.fence };
    assert_eq!(
        q.set_progress(id.as_str(), stale, 60.0).await.unwrap(),
        flexiq_runtime::AckOutcome::Superseded
    );
    assert_code!(q.set_progress(id.as_str(), c.fence, 101.0).await, "INVALID_ARGUMENT");
    assert_code!(q.set_progress(id.as_str(), c.fence, f64::NAN).await, "INVALID_ARGUMENT");
    assert_code!(q.publish_partial(UNKNOWN, b"x".to_vec()).await, "NOT_FOUND");
    assert_code!(q.log(id.as_str(), "", "m").await, "INVALID_ARGUMENT");
    assert_code!(q.log(UNKNOWN, "info", "m").await, "NOT_FOUND");
    assert_code!(q.job_logs("bad").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn is_job_in_state_reads_the_status_and_refuses_bad_names() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert!(q.is_job_in_state(id.as_str(), "pending").await.unwrap());
    assert!(!q.is_job_in_state(id.as_str(), "running").await.unwrap());
    assert!(!q.is_job_in_state(UNKNOWN, "pending").await.unwrap(), "an unknown job is in no state");
    assert_code!(q.is_job_in_state(id.as_str(), "Pending").await, "INVALID_ARGUMENT");
    assert_code!(q.is_job_in_state(id.as_str(), "").await, "INVALID_ARGUMENT");
    assert_code!(q.is_job_in_state("garbage", "pending").await, "INVALID_ARGUMENT");
    assert_eq!(q.get_job(id.as_str()).await.unwrap().unwrap().status, JobStatus::Pending);
}
