//! The worker registry: heartbeats register, listing reads, pruning removes the silent.

use flexiq_core::store::PruneWorkersRequest;
use flexiq_core::WorkerInfo;

use crate::fixtures::{at, open};
use crate::Harness;

fn worker(id: &str, heartbeat_at: i64) -> WorkerInfo {
    WorkerInfo {
        id: id.into(),
        queues: vec!["a".into(), "b".into()],
        concurrency: 8,
        host: "host-1".into(),
        pid: 4242,
        started_at: at(0),
        heartbeat_at,
    }
}

/// A heartbeat registers the worker with everything it said.
pub async fn workers_heartbeat_registers(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert!(s.list_workers().await.unwrap().is_empty());
    let w = worker("w1", at(10));
    s.worker_heartbeat(&w).await.unwrap();
    assert_eq!(s.list_workers().await.unwrap(), vec![w]);
}

/// A second heartbeat refreshes the same worker rather than adding one.
pub async fn workers_heartbeat_refreshes(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.worker_heartbeat(&worker("w1", at(10))).await.unwrap();
    s.worker_heartbeat(&worker("w1", at(20))).await.unwrap();
    let all = s.list_workers().await.unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].heartbeat_at, at(20));
}

/// Several workers are listed.
pub async fn workers_list_many(h: &dyn Harness) {
    let s = open(h, "default").await;
    for id in ["w1", "w2", "w3"] {
        s.worker_heartbeat(&worker(id, at(1))).await.unwrap();
    }
    let mut ids: Vec<_> = s.list_workers().await.unwrap().into_iter().map(|w| w.id).collect();
    ids.sort();
    assert_eq!(ids, vec!["w1", "w2", "w3"]);
}

/// Pruning removes workers whose heartbeat is before the cutoff and returns how many.
pub async fn workers_prune_by_cutoff(h: &dyn Harness) {
    let s = open(h, "default").await;
    s.worker_heartbeat(&worker("old", at(1_000))).await.unwrap();
    s.worker_heartbeat(&worker("older", at(500))).await.unwrap();
    s.worker_heartbeat(&worker("fresh", at(5_000))).await.unwrap();
    assert_eq!(s.prune_workers(PruneWorkersRequest { cutoff_ms: at(2_000) }).await.unwrap(), 2);
    let left: Vec<_> = s.list_workers().await.unwrap().into_iter().map(|w| w.id).collect();
    assert_eq!(left, vec!["fresh"]);
    assert_eq!(s.prune_workers(PruneWorkersRequest { cutoff_ms: at(2_000) }).await.unwrap(), 0);
}
