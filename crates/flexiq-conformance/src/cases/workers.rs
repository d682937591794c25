//! The worker registry: heartbeats register, listing reads, pruning removes the silent.

use flexiq_core::store::PruneWorkersRequest;
use flexiq_core::WorkerInfo;

use crate::fixtures::{at, job, open, put, take};
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
        current_jobs: Vec::new(),
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

/// A listed worker names the jobs running under its id now: claimed ones appear, finished
/// ones go, and a heartbeat's own list is ignored.
pub async fn workers_list_current_jobs(h: &dyn Harness) {
    let s = open(h, "default").await;
    let mut said = worker("w1", at(10));
    said.current_jobs = vec!["made-up".into()];
    s.worker_heartbeat(&said).await.unwrap();
    s.worker_heartbeat(&worker("idle", at(10))).await.unwrap();
    assert!(s.list_workers().await.unwrap().iter().all(|w| w.current_jobs.is_empty()), "nothing runs yet");
    put(&*s, job("t", ""), at(11)).await;
    put(&*s, job("t", ""), at(11)).await;
    let claimed = take(&*s, 2, at(12)).await;
    let mut want: Vec<String> = claimed.iter().map(|c| c.job.id.to_string()).collect();
    want.sort();
    let listed = s.list_workers().await.unwrap();
    let w1 = listed.iter().find(|w| w.id == "w1").expect("w1 listed");
    let mut got = w1.current_jobs.clone();
    got.sort();
    assert_eq!(got, want, "the jobs w1 claimed");
    assert!(listed.iter().find(|w| w.id == "idle").unwrap().current_jobs.is_empty());
    crate::fixtures::complete(&*s, &claimed[0], None, at(13)).await;
    let listed = s.list_workers().await.unwrap();
    let w1 = listed.iter().find(|w| w.id == "w1").unwrap();
    assert_eq!(w1.current_jobs, vec![claimed[1].job.id.to_string()], "a finished job is not current");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_workers {
    ($callback:path, $make:path) => {
        $callback!($make;
            workers::workers_list_current_jobs,
            workers::workers_heartbeat_registers,
            workers::workers_heartbeat_refreshes,
            workers::workers_list_many,
            workers::workers_prune_by_cutoff,
        );
    };
}
