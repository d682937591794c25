//! Helpers shared by the integration tests: a fresh SQLite file per test, fast worker
//! settings, and direct store calls to put jobs into a given state.

use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::core::store::{Ack, AckKind, AckRequest, ClaimRequest};
use flexiq_runtime::services::{ElectorConfig, MaintenanceConfig, RescueConfig};
use flexiq_runtime::{
    connect, Backoff, ClaimedJob, ConnectOptions, EnqueueOptions, JobId, ManualClock, Queue, WorkerConfig,
};
use tempfile::TempDir;

/// A queue on a fresh SQLite file; the directory lives as long as this value.
pub(crate) struct TestQueue {
    pub(crate) queue: Queue,
    pub(crate) url: String,
    _dir: TempDir,
}

impl std::ops::Deref for TestQueue {
    type Target = Queue;
    fn deref(&self) -> &Queue {
        &self.queue
    }
}

/// A queue with default options on a fresh file.
pub(crate) async fn open() -> TestQueue {
    open_with(ConnectOptions::default()).await
}

/// A queue with `opts` on a fresh file.
pub(crate) async fn open_with(opts: ConnectOptions) -> TestQueue {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("q.db").display());
    let queue = connect(&url, opts).await.unwrap();
    TestQueue { queue, url, _dir: dir }
}

/// Start of every manual clock (Unix ms).
pub(crate) const T0: i64 = 1_700_000_000_000;

/// The same queue reading a manual clock at `T0`.
pub(crate) fn manual(q: &Queue) -> (Queue, ManualClock) {
    let clock = ManualClock::new(T0);
    (q.with_clock(Arc::new(clock.clone())), clock)
}

/// Worker settings for tests: small intervals, short lease, quick shutdown.
pub(crate) fn fast_config() -> WorkerConfig {
    WorkerConfig {
        concurrency: 4,
        prefetch: Some(2),
        heartbeat_interval: Duration::from_millis(50),
        poll_interval: Duration::from_millis(50),
        shutdown_timeout: Duration::from_secs(5),
        maintenance: Some(MaintenanceConfig {
            interval: Duration::from_millis(100),
            elector: ElectorConfig { ttl: Duration::from_secs(1), ..Default::default() },
            rescue: RescueConfig { stale_after: Duration::from_millis(500) },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Worker settings for crash tests: short leases, so a killed worker's jobs come back within
/// a second, with its own id, slots and prefetch buffer.
pub(crate) fn crash_config(id: &str, concurrency: u32, prefetch: u32) -> WorkerConfig {
    WorkerConfig {
        worker_id: Some(id.into()),
        concurrency,
        prefetch: Some(prefetch),
        heartbeat_interval: Duration::from_millis(100),
        poll_interval: Duration::from_millis(50),
        shutdown_timeout: Duration::from_secs(5),
        maintenance: Some(MaintenanceConfig {
            interval: Duration::from_millis(100),
            elector: ElectorConfig { ttl: Duration::from_millis(500), ..Default::default() },
            rescue: RescueConfig { stale_after: Duration::from_millis(400) },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Worker settings without maintenance (tests drive the services themselves).
pub(crate) fn quiet_config() -> WorkerConfig {
    WorkerConfig { maintenance: None, ..fast_config() }
}

/// Options that retry at once.
pub(crate) fn retries(max: u32) -> EnqueueOptions {
    EnqueueOptions { max_retries: Some(max), backoff: Some(Backoff::NONE), ..Default::default() }
}

/// Claims up to `limit` jobs straight from the store at the queue's clock.
pub(crate) async fn claim(q: &Queue, limit: u32) -> Vec<ClaimedJob> {
    q.store()
        .claim(ClaimRequest { queues: vec![], limit, worker_id: "test-claimer".into(), now: q.now_ms() })
        .await
        .unwrap()
}

/// Claims the one pending job and acks it with `kind`.
pub(crate) async fn finish(q: &Queue, kind: AckKind) -> JobId {
    let c = claim(q, 1).await.pop().expect("a claimable job");
    let id = c.job.id.clone();
    let acks = vec![Ack { job_id: id.clone(), fence: c.fence, kind }];
    q.store().ack(AckRequest { acks, now: q.now_ms() }).await.unwrap();
    id
}

/// Enqueues a job with no retries, claims it and fails it retryably, so it is dead-lettered.
pub(crate) async fn make_dead(q: &Queue, task: &str) -> JobId {
    q.enqueue(task, b"p".to_vec(), retries(0)).await.unwrap();
    finish(q, AckKind::Fail { error: format!("{task} broke"), retryable: true }).await
}

/// Polls `check` every 10 ms until it holds or `secs` pass.
pub(crate) async fn eventually<F, Fut>(secs: u64, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts that a result is an error with `code`.
#[macro_export]
macro_rules! assert_code {
    ($e:expr, $code:expr) => {
        match $e {
            Ok(v) => panic!("expected {} error, got Ok({:?})", $code, v),
            Err(e) => assert_eq!(e.code(), $code, "{e}"),
        }
    };
}

/// Runs each named `async fn(&Queue)` on SQLite, and on PostgreSQL and Redis with their features.
#[macro_export]
macro_rules! on_every_store {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                let b = $crate::backends::sqlite().await;
                super::$name(b.queue()).await;
                b.cleanup().await;
            }

            #[cfg(feature = "postgres")]
            #[tokio::test]
            async fn postgres() {
                let b = $crate::backends::postgres().await;
                super::$name(b.queue()).await;
                b.cleanup().await;
            }

            #[cfg(feature = "redis")]
            #[tokio::test]
            async fn redis() {
                let b = $crate::backends::redis().await;
                super::$name(b.queue()).await;
                b.cleanup().await;
            }
        }
    )*};
}
