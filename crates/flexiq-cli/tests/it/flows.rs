//! `flexiq flow add`, `flexiq jobs deps | detach` and `flexiq dedup show | delete` on every
//! store.
//!
//! A flow is added from a file through the CLI, run by a worker of the runtime whose parent
//! reads its children's results, and its dependencies listed by outcome a page at a time; a
//! second flow comes in on stdin and has its child detached. Bad files, cursors, limits and
//! ids exit with their code and write nothing. Dedup keys are taken through the runtime and
//! shown and freed through the CLI.

use std::time::Duration;

use flexiq::{
    connect, ConnectOptions, DedupMode, DedupOptions, EnqueueOptions, HandlerError, JobFilter, JobStatus,
    Queue, Worker, WorkerConfig,
};
use serde_json::{json, Value};

use crate::fixture::{flexiq, flexiq_with_stdin, Run};

/// The flow of the main script: a parent on `fl-a` summing two children (one with a child of
/// its own) and ignoring a third that fails.
const FLOW: &str = r#"{
  "task": "sum",
  "payload": {"label": "total"},
  "options": {"queue": "fl-a", "maxRetries": 0, "priority": 2, "metadata": {"tenant": "t1"}},
  "children": [
    {"task": "num", "payload": 2, "options": {"queue": "fl-b"}},
    {"task": "num", "payload": 3, "options": {"queue": "fl-c", "backoff": {"base": 0.5}},
     "children": [{"task": "leaf", "options": {"queue": "fl-c"}}]},
    {"task": "bad", "onFailure": "ignore_dependency", "options": {"queue": "fl-b", "maxRetries": 0}}
  ]
}"#;

fn cli(url: &str) -> impl Fn(&[&str]) -> Run + '_ {
    move |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        flexiq(&all)
    }
}

