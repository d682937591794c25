//! `flexiq jobs delay | promote | priority`, `flexiq queue promote | max-stalled` and the
//! stall count `flexiq jobs show | list` print, on every store.
//!
//! The store is seeded through the runtime with pending, delayed and running jobs on their
//! own queues; one script of CLI calls checks each command's human and JSON output, that bad
//! input exits with its code and changes nothing, and where each job lands. Stalls are
//! simulated as the store's rescuer sees them: a job claimed by a worker that never
//! heartbeats, released once its lease has lapsed.

use flexiq::core::store::{ClaimRequest, HeartbeatRequest, ReleaseStaleRequest};
use flexiq::{connect, ConnectOptions, EnqueueOptions, Queue};

use crate::fixture::{flexiq, Run};

/// An hour, in ms.
const HOUR_MS: i64 = 3_600_000;
/// Slack between the CLI's clock and the test's, in ms.
const SLACK: i64 = 5_000;

/// Ids of the seeded jobs.
struct Seed {
    /// A pending job of queue `sched` delayed by an hour.
    later: String,
    /// A pending job of queue `sched` that is due.
    due: String,
    /// The running job of queue `run`.
    running: String,
    /// The delayed jobs of queue `bulk`.
    bulk: Vec<String>,
    /// The delayed job of queue `bulk-other`.
    other: String,
}

fn on(queue: &str) -> EnqueueOptions {
    EnqueueOptions { queue: Some(queue.into()), ..Default::default() }
}

fn delayed(queue: &str, delay_ms: u64) -> EnqueueOptions {
    EnqueueOptions { delay_ms: Some(delay_ms), ..on(queue) }
}

async fn enqueue(q: &Queue, opts: EnqueueOptions) -> String {
    q.enqueue("sched.task", b"{}".to_vec(), opts).await.unwrap().to_string()
}

/// Claims the pending job `id` of `queue` at `now` for a worker that reports the start and then
/// never heartbeats again.
async fn claim(q: &Queue, queue: &str, id: &str, now: i64) {
    let req = ClaimRequest { queues: vec![queue.into()], limit: 1, worker_id: "gone-worker".into(), now };
    let claimed = q.store().claim(req).await.unwrap();
    assert_eq!(claimed.first().map(|c| c.job.id.to_string()).as_deref(), Some(id), "claim of {id}");
    // The worker reports the start, as a running handler's heartbeat does: only a started
    // attempt stalls when its lease lapses.
    let c = &claimed[0];
    let beat = HeartbeatRequest { jobs: vec![(c.job.id.clone(), c.fence)], now };
    q.store().heartbeat(beat).await.unwrap();
}

/// Lets every running job's lease lapse as of `now` and releases it; returns the ids.
async fn stall(q: &Queue, now: i64) -> Vec<String> {
    let req = ReleaseStaleRequest { stale_after_ms: 1_000, now };
    q.store().release_stale(req).await.unwrap().iter().map(|id| id.to_string()).collect()
}

async fn seed(url: &str) -> Seed {
    let q = connect(url, ConnectOptions::default()).await.expect("connect");
    let later = enqueue(&q, delayed("sched", HOUR_MS as u64)).await;
    let due = enqueue(&q, on("sched")).await;
    let running = enqueue(&q, on("run")).await;
    claim(&q, "run", &running, q.now_ms()).await;
    let mut bulk = Vec::new();
    for n in 0..5 {
        bulk.push(enqueue(&q, delayed("bulk", HOUR_MS as u64 + n)).await);
    }
    let other = enqueue(&q, delayed("bulk-other", HOUR_MS as u64)).await;
    q.close().await.unwrap();
    Seed { later, due, running, bulk, other }
}

