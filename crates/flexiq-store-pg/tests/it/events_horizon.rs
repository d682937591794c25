//! The transaction horizon of the events stream: an event whose transaction is still open
//! holds back every later one, so a reader never skips it; a transaction that cannot write to
//! this schema does not hold readers back.

use std::time::{Duration, Instant};

use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::store::{EnqueueRequest, Events, JobStore, ReadEventsRequest};
use flexiq_store_pg::PgStore;

use crate::common::{admin, drop_schema, fresh_schema, job_on, now_ms, open};

/// Reads after `after` until `n` events came or 10 s passed.
pub(crate) async fn read_n(s: &PgStore, after: Option<String>, n: usize) -> Vec<QueueEvent> {
    let mut out: Vec<QueueEvent> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while out.len() < n && Instant::now() < deadline {
        let after = out.last().map(|e| e.id.clone()).or_else(|| after.clone());
        let read = ReadEventsRequest { after, block_ms: 1_000, limit: 1_000 };
        out.extend(s.read_events(read).await.unwrap());
    }
    out
}

async fn put(s: &PgStore, queue: &str) -> String {
    let j = job_on(queue, now_ms());
    let id = j.id.to_string();
    s.enqueue(EnqueueRequest { jobs: vec![j], max_pending: None, now: now_ms() }).await.unwrap();
    id
}

/// Inserts a pending job row by hand on `a`, inside whatever transaction `a` has open.
async fn insert_job(a: &tokio_postgres::Client, schema: &str) -> String {
    let id = uuid::Uuid::now_v7();
    let sql = format!(
        "INSERT INTO \"{schema}\".jobs (id, namespace, queue, task, payload, priority, status, max_retries, \
           backoff_base_ms, backoff_max_ms, created_at, run_at) \
         VALUES ($1, 'default', 'held', 't', '\\x7b7d', 0, 0, 3, 1000, 60000, $2, $2)"
    );
    a.execute(&sql, &[&id, &now_ms()]).await.unwrap();
    id.hyphenated().to_string()
}

#[tokio::test]
async fn an_open_transaction_holds_back_later_events_until_it_commits() {
    let schema = fresh_schema("evhz");
    let s = open(&schema, 4).await;
    let first = put(&s, "q").await;
    let seen = read_n(&s, None, 1).await;
    assert_eq!(seen[0].job_id.as_deref(), Some(first.as_str()));
    let cursor = seen[0].id.clone();

    // The held transaction writes its event first; the later one commits while it is open.
    let held = admin().await;
    held.batch_execute("BEGIN").await.unwrap();
    let early = insert_job(&held, &schema).await;
    let late = put(&s, "q").await;

    let read = ReadEventsRequest { after: Some(cursor.clone()), block_ms: 0, limit: 100 };
    assert!(s.read_events(read).await.unwrap().is_empty(), "the later event waits for the open transaction");
    assert_eq!(s.last_event_id().await.unwrap(), Some(cursor.clone()), "nor is it the newest yet");

    // A blocked reader returns both in order soon after the commit.
    let reader = {
        let (s, cursor) = (s.clone(), cursor.clone());
        tokio::spawn(async move {
            let got =
                s.read_events(ReadEventsRequest { after: Some(cursor), block_ms: 10_000, limit: 100 }).await;
            (got.unwrap(), Instant::now())
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!reader.is_finished(), "the reader waits while the transaction is open");
    held.batch_execute("COMMIT").await.unwrap();
    let committed = Instant::now();
    let (got, returned) = reader.await.unwrap();
    assert!(
        returned - committed < Duration::from_millis(500),
        "returned {:?} after the commit",
        returned - committed
    );
    let order: Vec<_> = got.iter().map(|e| (e.kind, e.job_id.clone().unwrap())).collect();
    assert_eq!(order, vec![(EventKind::Enqueued, early.clone()), (EventKind::Enqueued, late.clone())]);
    assert!(got[0].id < got[1].id && cursor < got[0].id, "ids sort in stream order");

    // Resuming from each id skips nothing and repeats nothing.
    let from = |after: &str| ReadEventsRequest { after: Some(after.to_string()), block_ms: 0, limit: 100 };
    let rest = s.read_events(from(&got[0].id)).await.unwrap();
    assert_eq!(rest.iter().map(|e| e.id.clone()).collect::<Vec<_>>(), vec![got[1].id.clone()]);
    assert!(s.read_events(from(&got[1].id)).await.unwrap().is_empty());
    assert_eq!(s.last_event_id().await.unwrap(), Some(got[1].id.clone()));
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn a_transaction_that_cannot_write_here_does_not_hold_readers_back() {
    let (schema, other) = (fresh_schema("evhz2"), fresh_schema("evhz2other"));
    let s = open(&schema, 4).await;
    let a = admin().await;
    a.batch_execute(&format!("CREATE SCHEMA \"{other}\"; CREATE TABLE \"{other}\".t (v int)")).await.unwrap();
    let busy = admin().await;
    busy.batch_execute(&format!("BEGIN; INSERT INTO \"{other}\".t VALUES (1)")).await.unwrap();

    let id = put(&s, "q").await;
    let started = Instant::now();
    let got = s.read_events(ReadEventsRequest { after: None, block_ms: 0, limit: 10 }).await.unwrap();
    assert_eq!(got.len(), 1, "the event is read while the other transaction is open");
    assert_eq!(got[0].job_id.as_deref(), Some(id.as_str()));
    assert_eq!(s.last_event_id().await.unwrap(), Some(got[0].id.clone()));
    assert!(started.elapsed() < Duration::from_millis(200), "read after {:?}", started.elapsed());

    busy.batch_execute("ROLLBACK").await.unwrap();
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
    drop_schema(&other).await;
}
