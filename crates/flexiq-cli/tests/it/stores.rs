//! The CLI on every store: the demo and the ops commands on PostgreSQL and Redis (each test
//! in its own schema or key prefix, removed afterwards), and the contract-floor exit code.

use fred::prelude::*;
use fred::types::{ClusterHash, CustomCommand};

use crate::fixture::flexiq;

fn pg_url() -> String {
    std::env::var("FLEXIQ_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

fn redis_url() -> String {
    std::env::var("FLEXIQ_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string())
}

fn unique(tag: &str) -> String {
    format!("{tag}{}", uuid::Uuid::new_v4().simple())
}

/// Runs the demo and a few ops commands on `url`, asserting the store's own answers.
fn demo_and_ops(url: &str) {
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

#[tokio::test]
async fn demo_and_ops_on_postgres() {
    let schema = unique("fq_cli_");
    let url = format!("{}?schema={schema}", pg_url());
    let result = std::panic::catch_unwind(|| demo_and_ops(&url));
    let (client, conn) = tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls).await.expect("connect to postgres");
    tokio::spawn(conn);
    client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE")).await.expect("drop schema");
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

/// Deletes every key whose name contains `prefix` with SCAN + UNLINK.
async fn delete_prefix(prefix: &str) {
    let client = Builder::from_config(Config::from_url(&redis_url()).expect("redis url")).build().expect("client");
    client.init().await.expect("connect to redis");
    let mut cursor = "0".to_string();
    loop {
        let (next, keys): (String, Vec<String>) = client
            .custom(
                CustomCommand::new_static("SCAN", ClusterHash::Random, false),
                vec![cursor.clone(), "MATCH".into(), format!("*{prefix}*"), "COUNT".into(), "1000".into()],
            )
            .await
            .expect("scan");
        if !keys.is_empty() {
            let _: i64 = client.unlink(keys).await.expect("unlink");
        }
        if next == "0" {
            break;
        }
        cursor = next;
    }
    let _ = client.quit().await;
}

#[tokio::test]
async fn demo_and_ops_on_redis() {
    let prefix = unique("fqcli");
    let url = format!("{}?prefix={prefix}", redis_url());
    let result = std::panic::catch_unwind(|| demo_and_ops(&url));
    delete_prefix(&prefix).await;
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn storage_above_this_build_exits_6() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("floor.db");
    let db = db.to_str().unwrap();
    flexiq(&["migrate", "--url", db]).ok();
    let conn = rusqlite::Connection::open(db).unwrap();
    let floor = flexiq_core::CONTRACT_LEVEL + 1;
    conn.execute("UPDATE schema_meta SET contract_floor = ?1", [floor]).unwrap();
    drop(conn);
    flexiq(&["stats", "--url", db]).fails(6, &format!("contract level {floor}"));
}
