//! Maintenance services driven with a manual clock: election and takeover, rescue, runaway
//! expiry, archival, retention, registry pruning, and the maintainer gating them on leadership.

use std::time::Duration;

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::core::WorkerInfo;
use flexiq_runtime::services::{
    ArchiveConfig, Archiver, Elector, ElectorConfig, Maintainer, MaintenanceConfig, RescueConfig, Rescuer,
    RetentionSweepConfig, RetentionSweeper, RunawayConfig, RunawayReaper, WorkerPruneConfig, WorkerPruner,
};
use flexiq_runtime::{EnqueueOptions, JobStatus, Retention, RetentionTable};

use crate::assert_code;
use crate::common::{claim, finish, make_dead, manual, open, retries};

fn ttl(ms: u64) -> ElectorConfig {
    ElectorConfig { ttl: Duration::from_millis(ms), ..Default::default() }
}

#[tokio::test]
async fn a_second_elector_takes_over_when_the_first_stops_renewing() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let a = Elector::new(&q, "worker-a", ttl(1_000)).unwrap();
    let b = Elector::new(&q, "worker-b", ttl(1_000)).unwrap();
    assert!(a.run_once().await.unwrap().leader);
    let rb = b.run_once().await.unwrap();
    assert!(!rb.leader);
    assert_eq!(rb.holder.as_deref(), Some("worker-a"));
    clock.advance(600);
    assert!(a.run_once().await.unwrap().leader, "renewal");
    clock.advance(600);
    assert!(!b.run_once().await.unwrap().leader, "a renewed 600 ms ago");
    // a dies: no renewals; its lease lapses after the ttl.
    clock.advance(1_001);
    let rb = b.run_once().await.unwrap();
    assert!(rb.leader);
    assert_eq!(rb.holder.as_deref(), Some("worker-b"));
    assert!(!a.run_once().await.unwrap().leader);
    assert!(b.resign().await.unwrap());
    assert!(a.run_once().await.unwrap().leader, "resigning hands over at once");
    assert_code!(Elector::new(&q, "", ttl(1_000)), "INVALID_ARGUMENT");
    assert_code!(Elector::new(&q, "x", ttl(1)), "INVALID_ARGUMENT");
}

#[tokio::test]
async fn rescuer_releases_only_stale_leases() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    claim(&q, 1).await;
    let rescuer = Rescuer::new(&q, RescueConfig { stale_after: Duration::from_secs(30) }).unwrap();
    assert!(rescuer.run_once().await.unwrap().released.is_empty());
    clock.advance(31_000);
    assert_eq!(rescuer.run_once().await.unwrap().released, vec![id.clone()]);
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Pending);
    assert!(job.last_error.unwrap().starts_with("LEASE_HEARTBEAT_LOST"));
    assert_code!(Rescuer::new(&q, RescueConfig { stale_after: Duration::ZERO }), "INVALID_ARGUMENT");
}

#[tokio::test]
async fn runaway_reaper_fails_attempts_past_the_cap() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let id = q.enqueue("t", b"".to_vec(), retries(0)).await.unwrap();
    claim(&q, 1).await;
    let reaper =
        RunawayReaper::new(&q, RunawayConfig { absolute_cap: Some(Duration::from_secs(60)) }).unwrap();
    assert!(reaper.run_once().await.unwrap().expired.is_empty());
    clock.advance(61_000);
    assert_eq!(reaper.run_once().await.unwrap().expired, vec![id.clone()]);
    let job = q.get_job(id.as_str()).await.unwrap().unwrap();
    assert!(job.last_error.unwrap().starts_with("LEASE_ABSOLUTE_CAP"));
    let off = RunawayReaper::new(&q, RunawayConfig { absolute_cap: None }).unwrap();
    assert!(off.run_once().await.unwrap().expired.is_empty());
    assert_code!(
        RunawayReaper::new(&q, RunawayConfig { absolute_cap: Some(Duration::ZERO) }),
        "INVALID_ARGUMENT"
    );
}

