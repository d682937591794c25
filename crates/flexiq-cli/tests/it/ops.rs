//! `stats`, `queue`, `requeue`, `migrate`, `contract`, `retention`, `settings` and `workers`.

use crate::fixture::{claim_one, flexiq, seeded};

#[tokio::test]
async fn stats_show_every_queue_in_table_and_json() {
    let s = seeded().await;
    let human = s.run(&["stats"]).ok();
    for needle in ["mail", "later", "completed", "paused", "(all)"] {
        assert!(human.stdout.contains(needle), "missing {needle:?}:\n{}", human.stdout);
    }
    let v = s.run(&["stats", "--json"]).ok().json();
    assert_eq!(v["mail"]["completed"], 5);
    assert_eq!(v["mail"]["dead"], 1);
    assert_eq!(v["later"]["pending"], 3);
    assert_eq!(v["later"]["paused"], true);
    let one = s.run(&["stats", "--queue", "later", "--json"]).ok().json();
    assert_eq!(one.as_object().unwrap().len(), 1);
    assert_eq!(one["later"]["total"], 3);
    // FLEXIQ_URL stands in for --url.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flexiq"))
        .args(["stats", "--json"])
        .env("FLEXIQ_URL", &s.url)
        .output()
        .unwrap();
    assert!(out.status.success());
    let env_v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env_v["mail"]["completed"], 5);
    // Another namespace of the same store is empty.
    let other = s.run(&["stats", "--json", "--namespace", "elsewhere"]).ok().json();
    assert!(other.as_object().unwrap().values().all(|q| q["total"] == 0));
}

#[tokio::test]
async fn queue_controls_are_persisted() {
    let s = seeded().await;
    assert_eq!(s.run(&["queue", "paused", "--json"]).ok().json(), serde_json::json!(["later"]));
    s.run(&["queue", "resume", "later"]).ok();
    assert!(s.run(&["queue", "paused"]).ok().stdout.contains("no paused queues"));
    assert!(s.run(&["queue", "pause", "mail"]).ok().stdout.contains("queue mail paused"));
    let v = s.run(&["queue", "rate-limit", "mail", "10/s", "--json"]).ok().json();
    assert_eq!(v["rate_limit"], "10/s");
    let v = s.run(&["queue", "concurrency", "mail", "4", "--json"]).ok().json();
    assert_eq!(v["concurrency"], 4);
    let stats = s.run(&["stats", "--json"]).ok().json();
    assert_eq!(stats["mail"]["paused"], true);
    assert_eq!(stats["mail"]["rate_limit"], "10/s");
    assert_eq!(stats["mail"]["concurrency"], 4);
    assert!(s.run(&["stats"]).ok().stdout.contains("rate 10/s, max 4 running"));
    let q = s.queue().await;
    let cfg = q.queue_config("mail").await.unwrap();
    assert!(cfg.paused);
    assert_eq!(cfg.concurrency, Some(4));
    s.run(&["queue", "rate-limit", "mail", "off"]).ok();
    s.run(&["queue", "concurrency", "mail", "off"]).ok();
    let cfg = q.queue_config("mail").await.unwrap();
    assert_eq!((cfg.rate_limit, cfg.concurrency), (None, None));
    q.close().await.unwrap();
}

#[tokio::test]
async fn task_revoke_refuses_new_enqueues_and_unrevoke_lifts_it() {
    let s = seeded().await;
    let q = s.queue().await;
    let before = q.enqueue("report.build", b"{}".to_vec(), Default::default()).await.unwrap();
    assert!(s.run(&["task", "revoked"]).ok().stdout.contains("no revoked tasks"));
    let v = s.run(&["task", "revoke", "report.build", "--json"]).ok().json();
    assert_eq!(v["revoked"], true);
    assert_eq!(s.run(&["task", "revoked", "--json"]).ok().json(), serde_json::json!(["report.build"]));
    let err = q.enqueue("report.build", b"{}".to_vec(), Default::default()).await.unwrap_err();
    assert_eq!(err.code(), "TASK_REVOKED", "{err}");
    assert_eq!(
        q.get_job(before.as_str()).await.unwrap().unwrap().status,
        flexiq::JobStatus::Pending,
        "the job enqueued before the revocation is untouched"
    );
    let v = s.run(&["task", "unrevoke", "report.build", "--json"]).ok().json();
    assert_eq!(v["was_revoked"], true);
    assert!(s.run(&["task", "unrevoke", "report.build"]).ok().stdout.contains("was not revoked"));
    q.enqueue("report.build", b"{}".to_vec(), Default::default()).await.unwrap();
    s.run(&["task", "revoke", ""]).fails(2, "task name");
    q.close().await.unwrap();
}

