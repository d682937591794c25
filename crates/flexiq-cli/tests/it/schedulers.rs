//! `flexiq schedulers list | show | remove` on every store: schedulers made through the
//! runtime, read and removed through the CLI in tables and JSON, bad ids, limits and cursors
//! refused with their exit codes.

use flexiq::{connect, ConnectOptions, EnqueueOptions, JobTemplate, RepeatRule};
use serde_json::{json, Value};

use crate::fixture::{flexiq, Run};

fn cli(url: &str) -> impl Fn(&[&str]) -> Run + '_ {
    move |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        flexiq(&all)
    }
}

async fn schedulers_script(url: String) {
    let q = connect(&url, ConnectOptions::default()).await.expect("connect");
    let run = cli(&url);
    assert!(run(&["schedulers", "list"]).ok().stdout.contains("no job schedulers"));
    let template = |task: &str| JobTemplate {
        task: task.into(),
        payload: br#"{"k":1}"#.to_vec(),
        options: EnqueueOptions { queue: Some("cron".into()), ..Default::default() },
    };
    let berlin = RepeatRule::cron("0 9 * * MON-FRI", Some("Europe/Berlin"));
    let made = q.upsert_job_scheduler("morning", berlin, template("report")).await.unwrap();
    let mut limited = RepeatRule::every(60_000);
    limited.limit = Some(5);
    q.upsert_job_scheduler("minutely", limited, template("ping")).await.unwrap();

    let v = run(&["schedulers", "show", "morning", "--json"]).ok().json();
    assert_eq!(v["id"], "morning");
    assert_eq!(v["task"], "report");
    assert_eq!(v["queue"], "cron");
    assert_eq!(v["payload"], r#"{"k":1}"#);
    assert_eq!(v["next_run_ms"], json!(made.next_run_ms));
    assert_eq!(v["iterations"], 0);
    assert_eq!(v["rule"]["repeat"]["cron"]["tz"], "Europe/Berlin");
    let human = run(&["schedulers", "show", "morning"]).ok().stdout;
    assert!(human.contains("cron 0 9 * * MON-FRI (Europe/Berlin)"), "{human}");
    assert!(human.contains("UTC"), "times name their zone: {human}");

    let page = run(&["schedulers", "list", "--limit", "1", "--json"]).ok().json();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert_eq!(page["items"][0]["id"], "minutely", "ids in order");
    let cursor = page["next_cursor"].as_str().expect("a second page").to_string();
    let rest = run(&["schedulers", "list", "--after", &cursor, "--json"]).ok().json();
    assert_eq!(rest["items"][0]["id"], "morning");
    assert_eq!(rest["next_cursor"], Value::Null);
    let table = run(&["schedulers", "list"]).ok().stdout;
    assert!(table.contains("every 60000 ms, limit 5") && table.contains("morning"), "{table}");

    let v = run(&["schedulers", "remove", "minutely", "--json"]).ok().json();
    assert_eq!(v, json!({ "id": "minutely", "removed": true }));
    assert!(run(&["schedulers", "remove", "minutely"]).ok().stdout.contains("no job scheduler minutely"));
    assert_eq!(q.count_job_schedulers().await.unwrap(), 1);

    run(&["schedulers", "show", "minutely"]).fails(3, "minutely");
    run(&["schedulers", "show", ""]).fails(2, "scheduler id");
    run(&["schedulers", "list", "--limit", "0"]).fails(2, "limit");
    run(&["schedulers", "list", "--limit", "-3"]).fails(2, "limit");
    run(&["schedulers", "list", "--after", "garbage"]).fails(2, "cursor");
    q.close().await.unwrap();
}

#[tokio::test]
async fn scheduler_commands_on_sqlite() {
    crate::stores::on_sqlite("schedulers", schedulers_script).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn scheduler_commands_on_postgres() {
    crate::stores::on_postgres("schedulers", schedulers_script).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn scheduler_commands_on_redis() {
    crate::stores::on_redis("schedulers", schedulers_script).await;
}
