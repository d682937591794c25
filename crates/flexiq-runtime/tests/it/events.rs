//! The events stream through the `Queue`, on every store: a stream on one handle sees a worker
//! on another handle run a job; a stream resumed after a saved id repeats nothing and loses
//! nothing; the kinds filter; custom events; the cleaner's trim; bad input refused.

use std::time::Duration;

use flexiq_runtime::services::{ElectorConfig, EventTrimConfig, Maintainer, MaintenanceConfig};
use flexiq_runtime::{
    connect, ConnectOptions, EnqueueOptions, EventKind, EventStream, EventsFrom, EventsOptions, Queue,
    QueueEvent, Worker,
};
use futures::StreamExt;
use serde_json::json;

use crate::assert_code;
use crate::backends::Backend;
use crate::common::quiet_config;

macro_rules! on_every_backend {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let b = $crate::backends::sqlite().await;
                super::$name(&b).await;
                b.cleanup().await;
            }

            #[cfg(feature = "postgres")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let b = $crate::backends::postgres().await;
                super::$name(&b).await;
                b.cleanup().await;
            }

            #[cfg(feature = "redis")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis() {
                let b = $crate::backends::redis().await;
                super::$name(&b).await;
                b.cleanup().await;
            }
        }
    )*};
}

on_every_backend!(
    a_stream_sees_another_handles_worker_run_a_job,
    a_resumed_stream_repeats_nothing_and_loses_nothing,
    custom_events_and_the_kinds_filter,
    the_elected_cleaner_trims_the_stream,
    bad_input_is_refused,
);

async fn second_handle(b: &Backend) -> Queue {
    connect(b.url(), ConnectOptions::default()).await.expect("second handle")
}

async fn next(stream: &mut EventStream) -> QueueEvent {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event within 10 s")
        .expect("the stream does not end")
        .expect("a readable event")
}

async fn a_stream_sees_another_handles_worker_run_a_job(b: &Backend) {
    let q = b.queue();
    let mut stream = q.events(EventsOptions::default()).await.unwrap();
    let other = second_handle(b).await;
    let mut w = Worker::new(other.clone(), quiet_config()).unwrap();
    w.register("greet", |_ctx| async { Ok(Some(b"hello".to_vec())) }).unwrap();
    let running = w.start();
    let id = other.enqueue("greet", b"{}".to_vec(), EnqueueOptions::default()).await.unwrap();
    let mut seen = Vec::new();
    while seen.last() != Some(&EventKind::Completed) {
        let ev = next(&mut stream).await;
        assert_eq!(ev.job_id.as_deref(), Some(id.as_str()), "{ev:?}");
        seen.push(ev.kind);
        if ev.kind == EventKind::Completed {
            assert_eq!(ev.data["result_size"], json!(5));
        }
    }
    assert_eq!(seen, vec![EventKind::Enqueued, EventKind::Active, EventKind::Completed]);
    running.shutdown().await.unwrap();
    other.close().await.unwrap();
}

async fn a_resumed_stream_repeats_nothing_and_loses_nothing(b: &Backend) {
    let q = b.queue();
    for n in 0..5 {
        q.enqueue("t", format!("{n}").into_bytes(), EnqueueOptions::default()).await.unwrap();
    }
    let from_start = EventsOptions { from: EventsFrom::Start, batch: 2, ..Default::default() };
    let mut first = q.events(from_start.clone()).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(next(&mut first).await);
    }
    drop(first);
    let saved = seen.last().unwrap().id.clone();
    for n in 5..7 {
        q.enqueue("t", format!("{n}").into_bytes(), EnqueueOptions::default()).await.unwrap();
    }
    let other = second_handle(b).await;
    let resume = EventsOptions { from: EventsFrom::After(saved), ..Default::default() };
    let mut resumed = other.events(resume).await.unwrap();
    for _ in 0..4 {
        seen.push(next(&mut resumed).await);
    }
    let ids: Vec<_> = seen.iter().map(|e| e.id.clone()).collect();
    let whole: Vec<_> = q.read_events(None, 0, 100).await.unwrap().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, whole, "seven enqueues, each seen once and in order");
    let quiet = tokio::time::timeout(Duration::from_millis(300), resumed.next()).await;
    assert!(quiet.is_err(), "nothing more: {quiet:?}");
    other.close().await.unwrap();
}

