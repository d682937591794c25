//! Public entry points: URL and option validation, namespaces, the server clock, closing and
//! wake-ups.

use std::time::{Duration, Instant};

use flexiq_core::store::{
    CancelRequest, ClaimRequest, EnqueueRequest, Inspect, JobStore, QueueControl, WaitForJobRequest,
    WaitForWorkRequest,
};
use flexiq_core::{EnqueueOptions, NewJob, Store};
use flexiq_store_redis::{RedisOptions, RedisStore};

use crate::harness::{redis_url, RedisHarness};

fn job(at: i64, delay_ms: Option<u64>) -> NewJob {
    NewJob::build("t", b"x".to_vec(), EnqueueOptions { delay_ms, ..Default::default() }, at).unwrap()
}

fn wall() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

#[tokio::test]
async fn connect_refuses_other_schemes_and_bad_options() {
    for url in
        ["ftp://127.0.0.1", "127.0.0.1:6379", "", "valkey://127.0.0.1:6379", "redis+unix:///tmp/r.sock"]
    {
        let err = RedisStore::connect(url, RedisOptions::default()).await.unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{url}");
    }
    let bad = RedisOptions { namespace: "a{b}".into(), ..Default::default() };
    assert_eq!(RedisStore::connect(&redis_url(), bad).await.unwrap_err().code(), "INVALID_ARGUMENT");
}

#[tokio::test]
async fn connect_to_a_closed_port_is_a_backend_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        RedisStore::connect(&format!("redis://127.0.0.1:{port}"), RedisOptions::default()),
    )
    .await
    .expect("connect gives up")
    .unwrap_err();
    assert_eq!(err.code(), "BACKEND");
}

#[tokio::test]
async fn namespaces_share_connections_but_not_jobs() {
    let h = RedisHarness::new();
    let a = h.store("alpha").await.unwrap();
    let b = a.with_namespace("beta").unwrap();
    assert_eq!((a.namespace(), b.namespace(), b.backend()), ("alpha", "beta", "redis"));
    assert_eq!(a.with_namespace("").unwrap_err().code(), "INVALID_ARGUMENT");
    a.enqueue(EnqueueRequest { jobs: vec![job(1_000, None)], max_pending: None, now: 1_000 }).await.unwrap();
    assert_eq!(a.count_pending("default").await.unwrap(), 1);
    assert_eq!(b.count_pending("default").await.unwrap(), 0);
    h.cleanup_now().await;
}

#[tokio::test]
async fn server_clock_is_unix_ms() {
    let h = RedisHarness::new();
    let s = h.store("clock").await.unwrap();
    let t = s.server_now_ms().await.unwrap();
    assert!((t - wall()).abs() < 60_000, "server clock {t} vs wall {}", wall());
    h.cleanup_now().await;
}

#[tokio::test]
async fn a_closed_handle_says_closed() {
    let h = RedisHarness::new();
    let s = h.store("closing").await.unwrap();
    let sibling = s.with_namespace("other").unwrap();
    s.close().await.unwrap();
    assert_eq!(s.count_pending("q").await.unwrap_err().code(), "CLOSED");
    assert_eq!(sibling.paused_queues().await.unwrap_err().code(), "CLOSED");
    assert_eq!(s.with_namespace("x").unwrap_err().code(), "CLOSED");
    h.cleanup_now().await;
}

#[tokio::test]
async fn an_idle_claimer_wakes_on_an_enqueue_from_another_connection() {
    let h = RedisHarness::new();
    let producer = h.store("wake").await.unwrap();
    let consumer = h.store("wake").await.unwrap();
    consumer.wait_for_work(WaitForWorkRequest { queues: vec![], timeout_ms: 1 }).await.unwrap();
    let waiter = tokio::spawn({
        let consumer = consumer.clone();
        async move {
            let start = Instant::now();
            consumer.wait_for_work(WaitForWorkRequest { queues: vec![], timeout_ms: 20_000 }).await.unwrap();
            start.elapsed()
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let now = wall();
    producer.enqueue(EnqueueRequest { jobs: vec![job(now, None)], max_pending: None, now }).await.unwrap();
    let waited = waiter.await.unwrap();
    assert!(waited < Duration::from_secs(10), "woke after {waited:?}");
    let got =
        consumer.claim(ClaimRequest { queues: vec![], limit: 1, worker_id: "w".into(), now }).await.unwrap();
    assert_eq!(got.len(), 1);
    h.cleanup_now().await;
}

#[tokio::test]
async fn wait_for_work_returns_when_a_delayed_job_comes_due() {
    let h = RedisHarness::new();
    let s = h.store("delayed").await.unwrap();
    let now = wall();
    s.enqueue(EnqueueRequest { jobs: vec![job(now, Some(300))], max_pending: None, now }).await.unwrap();
    let start = Instant::now();
    s.wait_for_work(WaitForWorkRequest { queues: vec!["default".into()], timeout_ms: 20_000 }).await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(10), "waited {:?}", start.elapsed());
    let got =
        s.claim(ClaimRequest { queues: vec![], limit: 1, worker_id: "w".into(), now: wall() }).await.unwrap();
    assert_eq!(got.len(), 1);
    h.cleanup_now().await;
}

#[tokio::test]
async fn wait_for_job_wakes_on_a_change_from_another_connection() {
    let h = RedisHarness::new();
    let a = h.store("watch").await.unwrap();
    let b = h.store("watch").await.unwrap();
    let now = wall();
    let id = a.enqueue(EnqueueRequest { jobs: vec![job(now, None)], max_pending: None, now }).await.unwrap()
        [0]
    .id
    .clone();
    let watcher = tokio::spawn({
        let a = a.clone();
        let id = id.clone();
        async move {
            let start = Instant::now();
            a.wait_for_job(WaitForJobRequest { id, timeout_ms: 20_000 }).await.unwrap();
            start.elapsed()
        }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(b.cancel(CancelRequest { id, now }).await.unwrap());
    assert!(watcher.await.unwrap() < Duration::from_secs(10));
    h.cleanup_now().await;
}
