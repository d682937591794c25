//! Stats, metrics and the worker registry.

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::EnqueueOptions;

use crate::assert_code;
use crate::common::{claim, finish, manual, open, retries, T0};

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions { queue: Some(queue.into()), ..Default::default() }
}

#[tokio::test]
async fn stats_count_by_status_overall_and_per_queue() {
    let q = open().await;
    q.enqueue("t", b"".to_vec(), on("a")).await.unwrap();
    q.enqueue("t", b"".to_vec(), on("b")).await.unwrap();
    finish(&q, AckKind::Complete { result: None }).await;
    q.pause("idle").await.unwrap();
    let s = q.stats().await.unwrap();
    assert_eq!((s.pending, s.completed), (1, 1));
    assert_eq!(q.stats_for_queue("a").await.unwrap().total(), 1);
    let by_queue = q.stats_by_queue().await.unwrap();
    assert_eq!(by_queue.len(), 2);
    let all = q.stats_all_queues().await.unwrap();
    assert!(all.contains_key("idle"), "{all:?}");
    assert_eq!(all["idle"].total(), 0);
    assert_code!(q.stats_for_queue("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn metrics_aggregate_each_execution_in_the_window() {
    let q = open().await;
    let (q, clock) = manual(&q);
    q.enqueue("a", b"".to_vec(), retries(1)).await.unwrap();
    finish(&q, AckKind::Fail { error: "x".into(), retryable: true }).await;
    finish(&q, AckKind::Complete { result: None }).await;
    let m = q.metrics(None, 60).await.unwrap();
    assert_eq!((m["a"].count, m["a"].success_count, m["a"].failure_count), (2, 1, 1));
    assert!(q.metrics(Some("zzz"), 60).await.unwrap().is_empty());
    clock.advance(120_000);
    assert!(q.metrics(Some("a"), 60).await.unwrap().is_empty());
    assert_code!(q.metrics(None, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.metrics(Some(""), 60).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn metrics_timeseries_buckets_executions() {
    let q = open().await;
    let (q, clock) = manual(&q);
    q.enqueue("a", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    finish(&q, AckKind::Complete { result: None }).await;
    clock.advance(120_000);
    q.enqueue("a", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    finish(&q, AckKind::Complete { result: None }).await;
    let series = q.metrics_timeseries(Some("a"), 3_600, 60).await.unwrap();
    assert_eq!(series.len(), 2);
    assert!(series[0].timestamp < series[1].timestamp);
    assert_eq!(series[0].timestamp % 60_000, 0, "bucket starts are in ms");
    assert_code!(q.metrics_timeseries(None, 3_600, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.metrics_timeseries(None, -1, 60).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn get_metrics_returns_raw_rows_since_a_unix_ms() {
    let q = open().await;
    let (q, _clock) = manual(&q);
    q.enqueue("a", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    finish(&q, AckKind::Complete { result: None }).await;
    let rows = q.get_metrics(T0 - 1, None).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].success);
    assert!(q.get_metrics(T0 + 1, Some("a")).await.unwrap().is_empty());
    assert_code!(q.get_metrics(-5, None).await, "INVALID_ARGUMENT");
    assert_code!(q.get_metrics(0, Some("")).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn count_pending_by_queue_counts_one_queue() {
    let q = open().await;
    q.enqueue("t", b"".to_vec(), on("a")).await.unwrap();
    q.enqueue("t", b"".to_vec(), on("a")).await.unwrap();
    q.enqueue("t", b"".to_vec(), on("b")).await.unwrap();
    claim(&q, 1).await;
    assert_eq!(
        q.count_pending_by_queue("a").await.unwrap() + q.count_pending_by_queue("b").await.unwrap(),
        2
    );
    assert_eq!(q.count_pending_by_queue("none").await.unwrap(), 0);
    assert_code!(q.count_pending_by_queue("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn list_workers_shows_running_workers() {
    let q = open().await;
    assert!(q.list_workers().await.unwrap().is_empty());
    let config =
        flexiq_runtime::WorkerConfig { worker_id: Some("w-listed".into()), ..crate::common::quiet_config() };
    let w = flexiq_runtime::Worker::new(q.queue.clone(), config).unwrap().start();
    crate::common::eventually(5, "worker registration", || async {
        q.list_workers().await.unwrap().iter().any(|w| w.id == "w-listed" && w.concurrency == 4)
    })
    .await;
    w.shutdown().await.unwrap();
}