#[tokio::test]
async fn requeue_puts_a_stuck_running_job_back() {
    let s = seeded().await;
    let q = s.queue().await;
    let opts = flexiq::EnqueueOptions { queue: Some("stuck".into()), ..Default::default() };
    q.enqueue("stuck.job", b"{}".to_vec(), opts).await.unwrap();
    let id = claim_one(&q, "stuck").await;
    assert_eq!(q.get_job(&id).await.unwrap().unwrap().status, flexiq::JobStatus::Running);
    let v = s.run(&["requeue", &id, "--json"]).ok().json();
    assert_eq!(v["requeued"], true);
    assert_eq!(q.get_job(&id).await.unwrap().unwrap().status, flexiq::JobStatus::Pending);
    s.run(&["requeue", &id]).fails(4, "is pending, not running");
    q.close().await.unwrap();
}

#[test]
fn migrate_creates_storage_then_reports_it_current() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fresh.db");
    let db = db.to_str().unwrap();
    let first = flexiq(&["migrate", "--json", "--url", db]).ok().json();
    // Either the versions applied are listed, or the store migrated fresh storage as it opened.
    let listed = !first["applied"].as_array().unwrap().is_empty();
    assert!(listed != (first["migrated_on_open"] == true), "{first}");
    let again = flexiq(&["migrate", "--json", "--url", db]).ok().json();
    assert!(again["applied"].as_array().unwrap().is_empty());
    assert_eq!(again["migrated_on_open"], false);
    assert!(flexiq(&["migrate", "--url", db]).ok().stdout.contains("already current"));
    assert!(flexiq(&["stats", "--url", db]).ok().stdout.contains("no queues"));
}

#[test]
fn contract_show_and_raise() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let db = db.to_str().unwrap();
    flexiq(&["migrate", "--url", db]).ok();
    let v = flexiq(&["contract", "show", "--json", "--url", db]).ok().json();
    assert_eq!(v["build_level"], flexiq::CONTRACT_LEVEL);
    let floor = v["floor"].as_u64().unwrap();
    assert!(flexiq(&["contract", "show", "--url", db]).ok().stdout.contains("contract floor"));
    let level = flexiq::CONTRACT_LEVEL.to_string();
    let raised = flexiq(&["contract", "raise", &level, "--json", "--url", db]).ok().json();
    assert_eq!(raised["floor"], flexiq::CONTRACT_LEVEL);
    assert!(floor <= u64::from(flexiq::CONTRACT_LEVEL));
}

#[tokio::test]
async fn retention_preview_and_effective() {
    let s = seeded().await;
    let v = s.run(&["retention", "preview", "--json"]).ok().json();
    assert_eq!(v["defaulted"], true);
    assert_eq!(v["enabled"], true);
    assert_eq!(v["windows"]["task_logs"], 7 * 86_400_000u64);
    assert_eq!(v["total"], 0);
    // A one-second window on dead letters catches the seeded one once it is a second old.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let v = s.run(&["retention", "preview", "--dead-letter", "1", "--json"]).ok().json();
    assert_eq!(v["defaulted"], false);
    assert_eq!(v["counts"]["dead_letter"], 1);
    assert!(v["windows"]["archived_jobs"].is_null());
    let human = s.run(&["retention", "preview", "--dead-letter", "1"]).ok();
    assert!(
        human.stdout.contains("kept forever") && human.stdout.contains("dead_letter"),
        "{}",
        human.stdout
    );
    let eff = s.run(&["retention", "effective", "--json"]).ok();
    let eff_v = eff.json();
    assert!(eff_v.is_null() || eff_v["windows"].is_object(), "{eff_v}");
}

#[tokio::test]
async fn settings_set_get_list_delete() {
    let s = seeded().await;
    s.run(&["settings", "set", "theme", "dark"]).ok();
    assert_eq!(s.run(&["settings", "get", "theme"]).ok().stdout.trim(), "dark");
    assert_eq!(s.run(&["settings", "get", "theme", "--json"]).ok().json()["value"], "dark");
    s.run(&["settings", "set", "neg", "-1"]).ok();
    let all = s.run(&["settings", "list", "--json"]).ok().json();
    assert_eq!(all["theme"], "dark");
    assert_eq!(all["neg"], "-1");
    assert!(s.run(&["settings", "list"]).ok().stdout.contains("theme"));
    s.run(&["settings", "set", "retention:note", "x", "--force"]).ok();
    assert!(s.run(&["settings", "delete", "theme"]).ok().stdout.contains("deleted"));
    s.run(&["settings", "get", "theme"]).fails(3, "theme");
}

#[tokio::test]
async fn workers_lists_registered_workers() {
    let s = seeded().await;
    let v = s.run(&["workers", "--json"]).ok().json();
    let workers = v.as_array().expect("a json array");
    for w in workers {
        assert!(w["id"].is_string() && w["heartbeat_at"].is_i64(), "{w}");
    }
    let human = s.run(&["workers"]).ok();
    assert!(human.stdout.contains("last heartbeat") || human.stdout.contains("no workers registered"));
}
