//! The CLI on every store: the shared demo-and-ops script the PostgreSQL and Redis tests run,
//! and the contract-floor exit code on SQLite.

use crate::fixture::flexiq;

/// A name no other test uses.
#[cfg(any(feature = "postgres", feature = "redis"))]
pub(crate) fn unique(tag: &str) -> String {
    format!("{tag}{}", uuid::Uuid::new_v4().simple())
}

/// Runs `script` with the URL of a fresh SQLite file named for `tag`, removed afterwards.
pub(crate) async fn on_sqlite<F, Fut>(tag: &str, script: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    script(format!("sqlite://{}", dir.path().join(format!("{tag}.db")).display())).await;
}

/// Runs `script` with the URL of a PostgreSQL schema of its own (named for `tag`), drops the
/// schema whatever the script did, then re-raises its failure.
#[cfg(feature = "postgres")]
pub(crate) async fn on_postgres<F, Fut>(tag: &str, script: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let base =
        std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let schema = unique(&format!("fq_cli{tag}_"));
    let result = tokio::spawn(script(format!("{base}?schema={schema}"))).await;
    let (client, conn) = tokio_postgres::connect(&base, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(conn);
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.expect("drop schema");
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Runs `script` with the URL of a Redis key prefix of its own (named for `tag`), deletes the
/// prefix's keys whatever the script did, then re-raises its failure.
#[cfg(feature = "redis")]
pub(crate) async fn on_redis<F, Fut>(tag: &str, script: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let prefix = unique(&format!("fqcli{tag}"));
    let result = tokio::spawn(script(format!("{}?prefix={prefix}", crate::redis::redis_url()))).await;
    flexiq_conformance::redis_kit::delete_prefix(&crate::redis::redis_url(), &prefix).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
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
