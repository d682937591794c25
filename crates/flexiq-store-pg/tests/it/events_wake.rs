//! A reader blocked on the events stream in another process (another store handle, with its
//! own LISTEN connection) wakes within milliseconds of each kind of commit, long before its
//! once-a-second look.

use std::future::Future;
use std::time::{Duration, Instant};

use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::store::{
    AckRequest, EnqueueRequest, Events, JobStore, PublishEventRequest, PurgeCompletedRequest, QueueControl,
    ReadEventsRequest,
};
use flexiq_core::{EnqueueOptions, NewJob};
use flexiq_store_pg::PgStore;

use crate::common::{claim, completes, drop_schema, fresh_schema, now_ms, open};

/// Runs `action` while `reader` is blocked after its newest event; returns what the read
/// returned and how long after `action` finished it returned.
async fn woken_by<F: Future<Output = ()>>(reader: &PgStore, action: F) -> (Vec<QueueEvent>, Duration) {
    let tail = reader.last_event_id().await.unwrap();
    let r = reader.clone();
    let read = tokio::spawn(async move {
        let got =
            r.read_events(ReadEventsRequest { after: tail, block_ms: 5_000, limit: 100 }).await.unwrap();
        (got, Instant::now())
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    action.await;
    let done = Instant::now();
    let (got, at) = read.await.unwrap();
    (got, at.saturating_duration_since(done))
}

fn unique_job() -> NewJob {
    let opts = EnqueueOptions { unique_key: Some("once".into()), ..Default::default() };
    NewJob::build("t", b"{}".to_vec(), opts, now_ms()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_in_another_process_wakes_within_milliseconds_of_each_commit() {
    let schema = fresh_schema("evwake");
    let (reader, writer) = (open(&schema, 2).await, open(&schema, 4).await);
    let now = now_ms();
    let enqueue = |job: NewJob| {
        let w = writer.clone();
        async move {
            w.enqueue(EnqueueRequest { jobs: vec![job], max_pending: None, now }).await.unwrap();
        }
    };
    let mut seen = Vec::new();
    let (got, lag) = woken_by(&reader, enqueue(unique_job())).await;
    seen.push((EventKind::Enqueued, got, lag));
    let (got, lag) = woken_by(&reader, enqueue(unique_job())).await;
    seen.push((EventKind::Deduplicated, got, lag));
    let mut claimed = Vec::new();
    let (got, lag) =
        woken_by(&reader, async { claimed = claim(&writer, "default", 1, "w", now).await.unwrap() }).await;
    seen.push((EventKind::Active, got, lag));
    let (got, lag) = woken_by(&reader, async {
        writer.ack(AckRequest { acks: completes(&claimed), now }).await.unwrap();
    })
    .await;
    seen.push((EventKind::Completed, got, lag));
    let (got, lag) = woken_by(&reader, async { writer.pause("default").await.unwrap() }).await;
    seen.push((EventKind::Paused, got, lag));
    let (got, lag) = woken_by(&reader, async {
        writer.purge_completed(PurgeCompletedRequest { cutoff_ms: now + 1 }).await.unwrap();
    })
    .await;
    seen.push((EventKind::Removed, got, lag));
    let publish = PublishEventRequest {
        name: "note".into(),
        data: serde_json::json!({}),
        job_id: None,
        queue: None,
        now,
    };
    let (got, lag) =
        woken_by(&reader, async { writer.publish_event(publish).await.map(drop).unwrap() }).await;
    seen.push((EventKind::Custom, got, lag));

    for (kind, got, lag) in seen {
        assert_eq!(got.iter().map(|e| e.kind).collect::<Vec<_>>(), vec![kind], "{got:#?}");
        assert!(lag < Duration::from_millis(300), "the {kind} reader woke {lag:?} after the commit");
    }
    flexiq_core::Store::close(&reader).await.unwrap();
    flexiq_core::Store::close(&writer).await.unwrap();
    drop_schema(&schema).await;
}
