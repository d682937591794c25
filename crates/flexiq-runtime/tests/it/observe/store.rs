//! The store-level gauges: counts by queue and status, and the execution window.

use std::time::Duration;

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::observe::prometheus::{render, render_with, PrometheusOptions};
use flexiq_runtime::EnqueueOptions;

use super::prom::{find, parse, value};
use crate::assert_code;
use crate::common::{finish, make_dead, manual, open, retries};

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions { queue: Some(queue.into()), ..Default::default() }
}

#[tokio::test]
async fn render_reports_jobs_by_queue_and_status_and_the_execution_window() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let ns = q.namespace().to_string();
    // "a": one job failing once, then succeeding on its retry.
    q.enqueue("work", b"".to_vec(), EnqueueOptions { queue: Some("a".into()), ..retries(1) }).await.unwrap();
    finish(&q, AckKind::Fail { error: "flaky".into(), retryable: true }).await;
    finish(&q, AckKind::Complete { result: None }).await;
    // "default": one dead letter; "b": two pending; "idle": known but empty.
    make_dead(&q, "doomed").await;
    q.enqueue("later", b"".to_vec(), on("b")).await.unwrap();
    q.enqueue("later", b"".to_vec(), on("b")).await.unwrap();
    q.pause("idle").await.unwrap();

    let s = parse(&render(&q).await.unwrap());
    let jobs = |queue: &str, status: &str| {
        value(&s, "flexiq_jobs", &[("namespace", ns.as_str()), ("queue", queue), ("status", status)])
    };
    assert_eq!(jobs("a", "completed"), 1.0);
    assert_eq!(jobs("a", "pending"), 0.0);
    assert_eq!(jobs("b", "pending"), 2.0);
    assert_eq!(jobs("default", "dead"), 1.0);
    assert_eq!(jobs("idle", "pending"), 0.0, "an empty known queue reports zeros");
    assert_eq!(find(&s, "flexiq_jobs", &[("queue", "b")]).len(), 8, "one series per status");

    let exec = |task: &str, outcome: &str| {
        value(&s, "flexiq_window_executions", &[("task", task), ("outcome", outcome)])
    };
    assert_eq!(exec("work", "completed"), 1.0);
    assert_eq!(exec("work", "failed"), 1.0);
    assert_eq!(exec("doomed", "failed"), 1.0);
    assert!(find(&s, "flexiq_window_executions", &[("task", "doomed"), ("outcome", "completed")]).is_empty());
    assert_eq!(value(&s, "flexiq_window_retried_executions", &[("task", "work"), ("queue", "a")]), 1.0);
    assert_eq!(value(&s, "flexiq_window_retried_executions", &[("task", "doomed")]), 0.0);
    assert_eq!(value(&s, "flexiq_window_throughput_per_second", &[]), 3.0 / 60.0);
    assert_eq!(value(&s, "flexiq_window_seconds", &[]), 60.0);
    assert_eq!(find(&s, "flexiq_window_duration_milliseconds", &[("task", "work")]).len(), 3);

    // Past the window the executions drop out; the job counts stay.
    clock.advance(61_000);
    let s = parse(&render(&q).await.unwrap());
    assert!(find(&s, "flexiq_window_executions", &[]).is_empty());
    assert_eq!(value(&s, "flexiq_window_throughput_per_second", &[]), 0.0);
    assert_eq!(value(&s, "flexiq_jobs", &[("queue", "b"), ("status", "pending")]), 2.0);

    // A wider window reaches them again.
    let wide = PrometheusOptions { window: Duration::from_secs(600) };
    let s = parse(&render_with(&q, &wide, None).await.unwrap());
    assert_eq!(value(&s, "flexiq_window_executions", &[("task", "work"), ("outcome", "completed")]), 1.0);
    assert_eq!(value(&s, "flexiq_window_seconds", &[]), 600.0);
}

#[tokio::test]
async fn a_window_out_of_range_is_refused() {
    let q = open().await;
    let zero = PrometheusOptions { window: Duration::ZERO };
    assert_code!(render_with(&q, &zero, None).await, "INVALID_ARGUMENT");
}
