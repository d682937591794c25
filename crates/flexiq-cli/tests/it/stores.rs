//! The CLI on every store: the shared demo-and-ops script the PostgreSQL and Redis tests run,
//! and the contract-floor exit code on SQLite.

use crate::fixture::flexiq;

/// A name no other test uses.
#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) fn unique(tag: &str) -> String {
    format!("{tag}{}", uuid::Uuid::new_v4().simple())
}

/// Runs the demo and a few ops commands on `url`, asserting the store's own answers.
#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) fn demo_and_ops(url: &str) {
    let v = flexiq(&["demo", "--jobs", "40", "--json", "--url", url, "--namespace", "cli"]).ok().json();
    assert_eq!(v["ok"], true, "{v}");
    let stats = flexiq(&["stats", "--json", "--url", url, "--namespace", "cli"]).ok().json();
    let total: u64 = stats.as_object().unwrap().values().map(|q| q["total"].as_u64().unwrap()).sum();
    assert_eq!(total, 40);
    let dead = flexiq(&["dlq", "list", "--json", "--url", url, "--namespace", "cli"]).ok().json();
    let dead_id = dead["items"][0]["id"].as_str().expect("a dead letter").to_string();
    flexiq(&["dlq", "retry", &dead_id, "--url", url, "--namespace", "cli"]).ok();
    flexiq(&["queue", "pause", "emails", "--url", url, "--namespace", "cli"]).ok();
    let paused = flexiq(&["queue", "paused", "--json", "--url", url, "--namespace", "cli"]).ok().json();
    assert_eq!(paused, serde_json::json!(["emails"]));
    flexiq(&["jobs", "list", "--after", "garbage", "--url", url, "--namespace", "cli"]).fails(2, "cursor");
    flexiq(&["migrate", "--url", url]).ok();
}

#[test]
fn storage_above_this_build_exits_6() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("floor.db");
    let db = db.to_str().unwrap();
    flexiq(&["migrate", "--url", db]).ok();
    let conn = rusqlite::Connection::open(db).unwrap();
    let floor = flexiq::CONTRACT_LEVEL + 1;
    conn.execute("UPDATE schema_meta SET contract_floor = ?1", [floor]).unwrap();
    drop(conn);
    flexiq(&["stats", "--url", db]).fails(6, &format!("contract level {floor}"));
}
