//! Job schedulers through the `Queue` and the maintenance services: upsert, read, page,
//! remove and count with bad input; firing only by the elected cleaner, on its short tick; and
//! a running worker executing each slot of a scheduler once.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_runtime::services::{ElectorConfig, Maintainer, MaintenanceConfig, SchedulerFireConfig};
use flexiq_runtime::{CatchUp, EnqueueOptions, JobStatus, JobTemplate, RepeatRule, Worker, WorkerConfig};

use crate::assert_code;
use crate::common::{eventually, fast_config, manual, open, T0};

fn every(every_ms: u64, limit: Option<u64>) -> RepeatRule {
    RepeatRule { limit, ..RepeatRule::every(every_ms) }
}

fn template(task: &str) -> JobTemplate {
    JobTemplate { task: task.into(), payload: b"{}".to_vec(), options: EnqueueOptions::default() }
}

#[tokio::test]
async fn schedulers_are_upserted_read_paged_and_removed() {
    let q = open().await;
    let (q, _clock) = manual(&q);
    let s = q.upsert_job_scheduler("hourly", every(3_600_000, None), template("report")).await.unwrap();
    assert_eq!(s.next_run_ms, Some(T0 + 3_600_000));
    assert_eq!(q.get_job_scheduler("hourly").await.unwrap(), Some(s));
    for i in 0..3 {
        q.upsert_job_scheduler(&format!("s{i}"), every(1_000, None), template("t")).await.unwrap();
    }
    assert_eq!(q.count_job_schedulers().await.unwrap(), 4);
    let first = q.list_job_schedulers(2, None).await.unwrap();
    let ids: Vec<_> = first.items.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["hourly", "s0"]);
    let rest = q.list_job_schedulers(10, first.next_cursor.as_deref()).await.unwrap();
    assert_eq!(rest.items.len(), 2);
    assert!(rest.next_cursor.is_none());
    assert!(q.remove_job_scheduler("s0").await.unwrap());
    assert!(!q.remove_job_scheduler("s0").await.unwrap());
    assert_eq!(q.get_job_scheduler("s0").await.unwrap(), None);

    assert_code!(q.list_job_schedulers(0, None).await, "INVALID_ARGUMENT");
    assert_code!(q.list_job_schedulers(-5, None).await, "INVALID_ARGUMENT");
    assert_code!(q.list_job_schedulers(10, Some("garbage")).await, "INVALID_ARGUMENT");
    assert_code!(q.get_job_scheduler("").await, "INVALID_ARGUMENT");
    let cron = RepeatRule::cron;
    assert_code!(
        q.upsert_job_scheduler("x", cron("99 * * * *", None), template("t")).await,
        "INVALID_ARGUMENT"
    );
    assert_code!(
        q.upsert_job_scheduler("x", cron("* * * * *", Some("Moon/Base")), template("t")).await,
        "INVALID_ARGUMENT"
    );
    let mut delayed = template("t");
    delayed.options.delay_ms = Some(10);
    assert_code!(q.upsert_job_scheduler("x", every(1_000, None), delayed).await, "INVALID_ARGUMENT");
    assert_eq!(q.count_job_schedulers().await.unwrap(), 3, "nothing refused was stored");
}

#[tokio::test]
async fn only_the_elected_cleaner_fires_and_each_slot_once() {
    let q = open().await;
    let (q, clock) = manual(&q);
    let config = MaintenanceConfig {
        interval: Duration::from_millis(100),
        elector: ElectorConfig { ttl: Duration::from_secs(1), ..Default::default() },
        ..Default::default()
    };
    let a = Maintainer::new(&q, config.clone(), "a").unwrap();
    let b = Maintainer::new(&q, config.clone(), "b").unwrap();
    q.upsert_job_scheduler("beat", every(100, Some(4)), template("tick")).await.unwrap();
    assert!(b.fire_schedulers().await.unwrap().is_none(), "no round elected b yet");
    clock.advance(100);
    assert_eq!(a.run_once().await.unwrap().schedulers.unwrap().fired, 1);
    assert!(b.run_once().await.unwrap().schedulers.is_none(), "a holds the lease");
    assert!(b.fire_schedulers().await.unwrap().is_none());
    clock.advance(100);
    assert_eq!(a.fire_schedulers().await.unwrap().unwrap().fired, 1, "the tick between rounds");
    assert_eq!(a.fire_schedulers().await.unwrap().unwrap().fired, 0, "the slot fired already");
    clock.advance(1_000);
    let took_over = b.run_once().await.unwrap();
    assert!(took_over.election.leader);
    assert_eq!(took_over.schedulers.unwrap().fired, 1, "latest of the missed slots");
    clock.advance(100);
    assert_eq!(b.fire_schedulers().await.unwrap().unwrap().fired, 1);
    clock.advance(100);
    assert_eq!(b.fire_schedulers().await.unwrap().unwrap().fired, 0, "the limit of 4 was reached");
    assert_eq!(q.stats().await.unwrap().pending, 4);
    let bad = MaintenanceConfig {
        schedulers: SchedulerFireConfig { tick: Duration::ZERO, ..Default::default() },
        ..config
    };
    assert_code!(Maintainer::new(&q, bad, "c"), "INVALID_ARGUMENT");
}

#[tokio::test]
async fn a_running_worker_executes_each_slot_of_a_scheduler() {
    let q = open().await;
    let runs = Arc::new(AtomicU32::new(0));
    let mut config: WorkerConfig = fast_config();
    if let Some(m) = config.maintenance.as_mut() {
        m.schedulers.tick = Duration::from_millis(20);
    }
    let mut w = Worker::new(q.queue.clone(), config).unwrap();
    let r = runs.clone();
    w.register("tick", move |_ctx| {
        let r = r.clone();
        async move {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(None)
        }
    })
    .unwrap();
    let mut rule = every(50, Some(3));
    rule.catch_up = CatchUp::All { max: 10 };
    q.upsert_job_scheduler("beat", rule, template("tick")).await.unwrap();
    let running = w.start();
    eventually(10, "three slots completed", || async { q.stats().await.unwrap().completed == 3 }).await;
    running.shutdown().await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let jobs = q.list_jobs(&Default::default(), 10, 0).await.unwrap();
    assert!(jobs.iter().all(|j| j.status == JobStatus::Completed && j.task == "tick"));
    let s = q.get_job_scheduler("beat").await.unwrap().unwrap();
    assert_eq!((s.iterations, s.next_run_ms), (3, None));
}
