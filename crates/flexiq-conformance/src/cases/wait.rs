//! Waiting for work and for a job: wakes promptly on a change, returns by the timeout otherwise.
//! Bounds are generous on purpose: these check wake-ups happen, not how fast.

use std::time::{Duration, Instant};

use flexiq_core::store::{PublishPartialRequest, RequeueRequest, WaitForJobRequest, WaitForWorkRequest};

use crate::fixtures::{at, complete, job, job_in, now, open, put, start};
use crate::Harness;

const LONG_MS: u64 = 20_000;
const PROMPT: Duration = Duration::from_secs(2);

/// An enqueue from another task wakes a waiter long before its timeout.
pub async fn wait_for_work_wakes_on_enqueue(h: &dyn Harness) {
    let s = open(h, "default").await;
    let producer = s.clone();
    let queues = vec!["q".to_string()];
    let started = Instant::now();
    let (waited, _) = tokio::join!(
        s.wait_for_work(WaitForWorkRequest { queues: queues.clone(), timeout_ms: LONG_MS }),
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            put(&*producer, job_in("q", "t"), now()).await
        }
    );
    waited.unwrap();
    assert!(started.elapsed() < PROMPT, "woke after {:?}", started.elapsed());
}

/// An enqueue through another handle on the namespace also wakes the waiter.
pub async fn wait_for_work_wakes_on_enqueue_from_other_handle(h: &dyn Harness) {
    let s = open(h, "default").await;
    let producer = open(h, "default").await;
    let started = Instant::now();
    let (waited, _) = tokio::join!(
        s.wait_for_work(WaitForWorkRequest { queues: vec![], timeout_ms: LONG_MS }),
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            put(&*producer, job("t", ""), now()).await
        }
    );
    waited.unwrap();
    assert!(started.elapsed() < PROMPT, "woke after {:?}", started.elapsed());
}

/// With nothing happening, `wait_for_work` returns by its timeout, without error.
pub async fn wait_for_work_returns_by_timeout(h: &dyn Harness) {
    let s = open(h, "default").await;
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        s.wait_for_work(WaitForWorkRequest { queues: vec!["q".to_string()], timeout_ms: 200 }),
    )
    .await;
    r.expect("wait_for_work did not return by its timeout").unwrap();
}

/// Completing a job wakes a waiter on that job.
pub async fn wait_for_job_wakes_on_completion(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let worker = s.clone();
    let id = c.job.id.clone();
    let started = Instant::now();
    let (waited, _) =
        tokio::join!(s.wait_for_job(WaitForJobRequest { id: id.clone(), timeout_ms: LONG_MS }), async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            complete(&*worker, &c, Some(b"done"), at(1)).await
        });
    waited.unwrap();
    assert!(started.elapsed() < PROMPT, "woke after {:?}", started.elapsed());
    assert_eq!(s.get_result(&id).await.unwrap().as_deref(), Some(&b"done"[..]));
}

/// With nothing happening to the job, `wait_for_job` returns by its timeout, without error.
pub async fn wait_for_job_returns_by_timeout(h: &dyn Harness) {
    let s = open(h, "default").await;
    let id = put(&*s, job("t", ""), now()).await;
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        s.wait_for_job(WaitForJobRequest { id: id.clone(), timeout_ms: 200 }),
    )
    .await;
    r.expect("wait_for_job did not return by its timeout").unwrap();
}

/// A partial published for a job wakes a waiter on that job.
pub async fn wait_for_job_wakes_on_partial(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), now()).await;
    let worker = s.clone();
    let id = c.job.id.clone();
    let started = Instant::now();
    let (waited, _) =
        tokio::join!(s.wait_for_job(WaitForJobRequest { id: id.clone(), timeout_ms: LONG_MS }), async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            worker
                .publish_partial(PublishPartialRequest {
                    id: c.job.id.clone(),
                    data: b"chunk".to_vec(),
                    now: at(1),
                })
                .await
                .unwrap()
        });
    waited.unwrap();
    assert!(started.elapsed() < PROMPT, "woke after {:?}", started.elapsed());
}

/// A running job requeued to pending wakes a waiter for work.
pub async fn wait_for_work_wakes_on_requeue(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job_in("q", "t"), now()).await;
    let operator = s.clone();
    let queues = vec!["q".to_string()];
    let started = Instant::now();
    let (waited, _) = tokio::join!(
        s.wait_for_work(WaitForWorkRequest { queues: queues.clone(), timeout_ms: LONG_MS }),
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(operator.requeue(RequeueRequest { id: c.job.id.clone(), now: at(1) }).await.unwrap());
        }
    );
    waited.unwrap();
    assert!(started.elapsed() < PROMPT, "woke after {:?}", started.elapsed());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_wait {
    ($callback:path, $make:path) => {
        $callback!($make;
            wait::wait_for_work_wakes_on_enqueue,
            wait::wait_for_work_wakes_on_enqueue_from_other_handle,
            wait::wait_for_work_returns_by_timeout,
            wait::wait_for_job_wakes_on_completion,
            wait::wait_for_job_returns_by_timeout,
            wait::wait_for_job_wakes_on_partial,
            wait::wait_for_work_wakes_on_requeue,
        );
    };
}
