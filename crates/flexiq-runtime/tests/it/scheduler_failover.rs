//! Job schedulers across leader deaths, from the outside.
//!
//! Three worker processes (this test binary re-executed, selected by
//! `FLEXIQ_IT_SCHED_CHILD_DB`) share one store (an SQLite file, a PostgreSQL schema or a Redis
//! prefix of the test's own) and elect one cleaner, which fires a scheduler every 100 ms. The elected leader is killed with SIGKILL twice mid-run and replaced
//! by a fresh process each time. Afterwards every slot of the window has exactly one job: the
//! scheduler catches up (`catch_up = all`), so a failover leaves no gap, and the guarded fire
//! leaves no duplicate.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use flexiq_runtime::core::store::LeaseRequest;
use flexiq_runtime::services::{ElectorConfig, MaintenanceConfig, SchedulerFireConfig, CLEANER_LEASE};
use flexiq_runtime::{
    connect, CatchUp, ConnectOptions, EnqueueOptions, JobFilter, JobTemplate, Queue, RepeatRule, Worker,
    WorkerConfig,
};

use crate::backends::{self, Backend};
use crate::common::eventually;

const CHILD_ENV: &str = "FLEXIQ_IT_SCHED_CHILD_DB";
const EVERY_MS: i64 = 100;

fn child_config(id: &str) -> WorkerConfig {
    WorkerConfig {
        worker_id: Some(id.into()),
        concurrency: 2,
        heartbeat_interval: Duration::from_millis(100),
        poll_interval: Duration::from_millis(50),
        shutdown_timeout: Duration::from_secs(5),
        maintenance: Some(MaintenanceConfig {
            interval: Duration::from_millis(100),
            elector: ElectorConfig { ttl: Duration::from_millis(500), ..Default::default() },
            schedulers: SchedulerFireConfig { tick: Duration::from_millis(20), ..Default::default() },
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Entry point of a child worker process: does nothing unless this binary was re-executed
/// with `FLEXIQ_IT_SCHED_CHILD_DB` set, and then runs a worker until it is killed.
#[test]
fn scheduler_child_process_entry() {
    let Ok(db) = std::env::var(CHILD_ENV) else { return };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let q = connect(&db, ConnectOptions::default()).await.unwrap();
        let mut w = Worker::new(q, child_config(&format!("child-{}", std::process::id()))).unwrap();
        w.register("tick", |_ctx| async move { Ok(None) }).unwrap();
        let running = w.start();
        tokio::time::sleep(Duration::from_secs(120)).await;
        running.shutdown().await.unwrap();
    });
}

fn spawn_child(db: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "scheduler_failover::scheduler_child_process_entry", "--test-threads=1"])
        .env(CHILD_ENV, db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The pid of the child holding the cleaner lease now, if one does.
async fn leader_pid(q: &Queue) -> Option<u32> {
    let req = LeaseRequest { name: CLEANER_LEASE.into(), now: q.now_ms() };
    let lease = q.store().lease(req).await.unwrap()?;
    lease.holder.strip_prefix("child-")?.parse().ok()
}

/// Jobs of the scheduler by slot (read from their unique keys), with how many each slot has.
async fn jobs_by_slot(q: &Queue) -> HashMap<i64, u32> {
    let filter = JobFilter { task: Some("tick".into()), ..Default::default() };
    let mut by_slot = HashMap::new();
    for job in q.list_jobs(&filter, 10_000, 0).await.unwrap() {
        let key = job.unique_key.expect("a fired job carries its slot key");
        let slot: i64 = key.rsplit(':').next().unwrap().parse().unwrap();
        *by_slot.entry(slot).or_default() += 1;
    }
    by_slot
}

async fn killing_the_leader_twice_loses_and_repeats_no_slot(b: Backend) {
    let q = b.queue().clone();
    let db = b.url().to_string();
    let rule = RepeatRule { catch_up: CatchUp::All { max: 1_000 }, ..RepeatRule::every(EVERY_MS as u64) };
    let template =
        JobTemplate { task: "tick".into(), payload: b"{}".to_vec(), options: EnqueueOptions::default() };
    let made = q.upsert_job_scheduler("beat", rule, template).await.unwrap();
    let first = made.next_run_ms.unwrap();

    let mut children: Vec<Child> = (0..3).map(|_| spawn_child(&db)).collect();
    let mut kills = 0;
    while kills < 2 {
        eventually(30, "slots firing under a leader", || async {
            jobs_by_slot(&q).await.len() >= 5 * (kills + 1)
        })
        .await;
        let pids: Vec<u32> = children.iter().map(Child::id).collect();
        eventually(30, "an elected child", || async {
            leader_pid(&q).await.is_some_and(|p| pids.contains(&p))
        })
        .await;
        let pid = leader_pid(&q).await.expect("a child holds the cleaner lease");
        let at = children.iter().position(|c| c.id() == pid).unwrap();
        let mut leader = children.swap_remove(at);
        leader.kill().unwrap(); // SIGKILL: the lease is left to lapse
        leader.wait().unwrap();
        kills += 1;
        children.push(spawn_child(&db));
    }
    let after_kills = jobs_by_slot(&q).await.len();
    eventually(30, "slots firing after the second failover", || async {
        jobs_by_slot(&q).await.len() >= after_kills + 5
    })
    .await;
    assert!(q.remove_job_scheduler("beat").await.unwrap());
    for mut c in children {
        c.kill().unwrap();
        c.wait().unwrap();
    }

    let by_slot = jobs_by_slot(&q).await;
    let twice: Vec<_> = by_slot.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "slots fired more than once: {twice:?}");
    let last = *by_slot.keys().max().unwrap();
    let missing: Vec<i64> = (0..=(last - first) / EVERY_MS)
        .map(|k| first + k * EVERY_MS)
        .filter(|slot| !by_slot.contains_key(slot))
        .collect();
    assert!(missing.is_empty(), "slots never fired: {missing:?}");
    assert!(by_slot.len() >= 15, "the run covered {} slots", by_slot.len());
    b.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_failover_on_sqlite() {
    killing_the_leader_twice_loses_and_repeats_no_slot(backends::sqlite().await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_failover_on_postgres() {
    killing_the_leader_twice_loses_and_repeats_no_slot(backends::postgres().await).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_failover_on_redis() {
    killing_the_leader_twice_loses_and_repeats_no_slot(backends::redis().await).await;
}
