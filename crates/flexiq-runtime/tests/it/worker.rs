//! The worker: handlers, retries, timeouts, cancellation, panics, limits, shutdown.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::{
    CancelReason, EnqueueOptions, Error, HandlerError, JobStatus, TaskOptions, Worker, WorkerConfig,
};

use crate::assert_code;
use crate::common::{eventually, open, quiet_config, retries};

const SECS_10: Option<Duration> = Some(Duration::from_secs(10));

#[tokio::test]
async fn handler_result_is_stored() {
    let q = open().await;
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    w.register("echo", |ctx| async move { Ok(Some(ctx.payload().to_vec())) }).unwrap();
    let running = w.start();
    let id = q.enqueue("echo", b"ping".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_eq!(q.result(id.as_str(), SECS_10, None).await.unwrap().as_deref(), Some(&b"ping"[..]));
    let counters = running.shutdown().await.unwrap();
    assert_eq!((counters.succeeded, counters.acknowledged), (1, 1));
}

#[tokio::test]
async fn retryable_errors_retry_then_dead_letter() {
    let q = open().await;
    let calls = Arc::new(AtomicU32::new(0));
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    let c = calls.clone();
    w.register("flaky", move |ctx| {
        let c = c.clone();
        async move {
            c.fetch_add(1, Ordering::SeqCst);
            Err(HandlerError::retryable(format!("attempt {} failed", ctx.attempt())))
        }
    })
    .unwrap();
    let running = w.start();
    let id = q.enqueue("flaky", b"".to_vec(), retries(2)).await.unwrap();
    let e = q.result(id.as_str(), SECS_10, None).await.unwrap_err();
    running.shutdown().await.unwrap();
    assert!(matches!(e, Error::JobFailed { status: JobStatus::Dead, .. }), "{e:?}");
    assert_eq!(e.job_error(), Some("attempt 3 failed"));
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(q.get_job_errors(id.as_str()).await.unwrap().len(), 3);
    assert_eq!(q.dead_letters(10, 0).await.unwrap().len(), 1);
}

#[tokio::test]
async fn fatal_errors_fail_without_retrying() {
    let q = open().await;
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    w.register("bad", |_| async { Err(HandlerError::fatal("bad input")) }).unwrap();
    let running = w.start();
    let id = q.enqueue("bad", b"".to_vec(), retries(5)).await.unwrap();
    let e = q.result(id.as_str(), SECS_10, None).await.unwrap_err();
    running.shutdown().await.unwrap();
    assert!(matches!(e, Error::JobFailed { status: JobStatus::Failed, .. }), "{e:?}");
    assert_eq!(q.get_job(id.as_str()).await.unwrap().unwrap().attempt, 1);
}

#[tokio::test]
async fn unknown_tasks_fail_non_retryably_with_a_clear_error() {
    let q = open().await;
    let mut w =
        Worker::new(q.queue.clone(), WorkerConfig { worker_id: Some("w-known".into()), ..quiet_config() })
            .unwrap();
    w.register("known", |_| async { Ok(None) }).unwrap();
    let running = w.start();
    let id = q.enqueue("mystery", b"".to_vec(), retries(3)).await.unwrap();
    let e = q.result(id.as_str(), SECS_10, None).await.unwrap_err();
    running.shutdown().await.unwrap();
    assert_eq!(e.code(), "JOB_FAILED");
    let msg = e.job_error().unwrap();
    assert!(msg.contains("no handler registered for task mystery") && msg.contains("w-known"), "{msg}");
}

#[tokio::test]
async fn a_panicking_handler_fails_its_attempt_not_the_worker() {
    let q = open().await;
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    w.register("panics", |_| async { panic!("kaboom") }).unwrap();
    w.register("fine", |_| async { Ok(Some(b"ok".to_vec())) }).unwrap();
    let running = w.start();
    let bad = q.enqueue("panics", b"".to_vec(), retries(0)).await.unwrap();
    let e = q.result(bad.as_str(), SECS_10, None).await.unwrap_err();
    assert!(e.job_error().unwrap().contains("panicked: kaboom"), "{e}");
    let good = q.enqueue("fine", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_eq!(q.result(good.as_str(), SECS_10, None).await.unwrap().as_deref(), Some(&b"ok"[..]));
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn hard_timeout_cancels_the_handler_and_fails_retryably() {
    let q = open().await;
    let reasons = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    let r = reasons.clone();
    w.register("slow", move |ctx| {
        let r = r.clone();
        async move {
            let token = ctx.cancellation().clone();
            let watcher = ctx.clone();
            tokio::spawn(async move {
                token.cancelled().await;
                r.lock().push(watcher.cancel_reason());
            });
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(None)
        }
    })
    .unwrap();
    let running = w.start();
    let opts = EnqueueOptions { timeout_ms: Some(50), ..retries(1) };
    let id = q.enqueue("slow", b"".to_vec(), opts).await.unwrap();
    let e = q.result(id.as_str(), SECS_10, None).await.unwrap_err();
    running.shutdown().await.unwrap();
    assert!(e.job_error().unwrap().starts_with("timeout:"), "{e}");
    assert_eq!(q.get_job_errors(id.as_str()).await.unwrap().len(), 2, "the timeout was retried");
    eventually(5, "cancel reasons", || async { reasons.lock().len() == 2 }).await;
    assert!(reasons.lock().iter().all(|r| *r == Some(CancelReason::HardTimeout)));
}

#[tokio::test]
async fn soft_timeout_signals_the_handler() {
    let q = open().await;
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    let opts =
        TaskOptions { soft_timeout: Some(Duration::from_millis(30)), timeout: Some(Duration::from_secs(30)) };
    w.register_with("long", opts, |ctx| async move {
        ctx.soft_timeout().cancelled().await;
        Ok(Some(b"wrapped up".to_vec()))
    })
    .unwrap();
    let running = w.start();
    let id = q.enqueue("long", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    assert_eq!(q.result(id.as_str(), SECS_10, None).await.unwrap().as_deref(), Some(&b"wrapped up"[..]));
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn cooperative_cancel_reaches_the_running_handler() {
    let q = open().await;
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    w.register("waits", |ctx| async move {
        ctx.cancellation().cancelled().await;
        assert_eq!(ctx.cancel_reason(), Some(CancelReason::Requested));
        Err(HandlerError::fatal("stopped on request"))
    })
    .unwrap();
    let running = w.start();
    let id = q.enqueue("waits", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    eventually(5, "job running", || async {
        q.get_job(id.as_str()).await.unwrap().unwrap().status == JobStatus::Running
    })
    .await;
    assert!(q.request_cancel(id.as_str()).await.unwrap());
    let e = q.result(id.as_str(), SECS_10, None).await.unwrap_err();
    let counters = running.shutdown().await.unwrap();
    assert_eq!(e.code(), "JOB_CANCELLED");
    assert!(e.job_error().unwrap().contains("stopped on request"));
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Cancelled, "a handler stopping on request cancels the job");
    assert_eq!((counters.cancelled, counters.failed), (1, 0));
}

#[tokio::test]
async fn concurrency_limit_and_queue_selection_hold() {
    let q = open().await;
    let (now, peak) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let config = WorkerConfig { concurrency: 3, queues: vec!["mine".into()], ..quiet_config() };
    let mut w = Worker::new(q.queue.clone(), config).unwrap();
    let (n, p) = (now.clone(), peak.clone());
    w.register("work", move |_| {
        let (n, p) = (n.clone(), p.clone());
        async move {
            let cur = n.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(cur, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            n.fetch_sub(1, Ordering::SeqCst);
            Ok(None)
        }
    })
    .unwrap();
    let other = q.enqueue(
        "work",
        b"".to_vec(),
        EnqueueOptions { queue: Some("theirs".into()), ..Default::default() },
    );
    let other = other.await.unwrap();
    let mut ids = Vec::new();
    for _ in 0..12 {
        let opts = EnqueueOptions { queue: Some("mine".into()), ..Default::default() };
        ids.push(q.enqueue("work", b"".to_vec(), opts).await.unwrap());
    }
    let running = w.start();
    for id in &ids {
        q.result(id.as_str(), SECS_10, None).await.unwrap();
    }
    running.shutdown().await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 3);
    assert_eq!(q.get_job(other.as_str()).await.unwrap().unwrap().status, JobStatus::Pending);
}

#[tokio::test]
async fn registration_and_config_errors_are_typed() {
    let q = open().await;
    assert_code!(
        Worker::new(q.queue.clone(), WorkerConfig { concurrency: 0, ..quiet_config() }),
        "INVALID_ARGUMENT"
    );
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    w.register("a", |_| async { Ok(None) }).unwrap();
    assert_code!(w.register("a", |_| async { Ok(None) }).map(|_| ()), "INVALID_ARGUMENT");
    assert_code!(w.register("", |_| async { Ok(None) }).map(|_| ()), "INVALID_ARGUMENT");
    let bad = TaskOptions { timeout: Some(Duration::ZERO), soft_timeout: None };
    assert_code!(w.register_with("b", bad, |_| async { Ok(None) }).map(|_| ()), "INVALID_ARGUMENT");
    assert_eq!(w.tasks(), ["a"]);
}

#[tokio::test]
async fn graceful_shutdown_finishes_running_work_and_returns_the_rest() {
    let q = open().await;
    let config = WorkerConfig { concurrency: 2, prefetch: Some(4), ..quiet_config() };
    let mut w = Worker::new(q.queue.clone(), config).unwrap();
    w.register("nap", |_| async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(None)
    })
    .unwrap();
    for _ in 0..20 {
        q.enqueue("nap", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    }
    let running = w.start();
    eventually(5, "work started", || async { q.stats().await.unwrap().running > 0 }).await;
    let counters = running.shutdown().await.unwrap();
    let s = q.stats().await.unwrap();
    assert_eq!(s.running, 0, "{s:?}");
    assert_eq!(s.completed + s.pending, 20, "{s:?}");
    assert_eq!(s.completed, counters.succeeded);
    assert!(counters.given_back > 0, "{counters:?}");
}

#[tokio::test]
async fn shutdown_deadline_gives_back_stuck_handlers() {
    let q = open().await;
    let config =
        WorkerConfig { concurrency: 2, shutdown_timeout: Duration::from_millis(100), ..quiet_config() };
    let mut w = Worker::new(q.queue.clone(), config).unwrap();
    w.register("stuck", |_| async {
        tokio::time::sleep(Duration::from_secs(3_600)).await;
        Ok(None)
    })
    .unwrap();
    let id = q.enqueue("stuck", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let running = w.start();
    eventually(5, "job running", || async {
        q.get_job(id.as_str()).await.unwrap().unwrap().status == JobStatus::Running
    })
    .await;
    let counters = running.shutdown().await.unwrap();
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!((job.status, job.attempt), (JobStatus::Pending, 0), "given back with its attempt returned");
    assert_eq!(counters.given_back, 1);
}

#[tokio::test]
async fn ready_resolves_once_the_worker_claims_and_errors_when_it_stopped_first() {
    let q = open().await;
    let mut w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    w.register("t", |_| async { Ok(Some(b"done".to_vec())) }).unwrap();
    let handle = w.start();
    handle.ready().await.unwrap();
    let workers = q.list_workers().await.unwrap();
    assert!(workers.iter().any(|i| i.id == handle.id()), "a ready worker is registered");
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let got = q.result(id.as_str(), Some(Duration::from_secs(10)), None).await.unwrap();
    assert_eq!(got.as_deref(), Some(&b"done"[..]));
    handle.shutdown().await.unwrap();

    q.close().await.unwrap();
    let w = Worker::new(q.queue.clone(), quiet_config()).unwrap();
    let handle = w.start();
    let err = handle.ready().await.unwrap_err();
    assert_eq!(err.code(), "CLOSED", "{err}");
    assert!(err.to_string().contains(handle.id()), "{err}");
    let _ = handle.join().await;
}

#[tokio::test]
async fn a_worker_with_more_room_than_one_claim_page_still_claims() {
    let q = open().await;
    let config = WorkerConfig {
        concurrency: flexiq_runtime::MAX_CONCURRENCY,
        prefetch: Some(flexiq_runtime::MAX_CONCURRENCY),
        ..quiet_config()
    };
    let mut w = Worker::new(q.queue.clone(), config).unwrap();
    w.register("t", |_| async { Ok(None) }).unwrap();
    let running = w.start();
    let ready = tokio::time::timeout(Duration::from_secs(10), running.ready()).await;
    assert!(matches!(ready, Ok(Ok(()))), "claims of more than a page must not fail: {ready:?}");
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    q.result(id.as_str(), SECS_10, None).await.unwrap();
    let counters = running.shutdown().await.unwrap();
    assert_eq!(counters.succeeded, 1);
}
