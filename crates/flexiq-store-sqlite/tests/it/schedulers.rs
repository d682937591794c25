//! Job schedulers on the file: the schema version 8 upgrade (a version 7 file gains
//! `job_schedulers`), a refused slot that is skipped without holding up the round's other
//! schedulers or leaving a partial catch-up behind, and a row this build cannot read, which a
//! round leaves as it is and an upsert repairs.

use std::path::Path;

use flexiq_core::schedule::{CatchUp, JobTemplate, RepeatRule};
use flexiq_core::store::{
    FireSchedulersRequest, Inspect, ListSchedulersRequest, QueueControl, Schedulers, Schema,
    UpsertSchedulerRequest,
};
use flexiq_core::{EnqueueOptions, JobScheduler, Store};
use flexiq_store_sqlite::{SqliteOptions, SqliteStore};

use crate::T0;

fn raw(path: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
    conn
}

fn every(every_ms: u64, catch_up: CatchUp) -> RepeatRule {
    RepeatRule { catch_up, ..RepeatRule::every(every_ms) }
}

async fn upsert(s: &SqliteStore, id: &str, task: &str, rule: RepeatRule, now: i64) -> JobScheduler {
    let options = EnqueueOptions { queue: Some("cron".into()), ..Default::default() };
    let template = JobTemplate { task: task.into(), payload: b"p".to_vec(), options };
    s.upsert_job_scheduler(UpsertSchedulerRequest { id: id.into(), rule, template, now }).await.unwrap()
}

async fn fire(s: &SqliteStore, limit: u32, now: i64) -> Vec<(String, i64)> {
    let fired = s.fire_due_schedulers(FireSchedulersRequest { limit, now }).await.unwrap();
    fired.into_iter().map(|f| (f.scheduler_id, f.slot_ms)).collect()
}

async fn get(s: &SqliteStore, id: &str) -> JobScheduler {
    s.get_job_scheduler(id).await.unwrap().unwrap_or_else(|| panic!("scheduler {id} missing"))
}

async fn pending(s: &SqliteStore) -> u64 {
    s.stats(Some("cron")).await.unwrap().pending
}

/// Turns a current file back into a version 7 one: no scheduler table, the version row at 7.
fn downgrade_to_version_7(path: &Path) {
    let conn = raw(path);
    conn.execute_batch("DROP TABLE job_schedulers; UPDATE schema_meta SET version = 7 WHERE id = 1;")
        .unwrap();
    let left: i64 = conn
        .query_row("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'job_schedulers%'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0, "the downgraded file has no scheduler table or index");
}

#[tokio::test]
async fn a_version_7_file_gains_the_scheduler_table_and_fires_once_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v7.db");
    SqliteStore::open(&path, SqliteOptions::default()).unwrap().close().await.unwrap();
    downgrade_to_version_7(&path);

    let no_ddl =
        SqliteStore::open(&path, SqliteOptions { auto_migrate: false, ..Default::default() }).unwrap();
    let err = no_ddl.count_job_schedulers().await.unwrap_err();
    assert_eq!(err.code(), "CONFLICT", "a version 7 file without auto_migrate asks for migrate(): {err}");
    assert!(err.to_string().contains("migrate()"), "{err}");
    let applied = no_ddl.migrate().await.unwrap().applied;
    assert_eq!(
        applied,
        vec![8, 9, 10],
        "the scheduler step runs, then the events step again (a no-op) and the start-report step"
    );
    assert_eq!(no_ddl.count_job_schedulers().await.unwrap(), 0);
    no_ddl.close().await.unwrap();
    downgrade_to_version_7(&path);

    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    assert!(s.migrate().await.unwrap().applied.is_empty(), "the open already migrated the file");
    upsert(&s, "beat", "tick", every(1_000, CatchUp::Latest), T0).await;
    assert_eq!(fire(&s, 10, T0 + 1_000).await, vec![("beat".to_string(), T0 + 1_000)]);
    assert_eq!(pending(&s).await, 1);
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_refused_catch_up_is_skipped_whole_and_the_round_fires_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("refused.db"), SqliteOptions::default()).unwrap();
    s.revoke_task("gone").await.unwrap();
    // Both are three slots behind; the revoked one is first in due order.
    upsert(&s, "a-revoked", "gone", every(1_000, CatchUp::All { max: 10 }), T0).await;
    upsert(&s, "b-live", "tick", every(1_000, CatchUp::All { max: 10 }), T0).await;
    let fired = fire(&s, 10, T0 + 3_000).await;
    let want: Vec<(String, i64)> = (1..=3).map(|k| ("b-live".to_string(), T0 + k * 1_000)).collect();
    assert_eq!(fired, want, "the refused scheduler fires nothing and holds nobody up");
    assert_eq!(pending(&s).await, 3, "no job of the refused catch-up is left behind");

    let skipped = get(&s, "a-revoked").await;
    assert_eq!(
        (skipped.next_run_ms, skipped.last_run_ms, skipped.iterations),
        (Some(T0 + 4_000), None, 0),
        "it moves past the refused slots without counting them"
    );
    s.unrevoke_task("gone").await.unwrap();
    assert_eq!(
        fire(&s, 10, T0 + 4_000).await,
        vec![("a-revoked".to_string(), T0 + 4_000), ("b-live".to_string(), T0 + 4_000)]
    );
    assert_eq!(get(&s, "a-revoked").await.iterations, 1);
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_refused_slot_is_not_counted_against_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let s = SqliteStore::open(dir.path().join("limit.db"), SqliteOptions::default()).unwrap();
    let mut rule = every(1_000, CatchUp::Latest);
    rule.limit = Some(1);
    upsert(&s, "once", "gone", rule, T0).await;
    s.revoke_task("gone").await.unwrap();
    assert!(fire(&s, 10, T0 + 1_000).await.is_empty());
    assert_eq!(get(&s, "once").await.next_run_ms, Some(T0 + 2_000), "a limit of one still has its one");
    s.unrevoke_task("gone").await.unwrap();
    assert_eq!(fire(&s, 10, T0 + 2_000).await, vec![("once".to_string(), T0 + 2_000)]);
    let done = get(&s, "once").await;
    assert_eq!((done.next_run_ms, done.iterations), (None, 1));
    s.close().await.unwrap();
}

