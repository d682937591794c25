//! Clean, drain, obliterate, remove, retry_jobs, is_maxed, rate_limit_ttl and remove_orphans
//! through the Queue on every store, and the bad input each refuses with nothing removed.

use flexiq_runtime::core::store::{AckKind, ClaimRequest};
use flexiq_runtime::{EnqueueOptions, JobStatus, Queue};

use crate::common::{claim, finish, manual, retries};
use crate::{assert_code, on_every_store};

on_every_store!(
    clean_and_drain_remove_what_they_name,
    obliterate_pages_through_a_queue,
    remove_takes_children_and_refuses_running,
    retry_jobs_reruns_finished_jobs,
    limits_report_maxed_and_rate_limit_ttl,
    bad_input_is_refused_and_nothing_is_removed,
);

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions { queue: Some(queue.into()), ..Default::default() }
}

async fn status(q: &Queue, id: &str) -> Option<JobStatus> {
    q.get_job(id).await.unwrap().map(|j| j.status)
}

async fn clean_and_drain_remove_what_they_name(q: &Queue) {
    let (q, clock) = manual(q);
    let done = q.enqueue("t", b"".to_vec(), on("default")).await.unwrap();
    finish(&q, AckKind::Complete { result: None }).await;
    clock.advance(5_000);
    let due = q.enqueue("t", b"".to_vec(), on("default")).await.unwrap();
    let later = EnqueueOptions { delay_ms: Some(60_000), ..on("default") };
    let delayed = q.enqueue("t", b"".to_vec(), later).await.unwrap();
    assert!(q.clean("default", "completed", 10_000, 100).await.unwrap().is_empty(), "not old enough");
    assert_eq!(q.clean("default", "completed", 1_000, 100).await.unwrap(), vec![done.clone()]);
    assert_eq!(status(&q, done.as_str()).await, None);
    assert_eq!(q.drain("default", false).await.unwrap(), 1);
    assert_eq!(status(&q, due.as_str()).await, None);
    assert_eq!(status(&q, delayed.as_str()).await, Some(JobStatus::Pending));
    assert_eq!(q.drain("default", true).await.unwrap(), 1);
    assert_eq!(q.stats_for_queue("default").await.unwrap().total(), 0);
    assert_eq!(q.remove_orphans().await.unwrap(), 0);
}

async fn obliterate_pages_through_a_queue(q: &Queue) {
    let items = (0..150)
        .map(|_| flexiq_runtime::EnqueueItem {
            options: on("gone"),
            ..flexiq_runtime::EnqueueItem::new("t", b"".to_vec())
        })
        .collect();
    q.enqueue_many(items).await.unwrap();
    let keep = q.enqueue("t", b"".to_vec(), on("kept")).await.unwrap();
    q.set_queue_concurrency("gone", 4).await.unwrap();
    let take = ClaimRequest { queues: vec!["gone".into()], limit: 1, worker_id: "w".into(), now: q.now_ms() };
    assert_eq!(q.store().claim(take).await.unwrap().len(), 1);
    assert_code!(q.obliterate("gone", false, 100).await, "CONFLICT");
    assert_eq!(q.obliterate("gone", true, 100).await.unwrap(), 50);
    assert_eq!(q.obliterate("gone", true, 100).await.unwrap(), 0);
    assert_eq!(q.stats_for_queue("gone").await.unwrap().total(), 0);
    assert_eq!(q.queue_config("gone").await.unwrap().concurrency, None, "its controls are gone");
    assert_eq!(status(q, keep.as_str()).await, Some(JobStatus::Pending));
}

