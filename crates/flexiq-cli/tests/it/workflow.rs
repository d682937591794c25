//! `flexiq workflow jobs | cancel-run` on every store: a run with a completed, a running and a
//! pending stage, listed in table and JSON, then cancelled (only the pending stage goes).

use flexiq::{connect, ConnectOptions, DequeueOptions, JobId, WorkflowJobSpec, WorkflowOptions};

use crate::fixture::flexiq;

/// Seeds run `r1` on `url` through the runtime; returns the ids of stages a, b and c.
async fn seed(url: &str) -> Vec<JobId> {
    let q = connect(url, ConnectOptions::default()).await.expect("connect");
    let wf = q.workflow_jobs(WorkflowOptions::default()).unwrap();
    let specs = [("a", 3), ("b", 2), ("c", 1)]
        .map(|(stage, priority)| WorkflowJobSpec {
            workflow_run_id: "r1".into(),
            workflow_id: "order".into(),
            stage_id: stage.into(),
            definition_version: Some("v1".into()),
            payload: br#"{"tenant":"acme"}"#.to_vec(),
            priority,
            ..Default::default()
        })
        .to_vec();
    let ids = wf.enqueue_parallel(specs).await.unwrap();
    let a = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("stage a");
    assert_eq!(a.job.stage_id, "a");
    wf.complete(a.job.id.as_str(), Some(a.fence)).await.unwrap();
    let b = wf.dequeue(DequeueOptions::default()).await.unwrap().expect("stage b");
    assert_eq!(b.job.stage_id, "b");
    q.close().await.unwrap();
    ids
}

/// Lists, cancels and lists again on `url`.
fn list_and_cancel(url: &str, ids: &[JobId]) {
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        flexiq(&all)
    };
    let human = run(&["workflow", "jobs", "r1"]).ok();
    for needle in
        [ids[0].as_str(), "order", "v1", "completed", "running", "pending", "3 jobs of workflow run r1"]
    {
        assert!(human.stdout.contains(needle), "missing {needle:?}:\n{}", human.stdout);
    }
    let v = run(&["workflow", "jobs", "r1", "--json"]).ok().json();
    let items = v.as_array().expect("a json array");
    let shown: Vec<(&str, &str)> =
        items.iter().map(|j| (j["stage_id"].as_str().unwrap(), j["status"].as_str().unwrap())).collect();
    let mut sorted = shown.clone();
    sorted.sort();
    assert_eq!(sorted, vec![("a", "completed"), ("b", "running"), ("c", "pending")]);
    let b = items.iter().find(|j| j["stage_id"] == "b").unwrap();
    assert_eq!((b["attempt"].as_u64(), b["max_attempts"].as_u64()), (Some(1), Some(3)));
    assert_eq!(b["payload"], r#"{"tenant":"acme"}"#);
    assert!(b["locked_at"].as_i64().is_some() && b["worker_id"].as_str().is_some(), "{b}");

    let cancelled = run(&["workflow", "cancel-run", "r1", "--json"]).ok().json();
    assert_eq!(cancelled, serde_json::json!({ "workflow_run_id": "r1", "cancelled": 1 }));
    assert!(run(&["workflow", "cancel-run", "r1"])
        .ok()
        .stdout
        .contains("cancelled 0 jobs of workflow run r1"));
    let after = run(&["workflow", "jobs", "r1", "--json"]).ok().json();
    let c = after.as_array().unwrap().iter().find(|j| j["stage_id"] == "c").unwrap().clone();
    assert_eq!(c["status"], "cancelled");
    assert_eq!(after.as_array().unwrap().iter().filter(|j| j["status"] == "running").count(), 1);

    assert!(run(&["workflow", "jobs", "nobody"]).ok().stdout.contains("no jobs for workflow run nobody"));
    assert_eq!(run(&["workflow", "jobs", "nobody", "--json"]).ok().json(), serde_json::json!([]));
    run(&["workflow", "jobs", ""]).fails(2, "workflow_run_id");
    run(&["workflow", "cancel-run", ""]).fails(2, "workflow_run_id");
}

async fn workflow_commands(url: String) {
    let ids = seed(&url).await;
    list_and_cancel(&url, &ids);
}

#[tokio::test]
async fn workflow_jobs_and_cancel_run_on_sqlite() {
    crate::stores::on_sqlite("wf", workflow_commands).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn workflow_jobs_and_cancel_run_on_postgres() {
    crate::stores::on_postgres("wf", workflow_commands).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn workflow_jobs_and_cancel_run_on_redis() {
    crate::stores::on_redis("wf", workflow_commands).await;
}
