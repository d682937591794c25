//! Scheduler rounds where PostgreSQL's locking shows: a refused slot is rolled back to its own
//! savepoint while the round fires the other schedulers, and a scheduler another transaction
//! holds locked is skipped, not waited for, and fires once the lock is gone.

use flexiq_core::schedule::{CatchUp, JobTemplate, RepeatRule};
use flexiq_core::store::{FireSchedulersRequest, Inspect, QueueControl, Schedulers, UpsertSchedulerRequest};
use flexiq_core::EnqueueOptions;
use flexiq_store_pg::PgStore;

use crate::common::{admin, drop_schema, fresh_schema, now_ms, open};

fn every_second() -> RepeatRule {
    RepeatRule { catch_up: CatchUp::All { max: 5 }, ..RepeatRule::every(1_000) }
}

async fn upsert(s: &PgStore, id: &str, task: &str, now: i64) {
    let options = EnqueueOptions { queue: Some("cron".into()), ..Default::default() };
    let template = JobTemplate { task: task.into(), payload: b"{}".to_vec(), options };
    let req = UpsertSchedulerRequest { id: id.into(), rule: every_second(), template, now };
    s.upsert_job_scheduler(req).await.unwrap();
}

async fn fire(s: &PgStore, now: i64) -> Vec<(String, i64)> {
    let fired = s.fire_due_schedulers(FireSchedulersRequest { limit: 10, now }).await.unwrap();
    fired.into_iter().map(|f| (f.scheduler_id, f.slot_ms)).collect()
}

#[tokio::test]
async fn a_refused_slot_rolls_back_alone_and_the_round_fires_the_rest() {
    let schema = fresh_schema("schedrev");
    let s = open(&schema, 2).await;
    let t = now_ms();
    s.revoke_task("bad").await.unwrap();
    // Same slots, so the refused scheduler ("a") comes first in the round.
    upsert(&s, "a", "bad", t).await;
    upsert(&s, "b", "good", t).await;
    let fired = fire(&s, t + 2_000).await;
    assert_eq!(fired, vec![("b".to_string(), t + 1_000), ("b".to_string(), t + 2_000)]);
    let a = s.get_job_scheduler("a").await.unwrap().unwrap();
    assert_eq!(
        (a.next_run_ms, a.last_run_ms, a.iterations),
        (Some(t + 3_000), None, 0),
        "moved past the refused slots without counting them"
    );
    let rows: i64 = admin()
        .await
        .query_one(&format!("SELECT count(*) FROM \"{schema}\".jobs WHERE task = 'bad'"), &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(rows, 0, "nothing of the refused enqueue was kept");
    assert_eq!(s.stats(Some("cron")).await.unwrap().pending, 2);
    assert!(fire(&s, t + 2_000).await.is_empty(), "the refused slots are not retried");
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}

#[tokio::test]
async fn a_scheduler_locked_elsewhere_is_skipped_then_fires() {
    let schema = fresh_schema("schedlock");
    let s = open(&schema, 2).await;
    let t = now_ms();
    upsert(&s, "a", "tick", t).await;
    upsert(&s, "b", "tick", t).await;
    let holder = admin().await;
    holder
        .batch_execute(&format!("BEGIN; SELECT 1 FROM \"{schema}\".job_schedulers WHERE id = 'a' FOR UPDATE"))
        .await
        .unwrap();
    assert_eq!(
        fire(&s, t + 1_000).await,
        vec![("b".to_string(), t + 1_000)],
        "a locked scheduler is skipped"
    );
    holder.batch_execute("COMMIT").await.unwrap();
    assert_eq!(fire(&s, t + 1_000).await, vec![("a".to_string(), t + 1_000)]);
    assert_eq!(s.stats(Some("cron")).await.unwrap().pending, 2);
    let b = s.get_job_scheduler("b").await.unwrap().unwrap();
    let fired = s.get_job_scheduler("a").await.unwrap().unwrap();
    assert_eq!((fired.iterations, b.iterations), (1, 1));
    flexiq_core::Store::close(&s).await.unwrap();
    drop_schema(&schema).await;
}