/// Runs the flow's tasks until `root` is finished.
async fn run_flow(q: &Queue, root: &str) {
    let config = WorkerConfig {
        queues: vec!["fl-a".into(), "fl-b".into(), "fl-c".into()],
        poll_interval: Duration::from_millis(20),
        ..Default::default()
    };
    let mut w = Worker::new(q.clone(), config).unwrap();
    w.register("num", |ctx| async move { Ok(Some(ctx.payload().to_vec())) }).unwrap();
    w.register("leaf", |_| async { Ok(None) }).unwrap();
    w.register("bad", |_| async { Err(HandlerError::fatal("no good")) }).unwrap();
    w.register("sum", |ctx| async move {
        let values = ctx.children_values().await.map_err(|e| HandlerError::fatal(e.to_string()))?;
        let ignored = ctx.ignored_failures().await.map_err(|e| HandlerError::fatal(e.to_string()))?;
        let total: i64 = values
            .values()
            .map(|v| serde_json::from_slice::<i64>(v.as_deref().unwrap_or(b"0")).unwrap_or(0))
            .sum();
        Ok(Some(json!({ "total": total, "ignored": ignored.len() }).to_string().into_bytes()))
    })
    .unwrap();
    let running = w.start();
    let out = q.result(root, Some(Duration::from_secs(30)), None).await;
    running.shutdown().await.unwrap();
    assert_eq!(out.unwrap().as_deref(), Some(&br#"{"ignored":1,"total":5}"#[..]));
}

/// Every child listed across the pages of `jobs deps root --limit N`, with its outcome.
fn walk_pages(url: &str, root: &str, limit: &str) -> Vec<(String, String)> {
    let run = cli(url);
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..10 {
        let mut args = vec!["jobs", "deps", root, "--limit", limit, "--json"];
        if let Some(a) = &after {
            args.extend(["--after", a.as_str()]);
        }
        let page = run(&args).ok().json();
        for outcome in ["processed", "unprocessed", "ignored", "failed"] {
            for c in page[outcome].as_array().unwrap() {
                seen.push((c["id"].as_str().unwrap().to_string(), outcome.to_string()));
            }
        }
        match page["next_after"].as_str() {
            Some(next) => after = Some(next.to_string()),
            None => return seen,
        }
    }
    panic!("jobs deps kept paging: {seen:?}");
}

async fn flow_script(url: String) {
    let q = connect(&url, ConnectOptions::default()).await.expect("connect");
    let run = cli(&url);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flow.json");
    std::fs::write(&file, FLOW).unwrap();
    let file = file.to_str().unwrap();

    // flow add: ids in the order given, each job on its queue, the parents waiting.
    let added = run(&["flow", "add", file, "--json"]).ok().json();
    let ids: Vec<String> =
        added["ids"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
    assert_eq!(ids.len(), 5, "{added}");
    assert_eq!(added["root"], ids[0]);
    let shape: Vec<(Value, Value, Value)> = added["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["queue"].clone(), j["task"].clone(), j["parent"].clone()))
        .collect();
    assert_eq!(
        shape,
        vec![
            (json!("fl-a"), json!("sum"), Value::Null),
            (json!("fl-b"), json!("num"), json!(0)),
            (json!("fl-c"), json!("num"), json!(0)),
            (json!("fl-c"), json!("leaf"), json!(2)),
            (json!("fl-b"), json!("bad"), json!(0)),
        ]
    );
    let root = q.get_job(&ids[0]).await.unwrap().unwrap();
    assert_eq!((root.status, root.priority, root.max_retries), (JobStatus::Waiting, 2, 0));
    assert_eq!(root.payload, br#"{"label":"total"}"#, "payloads are stored as JSON text");
    assert_eq!(root.metadata.as_deref(), Some(r#"{"tenant":"t1"}"#));
    assert_eq!(q.get_job(&ids[1]).await.unwrap().unwrap().payload, b"2");
    assert_eq!(q.get_job(&ids[3]).await.unwrap().unwrap().payload, b"null", "an absent payload is null");
    assert_eq!(q.get_job(&ids[2]).await.unwrap().unwrap().backoff.base_ms, 500);
    assert_eq!(q.get_job(&ids[2]).await.unwrap().unwrap().status, JobStatus::Waiting);

    // jobs deps before anything ran: three children, none finished.
    let page = run(&["jobs", "deps", &ids[0], "--json"]).ok().json();
    assert_eq!(page["job_id"], ids[0]);
    assert_eq!(page["unprocessed"].as_array().unwrap().len(), 3, "{page}");
    assert_eq!(page["next_after"], Value::Null);
    let bad = page["unprocessed"].as_array().unwrap().iter().find(|c| c["id"] == ids[4]).unwrap().clone();
    assert_eq!(
        (&bad["queue"], &bad["task"], &bad["policy"]),
        (&json!("fl-b"), &json!("bad"), &json!("ignore_dependency"))
    );
    let human = run(&["flow", "add", file]).ok();
    assert!(human.stdout.contains("added a flow of 5 jobs; root job"), "{}", human.stdout);
    assert!(human.stdout.contains("waited on by") && human.stdout.contains("#2"), "{}", human.stdout);

    // Run it: the parent reads two results and one ignored failure.
    run_flow(&q, &ids[0]).await;
    let page = run(&["jobs", "deps", &ids[0], "--json"]).ok().json();
    let results: Vec<(Value, Value)> = page["processed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].clone(), c["result"].clone()))
        .collect();
    let mut expected = vec![(json!(ids[1]), json!("2")), (json!(ids[2]), json!("3"))];
    expected.sort_by_key(|(id, _)| id.to_string());
    assert_eq!(results, expected, "{page}");
    let ignored = &page["ignored"][0];
    assert_eq!((&ignored["id"], &ignored["status"]), (&json!(ids[4]), &json!("failed")), "{page}");
    assert!(ignored["error"].as_str().unwrap().contains("no good"), "{ignored}");
    assert!(
        page["unprocessed"].as_array().unwrap().is_empty() && page["failed"].as_array().unwrap().is_empty()
    );
    let human = run(&["jobs", "deps", &ids[0]]).ok();
    for needle in [
        "outcome",
        "processed",
        "ignored",
        "ignore_dependency",
        "no good",
        "fl-c",
        "3 dependencies of job",
        "last page",
    ] {
        assert!(human.stdout.contains(needle), "missing {needle:?}:\n{}", human.stdout);
    }

    // Paging: one child a page, every child once, in child-id order.
    let mut children = vec![ids[1].clone(), ids[2].clone(), ids[4].clone()];
    children.sort();
    let paged = walk_pages(&url, &ids[0], "1");
    assert_eq!(paged.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(), children);
    assert_eq!(walk_pages(&url, &ids[0], "2").len(), 3);
    let first = run(&["jobs", "deps", &ids[0], "--limit", "1"]).ok();
    assert!(first.stdout.contains(&format!("next page: --after {}", children[0])), "{}", first.stdout);

    // Bad cursors, limits and ids.
    let unknown = flexiq::JobId::new().to_string();
    run(&["jobs", "deps", &ids[0], "--after", "garbage"]).fails(2, "garbage");
    run(&["jobs", "deps", &ids[0], "--limit", "0"]).fails(2, "limit 0");
    run(&["jobs", "deps", &ids[0], "--limit", "-1"]).fails(2, "limit -1");
    run(&["jobs", "deps", &ids[0], "--limit", "10001"]).fails(2, "limit 10001");
    run(&["jobs", "deps", &ids[0], "--limit", "many"]).fails(2, "many");
    run(&["jobs", "deps", "not-an-id"]).fails(2, "not-an-id");
    run(&["jobs", "deps", &unknown]).fails(3, &unknown);

    // A flow on stdin whose child is detached: the parent can then run without it.
    let stdin = r#"{"task": "r", "options": {"queue": "fl-x"},
                    "children": [{"task": "c", "options": {"queue": "fl-x", "delay": 3600}}]}"#;
    let v = flexiq_with_stdin(&["flow", "add", "-", "--json", "--url", &url], stdin).ok().json();
    let (parent, child) =
        (v["ids"][0].as_str().unwrap().to_string(), v["ids"][1].as_str().unwrap().to_string());
    assert_eq!(q.get_job(&parent).await.unwrap().unwrap().status, JobStatus::Waiting);
    let d = run(&["jobs", "detach", &child, "--json"]).ok().json();
    assert_eq!(d, json!({ "child_id": child, "detached": true }));
    assert_eq!(q.get_job(&parent).await.unwrap().unwrap().status, JobStatus::Pending, "released");
    assert_eq!(q.get_job(&child).await.unwrap().unwrap().status, JobStatus::Pending, "the child stays");
    let again = run(&["jobs", "detach", &child]).ok();
    assert!(again.stdout.contains(&format!("job {child} was not detached")), "{}", again.stdout);
    let done = run(&["jobs", "detach", &ids[1], "--json"]).ok().json();
    assert_eq!(done["detached"], false, "a finished child is left alone");
    run(&["jobs", "detach", "garbage"]).fails(2, "garbage");
    run(&["jobs", "detach", &unknown]).fails(3, &unknown);

    bad_flows(&q, &url, dir.path()).await;
    q.close().await.unwrap();
}

/// Files the CLI or the engine refuses: each exits non-zero naming the problem, and none
/// writes a job.
async fn bad_flows(q: &Queue, url: &str, dir: &std::path::Path) {
    let run = cli(url);
    let before = q.stats().await.unwrap().total();
    let twice = flexiq::JobId::new().to_string();
    let cases: Vec<(String, i32, &str)> = vec![
        (r#"{"task": "r", "options": {"queue": "fl-bad"}"#.into(), 2, "EOF"),
        (r#"{"task": "r", "tsak": 1}"#.into(), 2, "unknown field `tsak`"),
        (r#"{"task": "r", "options": {"queue": "fl-bad", "dealy": 5}}"#.into(), 2, "unknown field `dealy`"),
        (r#"{"payload": 1}"#.into(), 2, "missing field `task`"),
        (r#"{"task": "r", "options": {"priority": 1.5}}"#.into(), 2, "1.5"),
        (r#"{"task": "r", "children": {"task": "c"}}"#.into(), 2, "invalid type"),
        (r#"["r", null, null, null, null, null, null]"#.into(), 2, "expected a JSON object"),
        (r#"{"task": "r", "children": [["c"]]}"#.into(), 2, "expected a JSON object"),
        (r#"{"task": "r", "options": ["fl-bad"]}"#.into(), 2, "expected a JSON object"),
        (
            r#"{"task": "r", "options": {"queue": "fl-bad"}, "children": [{"task": "c", "onFailure": "explode"}]}"#.into(),
            2,
            "explode",
        ),
        (r#"{"task": "r", "onFailure": "fail_parent", "options": {"queue": "fl-bad"}}"#.into(), 2, "root"),
        (
            format!(r#"{{"task": "r", "id": "{twice}", "options": {{"queue": "fl-bad"}}, "children": [{{"task": "c", "id": "{twice}"}}]}}"#),
            2,
            "cycle",
        ),
        (
            r#"{"task": "r", "options": {"queue": "fl-bad"}, "children": [{"task": "c", "options": {"uniqueKey": "k"}}]}"#.into(),
            2,
            "unique key",
        ),
        (
            r#"{"task": "r", "options": {"queue": "fl-bad"}, "children": [{"task": "c", "options": {"dedup": {"id": "k", "mode": "simple"}}}]}"#.into(),
            2,
            "dedup",
        ),
        (r#"{"task": "r", "options": {"queue": "fl-bad"}, "children": [{"task": "c", "namespace": "other"}]}"#.into(), 2, "namespace other"),
        (r#"{"task": "r", "options": {"queue": "fl-bad", "delay": -1}}"#.into(), 2, "delay must be"),
        (r#"{"task": "r", "options": {"queue": "fl-bad", "runAt": -5}}"#.into(), 2, "runAt -5"),
        (r#"{"task": "", "options": {"queue": "fl-bad"}}"#.into(), 2, "task name"),
        (r#"{"task": "r", "options": {"queue": "fl-bad"}, "children": [{"task": "c", "options": {"dependsOn": ["nope"]}}]}"#.into(), 2, "nope"),
    ];
    for (i, (text, code, needle)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad-{i}.json"));
        std::fs::write(&path, text).unwrap();
        run(&["flow", "add", path.to_str().unwrap()]).fails(*code, needle);
    }
    flexiq_with_stdin(&["flow", "add", "-", "--url", url], "not json").fails(2, "stdin");
    run(&["flow", "add", dir.join("missing.json").to_str().unwrap()]).fails(3, "missing.json");
    run(&["flow", "add"]).fails(2, "<FILE>");
    let bad_q = JobFilter { queue: Some("fl-bad".into()), ..Default::default() };
    assert!(q.list_jobs(&bad_q, 100, 0).await.unwrap().is_empty(), "a refused flow writes nothing");
    assert_eq!(q.stats().await.unwrap().total(), before, "nothing was written");
}

async fn dedup_script(url: String) {
    let q = connect(&url, ConnectOptions::default()).await.expect("connect");
    let run = cli(&url);
    let dedup = |id: &str, mode| DedupOptions { id: id.into(), mode, ..Default::default() };
    let opts = EnqueueOptions { dedup: Some(dedup("report:7", DedupMode::Simple)), ..Default::default() };
    let first = q.enqueue_outcome("report", b"{}".to_vec(), opts.clone()).await.unwrap();
    assert!(first.created);
    let holder = first.id.to_string();

    let v = run(&["dedup", "show", "report:7", "--json"]).ok().json();
    assert_eq!(v, json!({ "key": "report:7", "job_id": holder }));
    let human = run(&["dedup", "show", "report:7"]).ok();
    assert!(
        human.stdout.contains(&format!("dedup key report:7 is held by job {holder}")),
        "{}",
        human.stdout
    );
    let v = run(&["dedup", "show", "never-taken", "--json"]).ok().json();
    assert_eq!(v, json!({ "key": "never-taken", "job_id": null }));
    assert!(run(&["dedup", "show", "never-taken"]).ok().stdout.contains("dedup key never-taken is free"));

    let v = run(&["dedup", "delete", "report:7", "--json"]).ok().json();
    assert_eq!(v, json!({ "key": "report:7", "deleted": true }));
    assert_eq!(run(&["dedup", "show", "report:7", "--json"]).ok().json()["job_id"], Value::Null);
    assert_eq!(q.get_job(&holder).await.unwrap().unwrap().status, JobStatus::Pending, "the holder stays");
    let human = run(&["dedup", "delete", "report:7"]).ok();
    assert!(human.stdout.contains("dedup key report:7 did not exist"), "{}", human.stdout);
    let next = q.enqueue_outcome("report", b"{}".to_vec(), opts).await.unwrap();
    assert!(next.created && next.id != first.id, "a freed key inserts again");
    let human = run(&["dedup", "delete", "report:7"]).ok();
    assert!(human.stdout.contains("deleted dedup key report:7"), "{}", human.stdout);

    run(&["dedup", "show", ""]).fails(2, "dedup");
    run(&["dedup", "delete", ""]).fails(2, "dedup");
    run(&["dedup", "show"]).fails(2, "<KEY>");
    q.close().await.unwrap();
}

#[tokio::test]
async fn flow_commands_on_sqlite() {
    crate::stores::on_sqlite("flows", flow_script).await;
}

#[tokio::test]
async fn dedup_commands_on_sqlite() {
    crate::stores::on_sqlite("dedup", dedup_script).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn flow_commands_on_postgres() {
    crate::stores::on_postgres("flows", flow_script).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn dedup_commands_on_postgres() {
    crate::stores::on_postgres("dedup", dedup_script).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn flow_commands_on_redis() {
    crate::stores::on_redis("flows", flow_script).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn dedup_commands_on_redis() {
    crate::stores::on_redis("dedup", dedup_script).await;
}
