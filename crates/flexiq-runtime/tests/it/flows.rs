//! Flows and dedup modes through the Queue on every store: a parent's handler reads its
//! children's results and ignored failures, a debounced producer learns it was deduplicated,
//! and each bad argument is refused with nothing written.

use std::time::Duration;

use flexiq_runtime::{
    DedupMode, DedupOptions, EdgePolicy, EnqueueOptions, FlowNode, HandlerError, JobFilter, JobStatus, Queue,
    Worker,
};

use crate::common::quiet_config;
use crate::{assert_code, on_every_store};

on_every_store!(parent_handler_reads_children, dedup_outcomes_and_keys, bad_flow_and_dedup_input);

fn node(queue: &str, task: &str, payload: &str, children: Vec<FlowNode>) -> FlowNode {
    FlowNode {
        task: task.into(),
        payload: payload.as_bytes().to_vec(),
        options: EnqueueOptions { queue: Some(queue.into()), max_retries: Some(0), ..Default::default() },
        children,
        ..Default::default()
    }
}

async fn parent_handler_reads_children(q: &Queue) {
    let bad = FlowNode { on_failure: Some(EdgePolicy::IgnoreDependency), ..node("fl-b", "bad", "", vec![]) };
    let tree = node(
        "fl-a",
        "sum",
        "",
        vec![node("fl-b", "num", "2", vec![]), node("fl-c", "num", "3", vec![]), bad],
    );
    let ids = q.add_flow(tree).await.unwrap();
    assert_eq!(ids.len(), 4);
    assert_eq!(q.get_job(ids[0].as_str()).await.unwrap().unwrap().status, JobStatus::Waiting);
    let mut w = Worker::new(q.clone(), quiet_config()).unwrap();
    w.register("num", |ctx| async move { Ok(Some(ctx.payload().to_vec())) }).unwrap();
    w.register("bad", |_| async { Err(HandlerError::fatal("no good")) }).unwrap();
    w.register("sum", |ctx| async move {
        let values = ctx.children_values().await.map_err(|e| HandlerError::fatal(e.to_string()))?;
        let ignored = ctx.ignored_failures().await.map_err(|e| HandlerError::fatal(e.to_string()))?;
        let total: u32 = values
            .values()
            .map(|v| String::from_utf8_lossy(v.as_deref().unwrap_or(b"0")).parse::<u32>().unwrap())
            .sum();
        let reasons: Vec<String> = ignored.into_values().collect();
        Ok(Some(format!("{total}|{}", reasons.join(",")).into_bytes()))
    })
    .unwrap();
    let running = w.start();
    let out = q.result(ids[0].as_str(), Some(Duration::from_secs(20)), None).await.unwrap();
    running.shutdown().await.unwrap();
    assert_eq!(out.as_deref(), Some(&b"5|no good"[..]));
    let deps = q.get_dependencies(ids[0].as_str(), None, 10).await.unwrap();
    assert_eq!((deps.processed.len(), deps.ignored.len()), (2, 1));
    assert_eq!(deps.ignored[0].id, ids[3]);
}

async fn dedup_outcomes_and_keys(q: &Queue) {
    let d = DedupOptions {
        id: "rt-key".into(),
        mode: DedupMode::Debounce,
        ttl_ms: Some(60_000),
        extend: true,
        replace: true,
    };
    let opts = EnqueueOptions { dedup: Some(d), delay_ms: Some(60_000), ..Default::default() };
    let first = q.enqueue_outcome("t", b"one".to_vec(), opts.clone()).await.unwrap();
    assert!(first.created);
    let second = q.enqueue_outcome("t", b"two".to_vec(), opts.clone()).await.unwrap();
    assert_eq!((second.id.clone(), second.created), (first.id.clone(), false));
    assert_eq!(q.get_job(first.id.as_str()).await.unwrap().unwrap().payload, b"two");
    assert_eq!(q.dedup_job_id("rt-key").await.unwrap(), Some(first.id.clone()));
    assert!(q.delete_dedup_key("rt-key").await.unwrap());
    assert_eq!(q.dedup_job_id("rt-key").await.unwrap(), None);
    assert!(q.enqueue_outcome("t", b"three".to_vec(), opts).await.unwrap().created);
}

async fn bad_flow_and_dedup_input(q: &Queue) {
    let root = q.add_flow(node("fl-a", "r", "", vec![node("fl-b", "c", "", vec![])])).await.unwrap();
    assert_code!(q.get_dependencies(root[0].as_str(), Some("not-an-id"), 10).await, "INVALID_ARGUMENT");
    assert_code!(q.get_dependencies(root[0].as_str(), None, -1).await, "INVALID_ARGUMENT");
    assert_code!(q.get_dependencies(flexiq_runtime::JobId::new().as_str(), None, 10).await, "NOT_FOUND");
    assert_code!(q.remove_child_dependency("garbage").await, "INVALID_ARGUMENT");
    assert_code!(q.remove_child_dependency(flexiq_runtime::JobId::new().as_str()).await, "NOT_FOUND");
    let elsewhere = FlowNode { namespace: Some("not-this-one".into()), ..node("fl-b", "c", "", vec![]) };
    assert_code!(q.add_flow(node("fl-x", "r", "", vec![elsewhere])).await, "INVALID_ARGUMENT");
    let cyc_id = flexiq_runtime::JobId::new().to_string();
    let looped = FlowNode {
        id: Some(cyc_id.clone()),
        ..node("fl-x", "r", "", vec![FlowNode { id: Some(cyc_id), ..node("fl-x", "c", "", vec![]) }])
    };
    assert_code!(q.add_flow(looped).await, "INVALID_ARGUMENT");
    let in_x = JobFilter { queue: Some("fl-x".into()), ..Default::default() };
    assert!(q.list_jobs(&in_x, 100, 0).await.unwrap().is_empty(), "a refused flow writes nothing");
    let no_ttl = DedupOptions { id: "k".into(), mode: DedupMode::Throttle, ..Default::default() };
    assert_code!(
        q.enqueue_outcome("t", b"".to_vec(), EnqueueOptions { dedup: Some(no_ttl), ..Default::default() })
            .await,
        "INVALID_ARGUMENT"
    );
    assert_code!(q.dedup_job_id("").await, "INVALID_ARGUMENT");
    assert_code!(q.delete_dedup_key("").await, "INVALID_ARGUMENT");
    assert!(DedupMode::parse("often").is_err());
}