#[tokio::test]
async fn archiver_moves_old_terminal_jobs_in_batches() {
    let q = open().await;
    let (q, clock) = manual(&q);
    for _ in 0..5 {
        q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
        finish(&q, AckKind::Complete { result: None }).await;
    }
    let pending = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    let config = ArchiveConfig { after: Duration::from_secs(60), batch: 2, max_batches: 10 };
    let archiver = Archiver::new(&q, config).unwrap();
    assert_eq!(archiver.run_once().await.unwrap().archived, 0);
    clock.advance(61_000);
    let report = archiver.run_once().await.unwrap();
    assert_eq!(report.archived, 5);
    assert_eq!(report.cutoff, q.now_ms() - 60_000);
    assert_eq!(q.list_archived(10, 0).await.unwrap().len(), 5);
    assert!(q.get_job(pending.as_str()).await.unwrap().is_some());
    assert_code!(Archiver::new(&q, ArchiveConfig { batch: 0, ..Default::default() }), "INVALID_ARGUMENT");
}

#[tokio::test]
async fn retention_sweep_deletes_old_history_and_publishes_windows() {
    let q = open().await;
    let (q, clock) = manual(&q);
    make_dead(&q, "a").await;
    clock.advance(120_000);
    make_dead(&q, "b").await;
    let r = Retention { dead_letter: Some(60), ..Default::default() };
    let sweeper = RetentionSweeper::new(&q, RetentionSweepConfig { retention: Some(r) }).unwrap();
    let report = sweeper.run_once().await.unwrap();
    assert_eq!(report.deleted[&RetentionTable::DeadLetter], 1);
    assert_eq!(report.total, 1);
    assert_eq!(q.dead_letters(10, 0).await.unwrap()[0].task_name, "b");
    let eff = q.effective_retention().await.unwrap().unwrap();
    assert_eq!(eff, report.effective);
    assert_eq!(eff.reported_at, q.now_ms());
    let off =
        RetentionSweeper::new(&q, RetentionSweepConfig { retention: Some(Retention::default()) }).unwrap();
    off.run_once().await.unwrap();
    assert!(!q.effective_retention().await.unwrap().unwrap().enabled, "off is reported, not absent");
    let defaults =
        RetentionSweeper::new(&q, RetentionSweepConfig::default()).unwrap().run_once().await.unwrap();
    assert!(defaults.effective.defaulted);
    let bad = Retention { task_logs: Some(0), ..Default::default() };
    assert_code!(
        RetentionSweeper::new(&q, RetentionSweepConfig { retention: Some(bad) }),
        "INVALID_ARGUMENT"
    );
}

#[tokio::test]
async fn pruner_forgets_silent_workers() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let info = |id: &str, at: i64| WorkerInfo {
        id: id.into(),
        queues: vec![],
        concurrency: 1,
        host: "h".into(),
        pid: 1,
        started_at: at,
        heartbeat_at: at,
        current_jobs: vec![],
    };
    q.store().worker_heartbeat(&info("old", q.now_ms())).await.unwrap();
    clock.advance(600_000);
    q.store().worker_heartbeat(&info("new", q.now_ms())).await.unwrap();
    let pruner = WorkerPruner::new(&q, WorkerPruneConfig { stale_after: Duration::from_secs(300) }).unwrap();
    assert_eq!(pruner.run_once().await.unwrap().pruned, 1);
    let ids: Vec<_> = q.list_workers().await.unwrap().into_iter().map(|w| w.id).collect();
    assert_eq!(ids, ["new"]);
    assert_code!(
        WorkerPruner::new(&q, WorkerPruneConfig { stale_after: Duration::ZERO }),
        "INVALID_ARGUMENT"
    );
}

#[tokio::test]
async fn maintainer_runs_services_only_while_elected() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let config = MaintenanceConfig {
        interval: Duration::from_millis(100),
        elector: ttl(1_000),
        rescue: RescueConfig { stale_after: Duration::from_secs(30) },
        ..Default::default()
    };
    let a = Maintainer::new(&q, config.clone(), "a").unwrap();
    let b = Maintainer::new(&q, config.clone(), "b").unwrap();
    let id = q.enqueue("t", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    claim(&q, 1).await;
    let ra = a.run_once().await.unwrap();
    assert!(ra.election.leader && ra.rescue.unwrap().released.is_empty());
    assert!(ra.retention.unwrap().effective.defaulted);
    let rb = b.run_once().await.unwrap();
    assert!(!rb.election.leader && rb.rescue.is_none() && rb.retention.is_none());
    clock.advance(31_000);
    let rb = b.run_once().await.unwrap();
    assert!(rb.election.leader, "a stopped renewing");
    assert_eq!(rb.rescue.unwrap().released, vec![id]);
    let bad = MaintenanceConfig { interval: Duration::from_secs(10), ..config };
    assert_code!(Maintainer::new(&q, bad, "c"), "INVALID_ARGUMENT");
}