/// Milliseconds since 1970, as the CLI stamps them.
fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// The script of CLI calls on `url`.
fn reschedule_script(url: &str, s: &Seed) {
    let run = |args: &[&str]| -> Run {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        flexiq(&all)
    };
    let job = |id: &str| run(&["jobs", "show", id, "--json"]).ok().json()["job"].clone();
    let run_at = |id: &str| job(id)["run_at"].as_i64().unwrap();

    // jobs delay: due now, then ten minutes out; refused for bad input and jobs not pending.
    let v = run(&["jobs", "delay", &s.later, "0", "--json"]).ok().json();
    assert_eq!((&v["job_id"], &v["delay_ms"]), (&serde_json::json!(s.later), &serde_json::json!(0)));
    assert!(v["run_at"].as_i64().unwrap() <= now() + SLACK, "{v}");
    let before = now();
    let human = run(&["jobs", "delay", &s.later, "600000"]).ok();
    assert!(human.stdout.contains(&format!("job {} is due at", s.later)), "{}", human.stdout);
    assert!(human.stdout.contains("600000 ms from now"), "{}", human.stdout);
    let at = run_at(&s.later);
    assert!(at >= before + 600_000 - SLACK && at <= now() + 600_000 + SLACK, "run_at {at}");
    let unknown = flexiq::JobId::new().to_string();
    run(&["jobs", "delay", &s.later, "-1"]).fails(2, "delay_ms -1");
    run(&["jobs", "delay", &s.later, "soon"]).fails(2, "soon");
    run(&["jobs", "delay", "not-a-uuid", "5"]).fails(2, "not-a-uuid");
    run(&["jobs", "delay", &unknown, "5"]).fails(3, &unknown);
    run(&["jobs", "delay", &s.running, "5"]).fails(4, "running");
    assert_eq!(run_at(&s.later), at, "refused delays changed nothing");

    // jobs promote: a delayed job becomes due once; a due one is refused.
    let v = run(&["jobs", "promote", &s.later, "--json"]).ok().json();
    assert_eq!((&v["job_id"], &v["promoted"]), (&serde_json::json!(s.later), &serde_json::json!(true)));
    assert!(v["run_at"].as_i64().unwrap() <= now() + SLACK, "{v}");
    run(&["jobs", "promote", &s.later]).fails(4, "already due");
    run(&["jobs", "promote", &s.running]).fails(4, "running");
    run(&["jobs", "promote", &unknown]).fails(3, &unknown);
    run(&["jobs", "delay", &s.later, "600000"]).ok();
    let human = run(&["jobs", "promote", &s.later]).ok();
    assert!(human.stdout.contains(&format!("job {} promoted: due now", s.later)), "{}", human.stdout);

    // jobs priority: a new priority, then LIFO placement (a negative run_at).
    let v = run(&["jobs", "priority", &s.due, "7", "--json"]).ok().json();
    assert_eq!(
        (&v["job_id"], &v["priority"], &v["lifo"]),
        (&serde_json::json!(s.due), &serde_json::json!(7), &serde_json::json!(false))
    );
    assert_eq!(job(&s.due)["priority"], 7);
    let human = run(&["jobs", "priority", &s.due, "-3", "--lifo"]).ok();
    assert!(human.stdout.contains("has priority -3, placed LIFO"), "{}", human.stdout);
    let j = job(&s.due);
    assert_eq!(j["priority"], -3);
    assert!(j["run_at"].as_i64().unwrap() < 0, "a LIFO job's run_at is negative: {j}");
    let shown = run(&["jobs", "show", &s.due]).ok();
    assert!(shown.stdout.contains("due (LIFO, placed"), "{}", shown.stdout);
    for (args, code, needle) in [
        (vec![s.due.as_str(), "2097153"], 2, "out of range"),
        (vec![s.due.as_str(), "-2097153"], 2, "out of range"),
        (vec![s.due.as_str(), "high"], 2, "high"),
        (vec![s.running.as_str(), "1"], 4, "running"),
        (vec![unknown.as_str(), "1"], 3, unknown.as_str()),
    ] {
        let mut all = vec!["jobs", "priority"];
        all.extend(args);
        run(&all).fails(code, needle);
    }
    run(&["jobs", "delay", &s.later, "600000"]).ok();
    run(&["jobs", "priority", &s.later, "1", "--lifo"]).fails(4, "delayed");
    assert_eq!(job(&s.due)["priority"], -3, "refused priorities changed nothing");
    assert_eq!(job(&s.later)["priority"], 0);

    // queue promote: every delayed job of the queue, a batch per call, until a call comes up short.
    for (count, needle) in [("0", "count 0"), ("10001", "count 10001"), ("-2", "count -2")] {
        run(&["queue", "promote", "bulk", "--count", count]).fails(2, needle);
    }
    run(&["queue", "promote", ""]).fails(2, "queue name");
    assert!(s.bulk.iter().all(|id| run_at(id) > now() + SLACK), "refused promotes moved nothing");
    let v = run(&["queue", "promote", "bulk", "--count", "2", "--json"]).ok().json();
    assert_eq!(
        v,
        serde_json::json!({ "queue": "bulk", "promoted": 5, "calls": 3 }),
        "2 + 2 + 1: the short call ends it"
    );
    assert!(s.bulk.iter().all(|id| run_at(id) <= now() + SLACK));
    assert!(run_at(&s.other) > now() + SLACK, "another queue stays delayed");
    let human = run(&["queue", "promote", "bulk"]).ok();
    assert!(human.stdout.contains("promoted 0 delayed jobs of queue bulk"), "{}", human.stdout);

    // queue max-stalled: set, refused out of range, cleared.
    let v = run(&["queue", "max-stalled", "strict", "0", "--json"]).ok().json();
    assert_eq!(
        run(&["queue", "limits", "strict", "--json"]).ok().json()["stall_budget"],
        0,
        "limits show the budget"
    );
    assert_eq!(v, serde_json::json!({ "queue": "strict", "max_stalled_count": 0, "stall_budget": 0 }));
    for (args, needle) in [
        (vec!["-1"], "must not be negative"),
        (vec!["10001"], "over the limit"),
        (vec!["many"], "many"),
        (vec![], "<MAX|--clear>"),
        (vec!["3", "--clear"], "cannot be used with"),
    ] {
        let mut all = vec!["queue", "max-stalled", "strict"];
        all.extend(args);
        run(&all).fails(2, needle);
    }
    run(&["queue", "max-stalled", "", "2"]).fails(2, "queue name");
    let human = run(&["queue", "max-stalled", "lenient", "2"]).ok();
    assert!(human.stdout.contains("jobs of queue lenient recover from 2 stalls"), "{}", human.stdout);
    let v = run(&["queue", "max-stalled", "lenient", "--clear", "--json"]).ok().json();
    assert_eq!(v, serde_json::json!({ "queue": "lenient", "max_stalled_count": null, "stall_budget": 1 }));
    let human = run(&["queue", "max-stalled", "lenient", "--clear"]).ok();
    assert!(human.stdout.contains("default stall budget: 1"), "{}", human.stdout);
    assert_eq!(run(&["queue", "max-stalled", "strict", "0", "--json"]).ok().json()["max_stalled_count"], 0);
}

