//! Closing the store leaves nothing of it running on the server: a statement still waiting
//! there, whether its caller is still waiting for it or gave up on it, ends at close instead
//! of holding its locks until whatever blocks it moves on.

use std::time::{Duration, Instant};

use flexiq_core::store::{EnqueueRequest, Enqueued, JobStore};
use flexiq_core::{JobId, Result, Store};
use flexiq_store_pg::PgStore;
use tokio::task::JoinHandle;

use crate::common::{admin, drop_schema, enqueue_n, fresh_schema, job_on, open};

/// The store's backends (its pooled connections, not its listener) and how many of them wait
/// for a lock.
async fn backends(admin: &tokio_postgres::Client, schema: &str) -> (i64, i64) {
    let name: String = format!("flexiq {schema}").chars().take(63).collect();
    let row = admin
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Lock') \
             FROM pg_stat_activity WHERE application_name = $1",
            &[&name],
        )
        .await
        .unwrap();
    (row.get(0), row.get(1))
}

/// Polls `backends` until `done` holds or `limit` passes; returns the last reading.
async fn wait_for(
    admin: &tokio_postgres::Client,
    schema: &str,
    limit: Duration,
    done: impl Fn((i64, i64)) -> bool,
) -> (i64, i64) {
    let start = Instant::now();
    loop {
        let seen = backends(admin, schema).await;
        if done(seen) || start.elapsed() > limit {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An admin session that holds the jobs table of `schema` until it rolls back.
async fn hold_jobs(schema: &str) -> tokio_postgres::Client {
    let locker = admin().await;
    locker
        .batch_execute(&format!("BEGIN; LOCK TABLE \"{schema}\".jobs IN ACCESS EXCLUSIVE MODE"))
        .await
        .unwrap();
    locker
}

/// One enqueue on `s`, in a task of its own.
fn enqueue_one(s: &PgStore, now: i64) -> JoinHandle<Result<Vec<Enqueued>>> {
    let s = s.clone();
    tokio::spawn(async move {
        s.enqueue(EnqueueRequest { jobs: vec![job_on("q", now)], now, max_pending: None }).await
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_ends_the_statements_the_store_still_runs_on_the_server() {
    let schema = fresh_schema("close");
    let s = open(&schema, 4).await;
    let now = 1_000_000;
    enqueue_n(&s, "q", 3, now).await;

    // Another session holds the jobs table, so the store's statements wait on the server.
    let locker = hold_jobs(&schema).await;
    // One caller still waits for its enqueue; another gave up on its read.
    let waiting = enqueue_one(&s, now);
    let gave_up = tokio::spawn({
        let s = s.clone();
        async move { s.get(&JobId::new()).await }
    });
    let watch = admin().await;
    let seen = wait_for(&watch, &schema, Duration::from_secs(10), |(_, locked)| locked == 2).await;
    assert_eq!(seen.1, 2, "both statements wait for the lock: {seen:?}");
    gave_up.abort();
    assert!(gave_up.await.unwrap_err().is_cancelled());
    assert_eq!(s.connections_in_use(), 1, "the abandoned read gave its connection back");

    s.close().await.unwrap();
    let seen = wait_for(&watch, &schema, Duration::from_secs(5), |(n, _)| n == 0).await;
    assert_eq!(seen, (0, 0), "the store's statements still run on the server after close");
    let e = waiting.await.unwrap().unwrap_err();
    assert!(e.to_string().contains("cancel"), "the waiting enqueue is told it was cancelled: {e}");

    // The cancelled enqueue wrote nothing.
    locker.batch_execute("ROLLBACK").await.unwrap();
    let row = watch.query_one(&format!("SELECT count(*) FROM \"{schema}\".jobs"), &[]).await.unwrap();
    assert_eq!(row.get::<_, i64>(0), 3);
    drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_that_finishes_as_the_store_closes_is_kept() {
    let schema = fresh_schema("closekeep");
    let s = open(&schema, 2).await;
    let now = 1_000_000;
    let locker = hold_jobs(&schema).await;
    let waiting = enqueue_one(&s, now);
    let watch = admin().await;
    let seen = wait_for(&watch, &schema, Duration::from_secs(10), |(_, locked)| locked == 1).await;
    assert_eq!(seen.1, 1, "the enqueue waits for the lock: {seen:?}");
    // The lock goes a moment after close begins: the enqueue commits within close's grace.
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        locker.batch_execute("ROLLBACK").await.unwrap();
    });
    s.close().await.unwrap();
    release.await.unwrap();
    let ids = waiting.await.unwrap().expect("the enqueue in flight at close is kept");
    assert_eq!(ids.len(), 1);
    let row = watch.query_one(&format!("SELECT count(*) FROM \"{schema}\".jobs"), &[]).await.unwrap();
    assert_eq!(row.get::<_, i64>(0), 1);
    drop_schema(&schema).await;
}