async fn custom_events_and_the_kinds_filter(b: &Backend) {
    let q = b.queue();
    let opts = EventsOptions { kinds: vec!["deploy.done".into(), "cancelled".into()], ..Default::default() };
    let mut stream = q.events(opts).await.unwrap();
    let id = q.enqueue("t", b"x".to_vec(), EnqueueOptions::default()).await.unwrap();
    q.publish_event("other", json!(1), None, None).await.unwrap();
    let published =
        q.publish_event("deploy.done", json!({"v": 7}), Some(id.as_str()), Some("default")).await.unwrap();
    assert!(q.cancel_job(id.as_str()).await.unwrap());
    let custom = next(&mut stream).await;
    assert_eq!(
        (custom.id.as_str(), custom.kind, custom.name.as_str()),
        (published.as_str(), EventKind::Custom, "deploy.done")
    );
    assert_eq!((custom.data.clone(), custom.job_id.clone()), (json!({"v": 7}), Some(id.to_string())));
    let cancelled = next(&mut stream).await;
    assert_eq!((cancelled.kind, cancelled.job_id), (EventKind::Cancelled, Some(id.to_string())));
    assert_eq!(q.last_event_id().await.unwrap(), Some(cancelled.id));
}

async fn the_elected_cleaner_trims_the_stream(b: &Backend) {
    let q = b.queue();
    for n in 0..12 {
        q.enqueue("t", format!("{n}").into_bytes(), EnqueueOptions::default()).await.unwrap();
    }
    let config = MaintenanceConfig {
        elector: ElectorConfig { ttl: Duration::from_secs(30), ..Default::default() },
        events: EventTrimConfig { max_len: 4, max_age: None },
        ..Default::default()
    };
    let m = Maintainer::new(q, config, "cleaner-1").unwrap();
    let report = m.run_once().await.unwrap();
    assert_eq!(report.events.map(|r| r.trimmed), Some(8));
    assert_eq!(q.read_events(None, 0, 100).await.unwrap().len(), 4);
    let bad = MaintenanceConfig {
        events: EventTrimConfig { max_len: 4, max_age: Some(Duration::from_millis(10)) },
        ..Default::default()
    };
    assert_code!(Maintainer::new(q, bad, "cleaner-2"), "INVALID_ARGUMENT");
}

async fn bad_input_is_refused(b: &Backend) {
    let q = b.queue();
    q.enqueue("t", b"x".to_vec(), EnqueueOptions::default()).await.unwrap();
    let tail = q.last_event_id().await.unwrap();
    assert_code!(q.read_events(None, 0, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.read_events(None, 0, -3).await, "INVALID_ARGUMENT");
    assert_code!(q.read_events(None, -1, 10).await, "INVALID_ARGUMENT");
    assert_code!(q.read_events(Some("not-an-id"), 0, 10).await, "INVALID_ARGUMENT");
    assert_code!(q.trim_events(-1, None).await, "INVALID_ARGUMENT");
    assert_code!(q.trim_events(10, Some(-5)).await, "INVALID_ARGUMENT");
    assert_code!(q.publish_event("completed", json!(1), None, None).await, "INVALID_ARGUMENT");
    assert_code!(q.publish_event("x", json!(1), Some("not-a-job-id"), None).await, "INVALID_ARGUMENT");
    assert_code!(q.publish_event("x", json!(1), None, Some("")).await, "INVALID_ARGUMENT");
    let bad_from = EventsOptions { from: EventsFrom::After("garbage".into()), ..Default::default() };
    assert_code!(q.events(bad_from).await.map(|_| ()), "INVALID_ARGUMENT");
    let bad_kind = EventsOptions { kinds: vec![String::new()], ..Default::default() };
    assert_code!(q.events(bad_kind).await.map(|_| ()), "INVALID_ARGUMENT");
    let no_batch = EventsOptions { batch: 0, ..Default::default() };
    assert_code!(q.events(no_batch).await.map(|_| ()), "INVALID_ARGUMENT");
    let no_block = EventsOptions { block: Duration::ZERO, ..Default::default() };
    assert_code!(q.events(no_block).await.map(|_| ()), "INVALID_ARGUMENT");
    let long_block = EventsOptions { block: Duration::from_secs(301), ..Default::default() };
    assert_code!(q.events(long_block).await.map(|_| ()), "INVALID_ARGUMENT");
    assert_eq!(q.last_event_id().await.unwrap(), tail, "nothing refused was written");
    q.set_events_enabled(false).await.unwrap();
    assert!(!q.events_enabled().await.unwrap());
    assert_code!(q.publish_event("x", json!(1), None, None).await, "CONFLICT");
    q.set_events_enabled(true).await.unwrap();
}
