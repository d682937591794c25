//! `flexiq events tail | last | publish | trim | enable | disable | status` on every store:
//! a tail in its own process woken by an enqueue from this one, a tail from the start in JSON
//! lines, custom events, trimming and the switch; bad ids, counts, lengths and data refused
//! with their exit codes.

use std::process::{Command, Stdio};
use std::time::Duration;

use flexiq::{connect, ConnectOptions, EnqueueOptions};
use serde_json::{json, Value};

use crate::fixture::{flexiq, Run};

fn cli(url: &str) -> impl Fn(&[&str]) -> Run + '_ {
    move |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        flexiq(&all)
    }
}

fn lines(run: &Run) -> Vec<Value> {
    run.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}"))).collect()
}

async fn events_script(url: String) {
    let q = connect(&url, ConnectOptions::default()).await.expect("connect");
    let run = cli(&url);
    assert!(run(&["events", "last"]).ok().stdout.contains("no events"));
    let first = q.enqueue("send", b"{}".to_vec(), EnqueueOptions::default()).await.unwrap();

    // A tail in another process, started at the end, sees the next enqueue and exits.
    let live = Command::new(env!("CARGO_BIN_EXE_flexiq"))
        .args(["events", "tail", "--count", "1", "--json", "--url", &url])
        .env_remove("FLEXIQ_URL")
        .env_remove("FLEXIQ_NAMESPACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tail");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let second = q.enqueue("send", b"{}".to_vec(), EnqueueOptions::default()).await.unwrap();
    let out = tokio::task::spawn_blocking(move || live.wait_with_output()).await.unwrap().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!((got["kind"].clone(), got["job_id"].clone()), (json!("enqueued"), json!(second.to_string())));

    let all = lines(&run(&["events", "tail", "--from-start", "--count", "2", "--json"]).ok());
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["job_id"], json!(first.to_string()));
    assert_eq!(all[1]["id"], got["id"]);
    let after = all[0]["id"].as_str().unwrap().to_string();
    let resumed = lines(&run(&["events", "tail", "--after", &after, "--count", "1", "--json"]).ok());
    assert_eq!(resumed[0]["id"], got["id"], "resuming after an id starts right after it");
    let human = run(&["events", "tail", "--from-start", "--count", "1"]).ok().stdout;
    assert!(
        human.contains("enqueued") && human.contains(&format!("job {first}")) && human.contains("UTC"),
        "{human}"
    );

    let published = run(&["events", "publish", "deploy.done", "--data", r#"{"v":3}"#, "--json"]).ok().json();
    let custom = lines(
        &run(&["events", "tail", "--from-start", "--kind", "deploy.done", "--count", "1", "--json"]).ok(),
    );
    assert_eq!(
        (custom[0]["id"].clone(), custom[0]["data"].clone()),
        (published["id"].clone(), json!({"v": 3}))
    );
    assert_eq!(run(&["events", "last", "--json"]).ok().json()["last_event_id"], published["id"]);

    assert_eq!(run(&["events", "trim", "--max-len", "1", "--json"]).ok().json(), json!({ "trimmed": 2 }));
    assert_eq!(q.read_events(None, 0, 10).await.unwrap().len(), 1);

    assert_eq!(run(&["events", "disable", "--json"]).ok().json(), json!({ "enabled": false }));
    let status = run(&["events", "status", "--json"]).ok().json();
    assert_eq!(status, json!({ "enabled": false, "last_event_id": published["id"] }));
    run(&["events", "publish", "x"]).fails(4, "events");
    assert!(run(&["events", "enable"]).ok().stdout.contains("events enabled"));
    assert!(q.events_enabled().await.unwrap());

    run(&["events", "tail", "--after", "garbage"]).fails(2, "garbage");
    run(&["events", "tail", "--count", "0"]).fails(2, "count");
    run(&["events", "tail", "--kind", ""]).fails(2, "event name");
    run(&["events", "trim", "--max-len", "-1"]).fails(2, "max_len");
    run(&["events", "trim", "--max-len", "5", "--max-age", "0"]).fails(2, "max age");
    run(&["events", "publish", "completed"]).fails(2, "built-in");
    run(&["events", "publish", "x", "--data", "{"]).fails(2, "--data");
    run(&["events", "publish", "x", "--job", "nope"]).fails(2, "nope");
    assert_eq!(
        q.last_event_id().await.unwrap().map(Value::from),
        Some(published["id"].clone()),
        "nothing refused was written"
    );
    q.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_commands_on_sqlite() {
    crate::stores::on_sqlite("events", events_script).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_commands_on_postgres() {
    crate::stores::on_postgres("events", events_script).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_commands_on_redis() {
    crate::stores::on_redis("events", events_script).await;
}
