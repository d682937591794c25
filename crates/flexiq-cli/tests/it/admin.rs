//! `flexiq queue limits | clean | retry | drain | obliterate`, `flexiq jobs remove |
//! remove-orphans` and the running jobs of `flexiq workers`, on every store.
//!
//! The store is seeded through the runtime with jobs in known states on their own queues,
//! then one script of CLI calls checks each command's table and JSON, that bad input exits
//! with its code and removes nothing, and what each removal leaves behind.

use flexiq::core::store::{Ack, AckKind, AckRequest, ClaimRequest};
use flexiq::core::WorkerInfo;
use flexiq::{connect, Backoff, ConnectOptions, EnqueueOptions, Queue};

use crate::fixture::{flexiq, Run};

/// The worker the seed registers; it holds the running job of queue `busy`.
const WORKER: &str = "w-cli";

/// Ids of the seeded jobs.
struct Seed {
    /// Completed jobs of queue `adm`, oldest first.
    completed: Vec<String>,
    /// The dead job of queue `adm`.
    dead: String,
    /// The failed job of queue `adm`.
    failed: String,
    /// The running job of queue `busy` (held by [`WORKER`]).
    running: String,
    /// A waiting job of queue `tree` and the pending job it waits on.
    parent: String,
    child: String,
    /// Another such pair, removed with `--keep-children`.
    lone_parent: String,
    kept_child: String,
}

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions {
        queue: Some(queue.into()),
        max_retries: Some(0),
        backoff: Some(Backoff::NONE),
        ..Default::default()
    }
}

/// Claims the one pending job of `queue` for `worker`.
async fn claim(q: &Queue, queue: &str, worker: &str) -> flexiq::ClaimedJob {
    let req =
        ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: worker.into(), now: q.now_ms() };
    q.store().claim(req).await.unwrap().pop().expect("a job to claim")
}

/// Enqueues one job on `queue`, claims it and ends its attempt with `kind`.
async fn finished(q: &Queue, queue: &str, kind: AckKind) -> String {
    q.enqueue("adm.task", b"{}".to_vec(), on(queue)).await.unwrap();
    let c = claim(q, queue, "seed-worker").await;
    let ack = Ack { job_id: c.job.id.clone(), fence: c.fence, kind };
    q.store().ack(AckRequest { acks: vec![ack], now: q.now_ms() }).await.unwrap();
    c.job.id.to_string()
}

/// A job of queue `tree` waiting on another; returns (the waiting one, the one it waits on).
async fn waiting_pair(q: &Queue) -> (String, String) {
    let child = q.enqueue("tree.child", b"{}".to_vec(), on("tree")).await.unwrap().to_string();
    let opts = EnqueueOptions { depends_on: vec![child.clone()], ..on("tree") };
    let parent = q.enqueue("tree.parent", b"{}".to_vec(), opts).await.unwrap().to_string();
    (parent, child)
}

async fn seed(url: &str) -> Seed {
    let q = connect(url, ConnectOptions::default()).await.expect("connect");
    let mut completed = Vec::new();
    for _ in 0..3 {
        completed.push(finished(&q, "adm", AckKind::Complete { result: None }).await);
    }
    let dead = finished(&q, "adm", AckKind::Fail { error: "boom".into(), retryable: true }).await;
    let failed = finished(&q, "adm", AckKind::Fail { error: "bad input".into(), retryable: false }).await;

    q.enqueue("busy.task", b"{}".to_vec(), on("busy")).await.unwrap();
    let running = claim(&q, "busy", WORKER).await.job.id.to_string();
    for _ in 0..2 {
        q.enqueue("busy.task", b"{}".to_vec(), on("busy")).await.unwrap();
    }
    let info = WorkerInfo {
        id: WORKER.into(),
        queues: vec!["busy".into()],
        concurrency: 1,
        host: "cli-test".into(),
        pid: std::process::id(),
        started_at: q.now_ms(),
        heartbeat_at: q.now_ms(),
        current_jobs: Vec::new(),
    };
    q.store().worker_heartbeat(&info).await.unwrap();

    // One claim spends the hourly token, so the next is an hour away.
    q.set_queue_rate_limit("rl", "1/h").await.unwrap();
    for _ in 0..2 {
        q.enqueue("rl.task", b"{}".to_vec(), on("rl")).await.unwrap();
    }
    claim(&q, "rl", "rl-worker").await;

    for _ in 0..2 {
        q.enqueue("drain.task", b"{}".to_vec(), on("drainme")).await.unwrap();
    }
    let later = EnqueueOptions { delay_ms: Some(3_600_000), ..on("drainme") };
    q.enqueue("drain.task", b"{}".to_vec(), later).await.unwrap();

    let (parent, child) = waiting_pair(&q).await;
    let (lone_parent, kept_child) = waiting_pair(&q).await;
    q.close().await.unwrap();
    Seed { completed, dead, failed, running, parent, child, lone_parent, kept_child }
}

