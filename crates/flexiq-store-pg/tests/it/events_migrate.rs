//! Migration 12 on a schema that already holds jobs: nothing is made up for the jobs already
//! there, and every change to them from then on is reported.

use flexiq_core::events::EventKind;
use flexiq_core::store::{AckRequest, Events, JobStore, ReadEventsRequest};
use flexiq_store_pg::PgStore;

use crate::common::{admin, claim, completes, drop_schema, enqueue_n, fresh_schema, now_ms, open, url};
use crate::events_horizon::read_n;
use crate::upgrade::{schema_at, versions_from};

#[tokio::test]
async fn migrating_a_schema_with_jobs_reports_only_what_happens_after() {
    let schema = fresh_schema("evmig");
    schema_at(&schema, 11).await;
    let t = now_ms() - 1_000;
    let insert = format!(
        "INSERT INTO \"{schema}\".jobs (id, namespace, queue, task, payload, priority, status, max_retries, \
           backoff_base_ms, backoff_max_ms, created_at, run_at) \
         SELECT gen_random_uuid(), 'default', 'old', 't', '\\x7b7d', 0, 0, 3, 1000, 60000, $1, $1 \
         FROM generate_series(1, 3)"
    );
    let a = admin().await;
    a.execute(&insert, &[&t]).await.unwrap();
    let register = format!("INSERT INTO \"{schema}\".queues (namespace, queue) VALUES ('default', 'old')");
    a.execute(&register, &[]).await.unwrap();

    assert_eq!(PgStore::migrate_schema(&url(), &schema).await.unwrap().applied, versions_from(12));
    let s = open(&schema, 2).await;
    assert_eq!(s.last_event_id().await.unwrap(), None, "the jobs already there wrote no events");
    let read = ReadEventsRequest { after: None, block_ms: 0, limit: 10 };
    assert!(s.read_events(read).await.unwrap().is_empty());

    let now = now_ms();
    let got = claim(&s, "old", 10, "w", now).await.unwrap();
    assert_eq!(got.len(), 3);
    s.ack(AckRequest { acks: completes(&got), now }).await.unwrap();
    enqueue_n(&s, "new", 1, now).await;
    let events = read_n(&s, None, 7).await;
    let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds[..3], [EventKind::Active; 3]);
    assert_eq!(kinds[3..6], [EventKind::Completed; 3]);
    assert_eq!(kinds[6], EventKind::Enqueued);
    assert_eq!(events.iter().filter(|e| e.queue.as_deref() == Some("old")).count(), 6);
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}
