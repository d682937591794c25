//! The dispatcher round by round on every store: filters, the persisted cursor, dedup of
//! (hook, event), and hooks that are broken or absent.

use flexiq_runtime::webhooks::dispatch::{DispatchConfig, WebhookDispatcher};
use flexiq_runtime::webhooks::{
    delete_hook, get_hook, list_hooks, set_hook, WebhookConfig, CURSOR_PREFIX, DELIVER_TASK, QUEUE,
};
use flexiq_runtime::{EnqueueOptions, JobFilter, Queue};

use crate::{assert_code, on_every_store};

on_every_store!(
    each_event_becomes_one_delivery_per_matching_hook_even_when_read_twice,
    an_empty_stream_starts_at_the_start
);

const SECRET: &str = "a-secret-of-16-bytes-or-more";

fn hook(events: &[&str]) -> WebhookConfig {
    WebhookConfig {
        events: events.iter().map(|e| e.to_string()).collect(),
        ..WebhookConfig::new("https://hooks.example.com/in", SECRET)
    }
}

async fn each_event_becomes_one_delivery_per_matching_hook_even_when_read_twice(q: &Queue) {
    let d = WebhookDispatcher::new(q, DispatchConfig::default()).unwrap();
    // No hook: nothing read, nothing written.
    let r = d.run_once().await.unwrap();
    assert_eq!((r.hooks, r.cursor), (0, None));
    let cursor_key = format!("{CURSOR_PREFIX}{}", q.namespace());
    assert_eq!(q.get_setting(&cursor_key).await.unwrap(), None);

    q.enqueue("before", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    set_hook(q, "enqueues", &hook(&["enqueued"])).await.unwrap();
    set_hook(q, "everything", &hook(&[])).await.unwrap();
    q.set_setting("webhook:broken", "{not json").await.unwrap();
    // The first round starts after the newest event: the backlog is not delivered.
    let r = d.run_once().await.unwrap();
    assert_eq!((r.hooks, r.invalid_hooks.clone(), r.deliveries), (2, vec!["broken".to_string()], 0));
    let start = r.cursor.clone().unwrap();
    assert_eq!(q.get_setting(&cursor_key).await.unwrap().as_deref(), Some(start.as_str()));

    for _ in 0..3 {
        q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    }
    let r = d.run_once().await.unwrap();
    assert_eq!((r.events, r.deliveries), (3, 6), "3 enqueued events, each to both hooks");
    let delivery_jobs = || async { q.stats_for_queue(QUEUE).await.unwrap().total() };
    assert_eq!(delivery_jobs().await, 6);
    let filter = JobFilter { queue: Some(QUEUE.into()), ..Default::default() };
    let listed = q.list_jobs(&filter, 100, 0).await.unwrap();
    assert!(listed.iter().all(|j| j.task == DELIVER_TASK));

    // Nothing new: the cursor holds, and the delivery jobs' own events are never delivered.
    let r = d.run_once().await.unwrap();
    assert_eq!(r.deliveries, 0, "{r:?}");

    // A dispatcher that reads the same events again (its cursor rewound) enqueues nothing new.
    q.set_setting(&cursor_key, &start).await.unwrap();
    let r = d.run_once().await.unwrap();
    assert_eq!(r.deliveries, 6);
    assert_eq!(delivery_jobs().await, 6, "one delivery per (hook, event)");

    // Filters and hooks as settings.
    assert!(get_hook(q, "enqueues").await.unwrap().is_some());
    let all = list_hooks(q).await.unwrap();
    assert!(all["broken"].is_err() && all["everything"].is_ok());
    assert!(delete_hook(q, "enqueues").await.unwrap());
    assert_eq!(get_hook(q, "enqueues").await.unwrap(), None);
    assert_code!(set_hook(q, "bad name", &hook(&[])).await, "INVALID_ARGUMENT");
    assert_code!(
        WebhookDispatcher::new(q, DispatchConfig { batch: 0, ..Default::default() }),
        "INVALID_ARGUMENT"
    );
}

async fn an_empty_stream_starts_at_the_start(q: &Queue) {
    let d = WebhookDispatcher::new(q, DispatchConfig::default()).unwrap();
    set_hook(q, "h", &hook(&["enqueued"])).await.unwrap();
    let r = d.run_once().await.unwrap();
    assert_eq!(r.cursor.as_deref(), Some(""));
    q.enqueue("first", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let r = d.run_once().await.unwrap();
    assert_eq!((r.events, r.deliveries), (1, 1), "the stream's first event is delivered");
}