/// The script of CLI calls on `url`.
fn admin_script(url: &str, s: &Seed) {
    let run = |args: &[&str]| -> Run {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        flexiq(&all)
    };
    let total = |queue: &str| run(&["stats", "--queue", queue, "--json"]).ok().json()[queue]["total"].clone();
    let status = |id: &str| run(&["jobs", "show", id, "--json"]).ok().json()["job"]["status"].clone();

    // limits: a queue with no controls, one at its cap, one waiting on its rate limit.
    let v = run(&["queue", "limits", "adm", "--json"]).ok().json();
    assert_eq!(
        v,
        serde_json::json!({ "queue": "adm", "paused": false, "rate_limit": null, "rate_limit_ttl_ms": 0,
            "concurrency": null, "running": 0, "maxed": false, "stall_budget": 1 })
    );
    run(&["queue", "concurrency", "busy", "1"]).ok();
    let v = run(&["queue", "limits", "busy", "--json"]).ok().json();
    assert_eq!(
        (v["maxed"].as_bool(), v["running"].as_u64(), v["concurrency"].as_u64()),
        (Some(true), Some(1), Some(1))
    );
    let v = run(&["queue", "limits", "rl", "--json"]).ok().json();
    assert_eq!(v["rate_limit"], "1/h");
    let ttl = v["rate_limit_ttl_ms"].as_u64().unwrap();
    assert!(ttl > 0 && ttl <= 3_600_000, "{v}");
    let human = run(&["queue", "limits", "busy"]).ok();
    for needle in ["next claim in (ms)", "concurrency cap", "maxed", "true"] {
        assert!(human.stdout.contains(needle), "missing {needle:?}:\n{}", human.stdout);
    }
    run(&["queue", "limits", ""]).fails(2, "queue name");

    // workers: the registered worker and the job it runs.
    let v = run(&["workers", "--json"]).ok().json();
    let w = v.as_array().unwrap().iter().find(|w| w["id"] == WORKER).expect("the seeded worker").clone();
    assert_eq!(w["current_jobs"], serde_json::json!([s.running]));
    let human = run(&["workers"]).ok();
    assert!(human.stdout.contains("running jobs") && human.stdout.contains(&s.running), "{}", human.stdout);

    // clean: bad input removes nothing; a long grace keeps the young jobs; pages oldest first.
    for (args, code, needle) in [
        (vec!["--status", "running", "--grace-ms", "0"], 2, "running"),
        (vec!["--status", "sleeping", "--grace-ms", "0"], 2, "sleeping"),
        (vec!["--status", "completed", "--grace-ms", "-1"], 2, "grace_ms -1"),
        (vec!["--status", "completed", "--grace-ms", "0", "--limit", "0"], 2, "limit 0"),
        (vec!["--status", "completed", "--grace-ms", "0", "--limit", "10001"], 2, "limit 10001"),
        (vec!["--grace-ms", "0"], 2, "--status"),
    ] {
        let mut all = vec!["queue", "clean", "adm"];
        all.extend(args);
        run(&all).fails(code, needle);
    }
    assert_eq!(total("adm"), 5, "bad clean calls removed nothing");
    let v = run(&["queue", "clean", "adm", "--status", "completed", "--grace-ms", "3600000", "--json"])
        .ok()
        .json();
    assert_eq!(v, serde_json::json!({ "queue": "adm", "status": "completed", "removed": [] }));
    let v =
        run(&["queue", "clean", "adm", "--status", "completed", "--grace-ms", "0", "--limit", "2", "--json"])
            .ok()
            .json();
    assert_eq!(v["removed"], serde_json::json!(s.completed[..2]));
    run(&["jobs", "show", &s.completed[0]]).fails(3, &s.completed[0]);
    let human = run(&["queue", "clean", "adm", "--status", "completed", "--grace-ms", "0"]).ok();
    assert!(human.stdout.contains(&s.completed[2]), "{}", human.stdout);
    assert!(human.stdout.contains("removed 1 completed jobs of queue adm"), "{}", human.stdout);

    // retry: dead and failed jobs run again under the same id.
    for (args, needle) in [
        (vec!["--status", "pending"], "pending"),
        (vec!["--status", "dead", "--count", "0"], "count 0"),
        (vec!["--status", "dead", "--count", "-3"], "count -3"),
        (vec!["--status", "zombie"], "zombie"),
    ] {
        let mut all = vec!["queue", "retry", "adm"];
        all.extend(args);
        run(&all).fails(2, needle);
    }
    assert_eq!(status(&s.dead), "dead", "bad retry calls moved nothing");
    let v = run(&["queue", "retry", "adm", "--status", "dead", "--json"]).ok().json();
    assert_eq!(v, serde_json::json!({ "queue": "adm", "status": "dead", "retried": 1 }));
    assert_eq!(status(&s.dead), "pending");
    assert!(run(&["dlq", "list", "--json"]).ok().json()["items"].as_array().unwrap().is_empty());
    let human = run(&["queue", "retry", "adm", "--status", "failed"]).ok();
    assert!(human.stdout.contains("moved 1 failed jobs of queue adm back to pending"), "{}", human.stdout);
    assert_eq!(status(&s.failed), "pending");
    assert_eq!(run(&["queue", "retry", "adm", "--status", "failed", "--json"]).ok().json()["retried"], 0);

    // drain: due jobs first, delayed ones only when asked.
    let v = run(&["queue", "drain", "drainme", "--json"]).ok().json();
    assert_eq!(v, serde_json::json!({ "queue": "drainme", "include_delayed": false, "removed": 2 }));
    assert_eq!(total("drainme"), 1);
    let human = run(&["queue", "drain", "drainme", "--include-delayed"]).ok();
    assert!(human.stdout.contains("removed 1 pending jobs of queue drainme"), "{}", human.stdout);
    assert_eq!(total("drainme"), 0);
    run(&["queue", "drain", ""]).fails(2, "queue name");

    // jobs remove: with the job it waits on, or alone; refused for unknown, bad and running ids.
    let unknown = flexiq::JobId::new().to_string();
    run(&["jobs", "remove", &unknown]).fails(3, &unknown);
    run(&["jobs", "remove", "not-a-uuid"]).fails(2, "not-a-uuid");
    run(&["jobs", "remove", &s.running]).fails(4, &s.running);
    assert_eq!(status(&s.running), "running", "a refused remove removed nothing");
    let v = run(&["jobs", "remove", &s.parent, "--json"]).ok().json();
    assert_eq!(v, serde_json::json!({ "job_id": s.parent, "removed": [s.parent, s.child] }));
    run(&["jobs", "show", &s.child]).fails(3, &s.child);
    let human = run(&["jobs", "remove", &s.lone_parent, "--keep-children"]).ok();
    assert!(human.stdout.contains("removed job") && human.stdout.contains("and 0 jobs"), "{}", human.stdout);
    assert_eq!(status(&s.kept_child), "pending");

    // remove-orphans: whatever is left over goes once, then nothing is.
    assert!(run(&["jobs", "remove-orphans", "--json"]).ok().json()["removed"].is_u64());
    assert_eq!(run(&["jobs", "remove-orphans", "--json"]).ok().json(), serde_json::json!({ "removed": 0 }));
    assert!(run(&["jobs", "remove-orphans"]).ok().stdout.contains("removed 0 orphaned rows"));

    // obliterate: refused without --yes and with a running job, then paged away with --force.
    run(&["queue", "obliterate", "busy"]).fails(2, "--yes");
    run(&["queue", "obliterate", "busy", "--yes"]).fails(4, "busy");
    run(&["queue", "obliterate", "busy", "--yes", "--force", "--count", "0"]).fails(2, "count 0");
    assert_eq!(total("busy"), 3, "refused obliterates removed nothing");
    let v = run(&["queue", "obliterate", "busy", "--yes", "--force", "--count", "1", "--json"]).ok().json();
    assert_eq!(
        v,
        serde_json::json!({ "queue": "busy", "force": true, "pages": 3, "left_after_page": [2, 1, 0] })
    );
    assert_eq!(total("busy"), 0);
    let v = run(&["queue", "limits", "busy", "--json"]).ok().json();
    assert!(v["concurrency"].is_null() && v["maxed"] == false, "the queue's controls went too: {v}");
    let w = run(&["workers", "--json"]).ok().json();
    let w = w.as_array().unwrap().iter().find(|w| w["id"] == WORKER).unwrap().clone();
    assert_eq!(w["current_jobs"], serde_json::json!([]));
    let human = run(&["queue", "obliterate", "adm", "--yes"]).ok();
    assert!(
        human.stdout.contains("page 1: 0 jobs of queue adm left")
            && human.stdout.contains("queue adm obliterated"),
        "{}",
        human.stdout
    );
    assert_eq!(total("adm"), 0);
}

async fn admin_commands(url: String) {
    let s = seed(&url).await;
    admin_script(&url, &s);
}

#[tokio::test]
async fn admin_commands_on_sqlite() {
    crate::stores::on_sqlite("admin", admin_commands).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn admin_commands_on_postgres() {
    crate::stores::on_postgres("adm", admin_commands).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn admin_commands_on_redis() {
    crate::stores::on_redis("adm", admin_commands).await;
}
