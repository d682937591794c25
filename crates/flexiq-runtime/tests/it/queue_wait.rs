//! Awaiting results and streaming partials.

use std::time::Duration;

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::{EnqueueOptions, Error, JobStatus, Worker};
use futures::StreamExt;

use crate::assert_code;
use crate::common::{claim, finish, open, quiet_config, retries};

const UNKNOWN: &str = "0190aaaa-0000-7000-8000-000000000000";
const SECS_5: Option<Duration> = Some(Duration::from_secs(5));

#[tokio::test]
async fn result_wakes_when_the_job_completes() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let waiter = {
        let q = q.queue.clone();
        let id = id.clone();
        tokio::spawn(async move { q.result(id.as_str(), SECS_5, None).await })
    };
    tokio::task::yield_now().await;
    finish(&q, AckKind::Complete { result: Some(b"r".to_vec()) }).await;
    assert_eq!(waiter.await.unwrap().unwrap().as_deref(), Some(&b"r"[..]));
}

#[tokio::test]
async fn result_of_a_failed_job_is_job_failed_with_its_error() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), retries(0)).await.unwrap();
    finish(&q, AckKind::Fail { error: "disk full".into(), retryable: true }).await;
    match q.result(id.as_str(), SECS_5, None).await {
        Err(Error::JobFailed { status, error, .. }) => {
            assert_eq!(status, JobStatus::Dead);
            assert_eq!(error.as_deref(), Some("disk full"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn result_of_a_cancelled_job_is_job_cancelled() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    q.cancel_job(id.as_str()).await.unwrap();
    let e = q.result(id.as_str(), SECS_5, None).await.unwrap_err();
    assert_eq!(e.code(), "JOB_CANCELLED");
}

#[tokio::test]
async fn result_times_out_and_refuses_bad_arguments() {
    let q = open().await;
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_code!(q.result(id.as_str(), Some(Duration::from_millis(50)), None).await, "TIMEOUT");
    assert_code!(q.result(id.as_str(), SECS_5, Some(Duration::ZERO)).await, "INVALID_ARGUMENT");
    assert_code!(q.result(UNKNOWN, SECS_5, None).await, "NOT_FOUND");
    assert_code!(q.result("x", SECS_5, None).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn stream_yields_every_partial_in_order_then_ends() {
    let q = open().await;
    let id = q.enqueue("gen", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let mut worker = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    worker
        .register("gen", |ctx| async move {
            for i in 0..50u32 {
                ctx.publish_partial(i.to_le_bytes().to_vec()).await?;
                if i % 10 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            Ok(None)
        })
        .unwrap();
    let stream =
        q.stream(id.as_str(), Some(Duration::from_secs(10)), Some(Duration::from_millis(20))).unwrap();
    let running = worker.start();
    let items: Vec<_> = stream.collect().await;
    running.shutdown().await.unwrap();
    let seqs: Vec<u64> = items.iter().map(|p| p.as_ref().unwrap().seq).collect();
    assert_eq!(seqs, (1..=50).collect::<Vec<_>>());
    let data: Vec<u32> = items
        .iter()
        .map(|p| u32::from_le_bytes(p.as_ref().unwrap().data.clone().try_into().unwrap()))
        .collect();
    assert_eq!(data, (0..50).collect::<Vec<_>>());
}

#[tokio::test]
async fn stream_reports_unknown_jobs_timeouts_and_bad_ids() {
    let q = open().await;
    let items: Vec<_> = q.stream(UNKNOWN, SECS_5, None).unwrap().collect().await;
    assert_eq!(items.len(), 1);
    assert_code!(items.into_iter().next().unwrap(), "NOT_FOUND");
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    claim(&q, 1).await;
    q.publish_partial(id.as_str(), b"a".to_vec()).await.unwrap();
    let items: Vec<_> = q.stream(id.as_str(), Some(Duration::from_millis(50)), None).unwrap().collect().await;
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].as_ref().unwrap().data, b"a");
    assert_code!(items.into_iter().nth(1).unwrap(), "TIMEOUT");
    assert!(q.stream("nope", SECS_5, None).is_err());
    assert!(q.stream(id.as_str(), SECS_5, Some(Duration::ZERO)).is_err());
}
