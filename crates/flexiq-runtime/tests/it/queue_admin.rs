//! Retention read-back and preview, settings, schema and the contract floor.

use flexiq_runtime::services::{RetentionSweepConfig, RetentionSweeper};
use flexiq_runtime::{ConnectOptions, Retention, RetentionTable};

use crate::assert_code;
use crate::common::{make_dead, manual, open, open_with};

#[tokio::test]
async fn effective_retention_is_none_until_a_sweep_publishes_it() {
    let q = open().await;
    assert!(q.effective_retention().await.unwrap().is_none());
    let r = Retention { dead_letter: Some(60), ..Default::default() };
    RetentionSweeper::new(&q, RetentionSweepConfig { retention: Some(r) }).unwrap().run_once().await.unwrap();
    let eff = q.effective_retention().await.unwrap().unwrap();
    assert!(eff.enabled && !eff.defaulted);
    assert_eq!(eff.namespace, "default");
    assert_eq!(eff.windows.get(RetentionTable::DeadLetter), Some(60_000), "seconds in, ms out");
    assert_eq!(eff.windows.get(RetentionTable::TaskLogs), None);
}

#[tokio::test]
async fn dry_run_retention_counts_without_deleting() {
    let q = open().await;
    let (q, clock) = manual(&q);
    make_dead(&q, "a").await;
    clock.advance(120_000);
    let defaults = q.dry_run_retention(None).await.unwrap();
    assert!(defaults.defaulted && defaults.enabled);
    assert_eq!(defaults.windows.get(RetentionTable::DeadLetter), Some(30 * 86_400_000));
    assert_eq!(defaults.counts.get(&RetentionTable::DeadLetter).copied().unwrap_or(0), 0);
    let short = Retention { dead_letter: Some(60), ..Default::default() };
    let preview = q.dry_run_retention(Some(short)).await.unwrap();
    assert!(!preview.defaulted);
    assert_eq!(preview.counts[&RetentionTable::DeadLetter], 1);
    assert_eq!(preview.total, 1);
    assert_eq!(preview.reference_time, q.now_ms());
    assert_eq!(q.dead_letters(10, 0).await.unwrap().len(), 1, "nothing deleted");
    let zero = Retention { job_errors: Some(0), ..Default::default() };
    assert_code!(q.dry_run_retention(Some(zero)).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn dry_run_retention_uses_the_configured_windows() {
    let r = Retention { task_logs: Some(10), ..Default::default() };
    let q = open_with(ConnectOptions { retention: Some(r), ..Default::default() }).await;
    let preview = q.dry_run_retention(None).await.unwrap();
    assert!(!preview.defaulted);
    assert_eq!(preview.windows.get(RetentionTable::TaskLogs), Some(10_000));
    assert_eq!(preview.windows.get(RetentionTable::DeadLetter), None);
}

#[tokio::test]
async fn settings_get_set_compare_and_delete() {
    let q = open().await;
    assert_eq!(q.get_setting("theme").await.unwrap(), None);
    q.set_setting("theme", "dark").await.unwrap();
    assert_eq!(q.get_setting("theme").await.unwrap().as_deref(), Some("dark"));
    assert!(!q.set_setting_if("theme", Some("light"), "blue").await.unwrap());
    assert!(q.set_setting_if("theme", Some("dark"), "blue").await.unwrap());
    assert!(q.set_setting_if("fresh", None, "1").await.unwrap());
    assert!(!q.set_setting_if("fresh", None, "2").await.unwrap());
    assert_eq!(q.list_settings().await.unwrap().len(), 2);
    assert!(q.delete_setting("theme").await.unwrap());
    assert!(!q.delete_setting("theme").await.unwrap());
    assert_code!(q.get_setting("").await, "INVALID_ARGUMENT");
    assert_code!(q.set_setting("", "v").await, "INVALID_ARGUMENT");
    assert_code!(q.set_setting("k", &"v".repeat(2 * 1024 * 1024)).await, "INVALID_ARGUMENT");
    assert_code!(q.set_setting_if("", None, "v").await, "INVALID_ARGUMENT");
    assert_code!(q.delete_setting("").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn migrate_is_idempotent_and_works_without_auto_migrate() {
    let migrated = open().await;
    let q =
        flexiq_runtime::connect(&migrated.url, ConnectOptions { auto_migrate: false, ..Default::default() })
            .await
            .unwrap();
    let again = q.migrate().await.unwrap();
    assert!(again.applied.is_empty(), "{again:?}");
    assert!(q.migrate().await.unwrap().applied.is_empty());
    q.enqueue("t", b"".to_vec(), Default::default()).await.unwrap();
}

#[tokio::test]
async fn contract_floor_reads_and_moves_within_this_build() {
    let q = open().await;
    assert!(q.min_contract().await.unwrap() >= 1);
    q.set_min_contract(i64::from(flexiq_runtime::core::CONTRACT_LEVEL)).await.unwrap();
    assert_eq!(q.min_contract().await.unwrap(), flexiq_runtime::core::CONTRACT_LEVEL);
    assert_code!(q.set_min_contract(0).await, "INVALID_ARGUMENT");
    assert_code!(
        q.set_min_contract(i64::from(flexiq_runtime::core::CONTRACT_LEVEL) + 1).await,
        "INVALID_ARGUMENT"
    );
}
