//! Metric rows: one per execution, successes and failures alike, filtered by time and task.

use flexiq_core::store::{AckKind, GetMetricsRequest, ReleaseStaleRequest};
use flexiq_core::{Backoff, EnqueueOptions};

use crate::fixtures::{ack, at, complete, fail, job, job_with, now, open, start, take};
use crate::Harness;

/// A failed attempt and the successful retry each leave one row, with attempt and duration.
pub async fn metrics_one_row_per_execution(h: &dyn Harness) {
    let s = open(h, "default").await;
    let opts = EnqueueOptions { queue: Some("q".into()), backoff: Some(Backoff::NONE), ..Default::default() };
    let c1 = start(&*s, job_with("resize", "", opts), now()).await;
    fail(&*s, &c1, "flaky", true, at(250)).await;
    let c2 = take(&*s, 1, at(300)).await.remove(0);
    complete(&*s, &c2, None, at(1_000)).await;
    let rows = s.get_metrics(GetMetricsRequest { since_ms: now(), task: None }).await.unwrap();
    assert_eq!(rows.len(), 2);
    let r0 = &rows[0];
    assert_eq!(
        (r0.job_id.as_str(), r0.task.as_str(), r0.queue.as_str()),
        (c1.job.id.as_str(), "resize", "q")
    );
    assert_eq!((r0.attempt, r0.success, r0.duration_ms, r0.recorded_at), (1, false, 250, at(250)));
    let r1 = &rows[1];
    assert_eq!((r1.attempt, r1.success, r1.duration_ms, r1.recorded_at), (2, true, 700, at(1_000)));
}

/// `since` keeps rows recorded at or after it.
pub async fn metrics_since_filter(h: &dyn Harness) {
    let s = open(h, "default").await;
    for i in 0..3 {
        let c = start(&*s, job("t", ""), at(i * 1_000)).await;
        complete(&*s, &c, None, at(i * 1_000 + 10)).await;
    }
    assert_eq!(s.get_metrics(GetMetricsRequest { since_ms: now(), task: None }).await.unwrap().len(), 3);
    let rows = s.get_metrics(GetMetricsRequest { since_ms: at(1_010), task: None }).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.recorded_at).collect::<Vec<_>>(), vec![at(1_010), at(2_010)]);
    assert!(s.get_metrics(GetMetricsRequest { since_ms: at(2_011), task: None }).await.unwrap().is_empty());
}

/// The task filter keeps one task's rows.
pub async fn metrics_task_filter(h: &dyn Harness) {
    let s = open(h, "default").await;
    for (i, task) in ["a", "b", "a"].into_iter().enumerate() {
        let c = start(&*s, job(task, ""), at(i as i64)).await;
        complete(&*s, &c, None, at(i as i64 + 1)).await;
    }
    let rows = s.get_metrics(GetMetricsRequest { since_ms: now(), task: Some("a".into()) }).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.task == "a"));
    assert!(s
        .get_metrics(GetMetricsRequest { since_ms: now(), task: Some("zzz".into()) })
        .await
        .unwrap()
        .is_empty());
}

/// Suspend and defer give the attempt back and are not executions: no rows.
pub async fn metrics_suspend_and_defer_record_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    ack(&*s, &c, AckKind::Suspend { until: at(10) }, at(1)).await;
    let c = take(&*s, 1, at(10)).await.remove(0);
    ack(&*s, &c, AckKind::Defer { until: at(20), reason: "later".into() }, at(11)).await;
    assert!(s.get_metrics(GetMetricsRequest { since_ms: now(), task: None }).await.unwrap().is_empty());
}

/// A non-retryable failure records one failed row.
pub async fn metrics_non_retryable_failure_recorded(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    fail(&*s, &c, "bad", false, at(5)).await;
    let rows = s.get_metrics(GetMetricsRequest { since_ms: now(), task: None }).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert!(!rows[0].success);
    assert_eq!(rows[0].duration_ms, 5);
}

/// Rows come back oldest first.
pub async fn metrics_oldest_first(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = start(&*s, job("t", ""), now()).await;
    let b = start(&*s, job("t", ""), now()).await;
    complete(&*s, &b, None, at(20)).await;
    complete(&*s, &a, None, at(30)).await;
    let rows = s.get_metrics(GetMetricsRequest { since_ms: now(), task: None }).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.recorded_at).collect::<Vec<_>>(), vec![at(20), at(30)]);
}

/// A lost heartbeat releases the job without recording an execution row.
pub async fn metrics_heartbeat_loss_records_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    start(&*s, job("t", ""), now()).await;
    assert_eq!(
        s.release_stale(ReleaseStaleRequest { stale_after_ms: 1_000, now: at(5_000) }).await.unwrap().len(),
        1
    );
    assert!(s.get_metrics(GetMetricsRequest { since_ms: now(), task: None }).await.unwrap().is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_metrics {
    ($callback:path, $make:path) => {
        $callback!($make;
            metrics::metrics_one_row_per_execution,
            metrics::metrics_since_filter,
            metrics::metrics_task_filter,
            metrics::metrics_suspend_and_defer_record_nothing,
            metrics::metrics_non_retryable_failure_recorded,
            metrics::metrics_oldest_first,
            metrics::metrics_heartbeat_loss_records_nothing,
        );
    };
}