async fn remove_takes_children_and_refuses_running(q: &Queue) {
    let child = q.enqueue("child", b"".to_vec(), on("default")).await.unwrap();
    let deps = EnqueueOptions { depends_on: vec![child.to_string()], ..on("default") };
    let parent = q.enqueue("parent", b"".to_vec(), deps).await.unwrap();
    let removed = q.remove(parent.as_str(), true).await.unwrap();
    assert_eq!(removed, vec![parent.clone(), child.clone()]);
    assert_code!(q.remove(parent.as_str(), true).await, "NOT_FOUND");
    let running = q.enqueue("t", b"".to_vec(), on("default")).await.unwrap();
    claim(q, 1).await;
    assert_code!(q.remove(running.as_str(), false).await, "CONFLICT");
    assert_eq!(status(q, running.as_str()).await, Some(JobStatus::Running));
    assert_code!(q.remove("not-an-id", false).await, "INVALID_ARGUMENT");
}

async fn retry_jobs_reruns_finished_jobs(q: &Queue) {
    for _ in 0..3 {
        q.enqueue("t", b"".to_vec(), retries(0)).await.unwrap();
        finish(q, AckKind::Fail { error: "boom".into(), retryable: true }).await;
    }
    assert_eq!(q.stats_for_queue("default").await.unwrap().dead, 3);
    assert_eq!(q.retry_jobs("default", "dead", 2).await.unwrap(), 2);
    assert_eq!(q.retry_jobs("default", "dead", 2).await.unwrap(), 1);
    assert_eq!(q.retry_jobs("default", "dead", 2).await.unwrap(), 0);
    let st = q.stats_for_queue("default").await.unwrap();
    assert_eq!((st.pending, st.dead), (3, 0));
    assert!(q.dead_letters(10, 0).await.unwrap().is_empty());
}

async fn limits_report_maxed_and_rate_limit_ttl(q: &Queue) {
    let (q, clock) = manual(q);
    assert!(!q.is_maxed("default").await.unwrap(), "no cap");
    q.set_queue_concurrency("default", 1).await.unwrap();
    q.enqueue("t", b"".to_vec(), on("default")).await.unwrap();
    q.enqueue("t", b"".to_vec(), on("default")).await.unwrap();
    assert!(!q.is_maxed("default").await.unwrap());
    claim(&q, 5).await;
    assert!(q.is_maxed("default").await.unwrap(), "one running under a cap of 1");
    q.clear_queue_concurrency("default").await.unwrap();
    assert_eq!(q.rate_limit_ttl("default").await.unwrap(), 0);
    q.set_queue_rate_limit("default", "1/s").await.unwrap();
    assert_eq!(claim(&q, 5).await.len(), 1);
    clock.advance(250);
    let ttl = q.rate_limit_ttl("default").await.unwrap();
    assert!((749..=750).contains(&ttl), "about 750 ms left, got {ttl}");
}

async fn bad_input_is_refused_and_nothing_is_removed(q: &Queue) {
    q.enqueue("t", b"".to_vec(), on("default")).await.unwrap();
    assert_code!(q.clean("default", "running", 0, 10).await, "INVALID_ARGUMENT");
    assert_code!(q.clean("default", "nonsense", 0, 10).await, "INVALID_ARGUMENT");
    assert_code!(q.clean("default", "pending", -1, 10).await, "INVALID_ARGUMENT");
    assert_code!(q.clean("default", "pending", 0, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.clean("default", "pending", 0, -5).await, "INVALID_ARGUMENT");
    assert_code!(q.clean("", "pending", 0, 10).await, "INVALID_ARGUMENT");
    assert_code!(q.drain("", true).await, "INVALID_ARGUMENT");
    assert_code!(q.obliterate("default", true, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.obliterate("default", true, 10_001).await, "INVALID_ARGUMENT");
    assert_code!(q.retry_jobs("default", "pending", 10).await, "INVALID_ARGUMENT");
    assert_code!(q.retry_jobs("default", "dead", -1).await, "INVALID_ARGUMENT");
    assert_code!(q.is_maxed("").await, "INVALID_ARGUMENT");
    assert_code!(q.rate_limit_ttl("").await, "INVALID_ARGUMENT");
    assert_eq!(q.stats_for_queue("default").await.unwrap().pending, 1, "nothing removed");
}