/// A stalled job recovered once, then failing with `STALLED` (default budget), and one failing
/// at its first stall (queue `strict`, budget 0 set by the script), as the CLI shows them.
async fn stalls(url: &str) {
    let run = |args: &[&str]| -> Run {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        flexiq(&all)
    };
    let job = |id: &str| run(&["jobs", "show", id, "--json"]).ok().json()["job"].clone();
    let q = connect(url, ConnectOptions::default()).await.expect("connect");
    let id = enqueue(&q, on("stall")).await;
    let strict = enqueue(&q, on("strict")).await;
    let t = q.now_ms();
    claim(&q, "stall", &id, t).await;
    claim(&q, "strict", &strict, t).await;
    let released = stall(&q, t + 60_000).await;
    assert!(released.contains(&id) && released.contains(&strict), "{released:?}");

    let j = job(&id);
    assert_eq!((&j["status"], &j["attempt"], &j["stall_count"]), (&"pending".into(), &0.into(), &1.into()));
    assert!(j["last_error"].as_str().unwrap().starts_with("LEASE_HEARTBEAT_LOST"), "{j}");
    let shown = run(&["jobs", "show", &id]).ok();
    assert!(shown.stdout.lines().any(|l| l.contains("stalls") && l.contains('1')), "{}", shown.stdout);
    let j = job(&strict);
    assert_eq!((&j["status"], &j["stall_count"]), (&"dead".into(), &1.into()), "a budget of 0: {j}");
    assert!(j["last_error"].as_str().unwrap().starts_with("STALLED"), "{j}");

    claim(&q, "stall", &id, t + 60_001).await;
    assert!(stall(&q, t + 120_000).await.contains(&id));
    let j = job(&id);
    assert_eq!((&j["status"], &j["stall_count"]), (&"dead".into(), &2.into()));
    let error = j["last_error"].as_str().unwrap();
    assert!(error.starts_with("STALLED") && error.contains(&id), "{error}");
    let listed = run(&["jobs", "list", "--queue", "stall"]).ok();
    assert!(listed.stdout.contains("stalls") && listed.stdout.contains(&id), "{}", listed.stdout);
    let page = run(&["jobs", "list", "--queue", "stall", "--json"]).ok().json();
    assert_eq!(page["items"][0]["stall_count"], 2);
    q.close().await.unwrap();
}

async fn reschedule_commands(url: String) {
    let s = seed(&url).await;
    reschedule_script(&url, &s);
    stalls(&url).await;
}

#[tokio::test]
async fn reschedule_commands_on_sqlite() {
    crate::stores::on_sqlite("reschedule", reschedule_commands).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn reschedule_commands_on_postgres() {
    crate::stores::on_postgres("sched", reschedule_commands).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn reschedule_commands_on_redis() {
    crate::stores::on_redis("sched", reschedule_commands).await;
}
