//! A worker's `metrics_bind` endpoint, scraped over HTTP while it runs.

use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::services::{RescueConfig, Rescuer};
use flexiq_runtime::{EnqueueItem, EnqueueOptions, HandlerError, JobStatus, Worker, WorkerConfig};
use prometheus_parse::Value;
use tokio::sync::Notify;

use super::prom::{find, parse, value};
use crate::common::{eventually, manual, open, quiet_config, retries};

async fn scrape(addr: std::net::SocketAddr) -> String {
    let resp = reqwest::get(format!("http://{addr}/metrics")).await.unwrap();
    assert_eq!(resp.status(), 200);
    let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    resp.text().await.unwrap()
}

fn with_metrics(id: &str) -> WorkerConfig {
    WorkerConfig {
        worker_id: Some(id.into()),
        metrics_bind: Some("127.0.0.1:0".parse().unwrap()),
        ..quiet_config()
    }
}

#[tokio::test]
async fn a_worker_serves_handler_latencies_retries_claims_and_store_gauges() {
    let q = open().await;
    let mut worker = Worker::new(q.clone(), with_metrics("metered")).unwrap();
    worker.register("ok", |_| async { Ok(None) }).unwrap();
    worker
        .register("flaky", |ctx| async move {
            if ctx.attempt() == 1 {
                Err(HandlerError::retryable("first try fails"))
            } else {
                Ok(None)
            }
        })
        .unwrap();
    worker.register("broken", |_| async { Err(HandlerError::fatal("never works")) }).unwrap();
    let items: Vec<_> = (0..5).map(|i| EnqueueItem::new("ok", i.to_string())).collect();
    q.enqueue_many(items).await.unwrap();
    let flaky = q.enqueue("flaky", b"".to_vec(), retries(3)).await.unwrap();
    let broken = q.enqueue("broken", b"".to_vec(), retries(3)).await.unwrap();
    let running = worker.start();
    running.ready().await.unwrap();
    let addr = running.metrics_addr().expect("a bound metrics address");
    q.result(flaky.as_str(), Some(Duration::from_secs(10)), None).await.unwrap();
    eventually(10, "every job finished", || async {
        let s = q.stats().await.unwrap();
        (s.completed, s.failed) == (6, 1)
    })
    .await;
    assert_eq!(q.get_job(broken.as_str()).await.unwrap().unwrap().status, JobStatus::Failed);

    let s = parse(&scrape(addr).await);
    let w = [("worker", "metered")];
    let attempts = |task: &str, outcome: &str| {
        value(&s, "flexiq_worker_attempts_total", &[w[0], ("task", task), ("outcome", outcome)])
    };
    assert_eq!(attempts("ok", "completed"), 5.0);
    assert_eq!(attempts("flaky", "failed"), 1.0);
    assert_eq!(attempts("flaky", "completed"), 1.0);
    assert_eq!(attempts("broken", "failed"), 1.0);
    assert_eq!(value(&s, "flexiq_worker_retries_total", &[("task", "flaky")]), 1.0);
    assert!(find(&s, "flexiq_worker_retries_total", &[("task", "broken")]).is_empty(), "fatal is no retry");
    assert_eq!(value(&s, "flexiq_worker_claimed_jobs_total", &w), 8.0);

    // Histograms: one latency observation per attempt, claim sizes summing to the claims.
    let latency =
        find(&s, "flexiq_worker_handler_duration_seconds", &[("task", "ok"), ("outcome", "completed")]);
    assert_eq!(latency.len(), 1);
    match &latency[0].value {
        Value::Histogram(buckets) => {
            let inf = buckets.iter().find(|b| b.less_than.is_infinite()).expect("+Inf bucket");
            assert_eq!(inf.count, 5.0);
        }
        other => panic!("latency is not a histogram: {other:?}"),
    }
    assert_eq!(value(&s, "flexiq_worker_handler_duration_seconds_count", &[("task", "ok")]), 5.0);
    assert_eq!(value(&s, "flexiq_worker_claim_batch_size_sum", &w), 8.0);
    assert!(value(&s, "flexiq_worker_claim_batch_size_count", &w) >= 1.0);
    assert_eq!(value(&s, "flexiq_worker_superseded_acks_total", &w), 0.0);
    assert_eq!(value(&s, "flexiq_worker_leases_lost_total", &w), 0.0);

    // The store-level gauges come in the same document.
    assert_eq!(value(&s, "flexiq_jobs", &[("queue", "default"), ("status", "completed")]), 6.0);
    assert_eq!(value(&s, "flexiq_window_executions", &[("task", "flaky"), ("outcome", "failed")]), 1.0);

    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_lost_lease_and_its_superseded_ack_are_counted() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let release = Arc::new(Notify::new());
    let config = WorkerConfig { concurrency: 1, prefetch: Some(0), ..with_metrics("zombie") };
    let mut first = Worker::new(q.clone(), config).unwrap();
    let gate = release.clone();
    first
        .register("job", move |ctx| {
            let gate = gate.clone();
            async move {
                ctx.cancellation().cancelled().await;
                gate.notified().await;
                Ok(None)
            }
        })
        .unwrap();
    let id = q.enqueue("job", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let first = first.start();
    first.ready().await.unwrap();
    eventually(5, "claim and start reported", || async {
        clock.advance(10);
        let job = q.get_job(id.as_str()).await.unwrap().unwrap();
        job.worker_id.as_deref() == Some("zombie") && job.heartbeat_at > job.started_at
    })
    .await;
    clock.advance(60_000);
    let rescuer = Rescuer::new(&q, RescueConfig { stale_after: Duration::from_secs(30) }).unwrap();
    assert_eq!(rescuer.run_once().await.unwrap().released, vec![id.clone()]);
    let addr = first.metrics_addr().unwrap();
    eventually(5, "lease loss counted", || async {
        let s = parse(&scrape(addr).await);
        value(&s, "flexiq_worker_leases_lost_total", &[("worker", "zombie")]) == 1.0
    })
    .await;
    release.notify_one();
    eventually(5, "superseded ack", || async { first.counters().superseded == 1 }).await;
    let s = parse(&scrape(addr).await);
    assert_eq!(value(&s, "flexiq_worker_superseded_acks_total", &[("worker", "zombie")]), 1.0);
    assert_eq!(value(&s, "flexiq_worker_leases_lost_total", &[("worker", "zombie")]), 1.0);
    first.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_worker_whose_metrics_address_is_taken_fails_to_start() {
    let q = open().await;
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bind = taken.local_addr().unwrap();
    let config = WorkerConfig { metrics_bind: Some(bind), ..quiet_config() };
    let running = Worker::new(q.clone(), config).unwrap().start();
    assert!(running.ready().await.is_err());
    let err = running.join().await.unwrap_err().to_string();
    assert!(err.contains(&bind.to_string()), "{err}");
}