#[tokio::test]
async fn an_unreadable_row_is_left_alone_by_rounds_and_repaired_by_an_upsert() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unreadable.db");
    let s = SqliteStore::open(&path, SqliteOptions::default()).unwrap();
    upsert(&s, "a-newer", "tick", every(1_000, CatchUp::Latest), T0).await;
    upsert(&s, "b-plain", "tick", every(1_000, CatchUp::Latest), T0).await;
    assert_eq!(fire(&s, 10, T0 + 1_000).await.len(), 2);
    // As a newer build might have written it: a rule this build does not know.
    let spec = r#"{"rule":{"repeat":{"lunar":{}}},"template":{}}"#;
    raw(&path).execute("UPDATE job_schedulers SET spec = ?1 WHERE id = 'a-newer'", [spec]).unwrap();

    // First in due order, yet it neither fires nor uses up the round's limit of one.
    assert_eq!(fire(&s, 1, T0 + 2_000).await, vec![("b-plain".to_string(), T0 + 2_000)]);
    let kept: (String, Option<i64>) = raw(&path)
        .query_row("SELECT spec, next_run_ms FROM job_schedulers WHERE id = 'a-newer'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(kept, (spec.to_string(), Some(T0 + 2_000)), "the round does not rewrite it");
    let err = s.get_job_scheduler("a-newer").await.unwrap_err();
    assert!(err.to_string().contains("a-newer"), "the error names the scheduler: {err}");
    let err = s.list_job_schedulers(ListSchedulersRequest { limit: 10, after: None }).await.unwrap_err();
    assert!(err.to_string().contains("a-newer"), "{err}");

    let repaired = upsert(&s, "a-newer", "tick", every(1_000, CatchUp::Latest), T0 + 2_500).await;
    assert_eq!(
        (repaired.iterations, repaired.last_run_ms, repaired.created_at, repaired.next_run_ms),
        (1, Some(T0 + 1_000), T0, Some(T0 + 3_000)),
        "the upsert keeps the stored count, last slot and creation time"
    );
    assert_eq!(get(&s, "a-newer").await, repaired);
    s.close().await.unwrap();
}
