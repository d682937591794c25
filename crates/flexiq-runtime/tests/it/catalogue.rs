//! The bad-input catalogue (`tests/catalogue/bad_input.json` at the repository root) on every
//! store: each case that names Rust is dispatched from its operation name to the `Queue` call,
//! must fail with the documented error kind and leave the store as it was, compared by a
//! snapshot of its counts and listings taken before and after.
//!
//! The world is built once per store (the calls fail before writing, so the cases can share
//! it, and a case that wrote would show in its own snapshot). The Python and Node suites read
//! the same file, so a case added there reaches all three languages; Rust takes typed values,
//! so the cases about a value of the wrong type name only those two.

use std::collections::BTreeMap;
use std::time::Duration;

use flexiq_runtime::core::store::AckKind;
use flexiq_runtime::{
    connect, Backoff, CatchUp, ConnectOptions, DedupMode, DedupOptions, DequeueOptions, EdgePolicy,
    EnqueueItem, EnqueueOptions, Error, EventsFrom, EventsOptions, FlowNode, JobFilter, JobTemplate, Queue,
    Repeat, RepeatRule, Retention, WorkflowJobSpec, WorkflowOptions, WorkflowServes,
};
use serde_json::{Map, Value};

use crate::backends::Backend;
use crate::common::{finish, retries};

const CATALOGUE: &str = include_str!("../../../../tests/catalogue/bad_input.json");
const UNKNOWN_ID: &str = "0190b6a0-0000-7000-8000-000000000000";

/// A store with the records the cases refer to, and the handles they are called on.
struct World {
    store: &'static str,
    queue: Queue,
    other: Queue,
    closed: Queue,
    refs: BTreeMap<&'static str, String>,
}

async fn build(store: &'static str, b: &Backend) -> World {
    let q = b.queue().clone();
    q.enqueue("cat.fail", b"null".to_vec(), EnqueueOptions { queue: Some("cat-dead".into()), ..retries(0) })
        .await
        .unwrap();
    finish(&q, AckKind::Fail { error: "catalogue".into(), retryable: true }).await;
    let dead = q.dead_letters(10, 0).await.unwrap().pop().expect("a dead letter");
    let in_cat = |n: u32| EnqueueOptions {
        queue: Some("cat".into()),
        metadata: Some(format!("{{\"n\":{n}}}")),
        ..Default::default()
    };
    let job = q.enqueue("cat.task", b"[1]".to_vec(), in_cat(1)).await.unwrap();
    let job2 = q.enqueue("cat.task", b"[2]".to_vec(), in_cat(2)).await.unwrap();
    let cancelled = q.enqueue("cat.task", b"[3]".to_vec(), in_cat(3)).await.unwrap();
    assert!(q.cancel_job(cancelled.as_str()).await.unwrap());
    for id in ["cat.sched.a", "cat.sched.b"] {
        let rule = RepeatRule {
            repeat: Repeat::Every { every_ms: 3_600_000 },
            limit: None,
            start_at_ms: None,
            end_at_ms: None,
            immediately: false,
            catch_up: CatchUp::Latest,
        };
        let template =
            JobTemplate { task: "cat.task".into(), payload: Vec::new(), options: Default::default() };
        q.upsert_job_scheduler(id, rule, template).await.unwrap();
    }
    let other = connect(b.url(), ConnectOptions { namespace: "cat-other".into(), ..Default::default() })
        .await
        .unwrap();
    let other_job = other.enqueue("cat.task", b"null".to_vec(), in_cat(0)).await.unwrap();
    let closed = connect(b.url(), ConnectOptions::default()).await.unwrap();
    closed.close().await.unwrap();
    let jobs_cursor = q.list_jobs_after(&JobFilter::default(), 1, None).await.unwrap().next_cursor;
    let schedulers_cursor = q.list_job_schedulers(1, None).await.unwrap().next_cursor;
    let refs = BTreeMap::from([
        ("url", b.url().to_string()),
        ("job", job.to_string()),
        ("job2", job2.to_string()),
        ("cancelled_job", cancelled.to_string()),
        ("dead", dead.id.clone()),
        ("dead_job", dead.original_job_id.clone()),
        ("other_job", other_job.to_string()),
        ("jobs_cursor", jobs_cursor.expect("a second page of jobs")),
        ("schedulers_cursor", schedulers_cursor.expect("a second page of schedulers")),
        ("event_id", q.last_event_id().await.unwrap().expect("an event")),
        ("unknown_id", UNKNOWN_ID.to_string()),
    ]);
    World { store, queue: q, other, closed, refs }
}

/// A catalogue value with its references resolved (Rust cases use no value JSON cannot spell
/// but long text).
fn resolve(v: &Value, refs: &BTreeMap<&'static str, String>) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(|x| resolve(x, refs)).collect()),
        Value::Object(m) if m.contains_key("$ref") => {
            let name = m["$ref"].as_str().unwrap();
            Value::String(refs.get(name).unwrap_or_else(|| panic!("no world ref {name}")).clone())
        }
        Value::Object(m) if m.get("$").and_then(Value::as_str) == Some("text") => {
            let c = m["char"].as_str().unwrap();
            Value::String(c.repeat(m["len"].as_u64().unwrap() as usize))
        }
        Value::Object(m) if m.contains_key("$") => panic!("value {v} has no Rust form"),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), resolve(x, refs))).collect()),
        other => other.clone(),
    }
}

/// The arguments of one call, by Rust parameter name.
struct Args<'a>(&'a Map<String, Value>);

impl Args<'_> {
    fn of(v: &Value) -> Args<'_> {
        Args(v.as_object().expect("rust arguments are an object"))
    }
    fn get(&self, k: &str) -> Option<&Value> {
        self.0.get(k).filter(|v| !v.is_null())
    }
    fn s(&self, k: &str) -> String {
        self.opt_s(k).unwrap_or_else(|| panic!("argument {k} is missing"))
    }
    fn opt_s(&self, k: &str) -> Option<String> {
        self.get(k).map(|v| v.as_str().unwrap_or_else(|| panic!("{k} is not a string")).to_string())
    }
    fn i(&self, k: &str, default: i64) -> i64 {
        self.opt_i(k).unwrap_or(default)
    }
    fn opt_i(&self, k: &str) -> Option<i64> {
        self.get(k).map(|v| v.as_i64().unwrap_or_else(|| panic!("{k} is not an i64")))
    }
    fn opt_u(&self, k: &str) -> Option<u64> {
        self.get(k).map(|v| v.as_u64().unwrap_or_else(|| panic!("{k} is not a u64")))
    }
    fn b(&self, k: &str, default: bool) -> bool {
        self.get(k).map_or(default, |v| v.as_bool().unwrap())
    }
    fn strs(&self, k: &str) -> Vec<String> {
        self.get(k)
            .map(|v| v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }
    fn bytes(&self, k: &str) -> Vec<u8> {
        self.opt_s(k).map(String::into_bytes).unwrap_or_default()
    }
    fn args(&self, k: &str) -> Option<Args<'_>> {
        self.get(k).map(Args::of)
    }
}

fn enqueue_options(a: Option<Args<'_>>) -> EnqueueOptions {
    let Some(a) = a else { return EnqueueOptions::default() };
    EnqueueOptions {
        queue: a.opt_s("queue"),
        priority: a.opt_i("priority").map(|p| i32::try_from(p).unwrap()),
        delay_ms: a.opt_u("delay_ms"),
        run_at: a.opt_i("run_at"),
        max_retries: a.opt_u("max_retries").map(|n| n as u32),
        backoff: a.args("backoff").map(|b| Backoff {
            base_ms: b.opt_u("base_ms").unwrap_or(1_000),
            max_ms: b.opt_u("max_ms").unwrap_or(3_600_000),
        }),
        timeout_ms: a.opt_u("timeout_ms"),
        unique_key: a.opt_s("unique_key"),
        metadata: a.opt_s("metadata"),
        depends_on: a.strs("depends_on"),
        group_key: a.opt_s("group_key"),
        lifo: a.b("lifo", false),
        dedup: a.args("dedup").map(|d| DedupOptions {
            id: d.s("id"),
            mode: d.opt_s("mode").map_or(DedupMode::default(), |m| DedupMode::parse(&m).unwrap()),
            ttl_ms: d.opt_u("ttl_ms"),
            extend: d.b("extend", false),
            replace: d.b("replace", false),
        }),
        ..Default::default()
    }
}

fn filter(a: Option<Args<'_>>) -> JobFilter {
    let Some(a) = a else { return JobFilter::default() };
    JobFilter {
        status: a.opt_s("status").map(|s| s.parse().unwrap()),
        queue: a.opt_s("queue"),
        task: a.opt_s("task"),
        metadata_contains: a.opt_s("metadata_contains"),
        error_contains: a.opt_s("error_contains"),
        created_after: a.opt_i("created_after"),
        created_before: a.opt_i("created_before"),
    }
}

fn retention(a: Option<Args<'_>>) -> Option<Retention> {
    a.map(|a| Retention {
        archived_jobs: a.opt_u("archived_jobs"),
        dead_letter: a.opt_u("dead_letter"),
        task_logs: a.opt_u("task_logs"),
        task_metrics: a.opt_u("task_metrics"),
        job_errors: a.opt_u("job_errors"),
    })
}

fn repeat_rule(a: Args<'_>) -> RepeatRule {
    let repeat = match a.opt_s("cron") {
        Some(pattern) => Repeat::Cron { pattern, tz: a.opt_s("tz") },
        None => Repeat::Every { every_ms: a.opt_u("every_ms").expect("cron or every_ms") },
    };
    let catch_up = match a.opt_s("catch_up").as_deref() {
        Some("all") => CatchUp::All { max: a.opt_u("catch_up_max").unwrap_or(100) as u32 },
        Some("none") => CatchUp::None,
        _ => CatchUp::Latest,
    };
    RepeatRule {
        repeat,
        limit: a.opt_u("limit"),
        start_at_ms: a.opt_i("start_at_ms"),
        end_at_ms: a.opt_i("end_at_ms"),
        immediately: a.b("immediately", false),
        catch_up,
    }
}

fn flow_node(a: Args<'_>) -> FlowNode {
    FlowNode {
        id: a.opt_s("id"),
        namespace: a.opt_s("namespace"),
        task: a.s("task"),
        payload: a.bytes("payload"),
        options: enqueue_options(a.args("options")),
        on_failure: a.opt_s("on_failure").map(|p| EdgePolicy::parse(&p).unwrap()),
        children: a
            .get("children")
            .map(|c| c.as_array().unwrap().iter().map(|n| flow_node(Args::of(n))).collect())
            .unwrap_or_default(),
    }
}

fn millis(ms: Option<u64>) -> Option<Duration> {
    ms.map(Duration::from_millis)
}

/// Drops a call's value: the catalogue only looks at errors.
fn done<T>(_: T) {}

/// Makes the call `op` names with `a` (which should fail).
async fn call(w: &World, op: &str, on: Option<&str>, a: Args<'_>) -> Result<(), Error> {
    let q = if on == Some("closed") { &w.closed } else { &w.queue };
    if let Some(method) = op.strip_prefix("workflow_jobs.") {
        let view = q.workflow_jobs(WorkflowOptions::default())?;
        return match method {
            "enqueue_parallel" => {
                let jobs = a.get("jobs").unwrap().as_array().unwrap().iter().map(|j| {
                    let j = Args::of(j);
                    WorkflowJobSpec {
                        workflow_run_id: j.s("workflow_run_id"),
                        workflow_id: j.s("workflow_id"),
                        stage_id: j.s("stage_id"),
                        definition_version: j.opt_s("definition_version"),
                        payload: j.opt_s("payload").unwrap_or_else(|| "{}".into()).into_bytes(),
                        priority: j.i("priority", 0) as i32,
                        next_poll_at_ms: j.opt_i("next_poll_at_ms"),
                        max_attempts: j.opt_u("max_attempts").map(|n| n as u32),
                    }
                });
                view.enqueue_parallel(jobs.collect()).await.map(done)
            }
            "complete" => view.complete(&a.s("job_id"), None).await.map(done),
            "release_stale_jobs" => view.release_stale_jobs(a.i("threshold_ms", 60_000)).await.map(done),
            "expire_runaway_jobs" => view.expire_runaway_jobs(a.i("absolute_ms", 0)).await.map(done),
            "cancel_by_run" => view.cancel_by_run(&a.s("run_id")).await.map(done),
            "get_jobs_by_workflow_run" => view.get_jobs_by_workflow_run(&a.s("run_id")).await.map(done),
            "delete_by_run_and_stages" => {
                view.delete_by_run_and_stages(&a.s("run_id"), &a.strs("stage_ids")).await.map(done)
            }
            "dequeue" => {
                let serves = a
                    .strs("serves")
                    .into_iter()
                    .map(|workflow_id| WorkflowServes { workflow_id, definition_version: None })
                    .collect();
                view.dequeue(DequeueOptions { serves, queues: a.strs("queues") }).await.map(done)
            }
            other => panic!("no dispatch for workflow_jobs.{other}"),
        };
    }
    match op {
        "connect" => {
            let opts = ConnectOptions {
                namespace: a.opt_s("namespace").unwrap_or_else(|| "default".into()),
                max_pending: a.opt_u("max_pending"),
                retention: retention(a.args("retention")),
                ..Default::default()
            };
            connect(&a.s("url"), opts).await?.close().await
        }
        "enqueue" => {
            q.enqueue(&a.s("task"), a.bytes("payload"), enqueue_options(a.args("options"))).await.map(done)
        }
        "enqueue_outcome" => q
            .enqueue_outcome(&a.s("task"), a.bytes("payload"), enqueue_options(a.args("options")))
            .await
            .map(done),
        "enqueue_many" => {
            let items = a.get("items").unwrap().as_array().unwrap().iter().map(|i| {
                let i = Args::of(i);
                EnqueueItem {
                    task: i.s("task"),
                    payload: i.bytes("payload"),
                    options: enqueue_options(i.args("options")),
                }
            });
            q.enqueue_many(items.collect()).await.map(done)
        }
        "get_job" => q.get_job(&a.s("id")).await.map(done),
        "get_result" => q.get_result(&a.s("id")).await.map(done),
        "request_cancel" => q.request_cancel(&a.s("id")).await.map(done),
        "is_cancel_requested" => q.is_cancel_requested(&a.s("id")).await.map(done),
        "cancel_job" => q.cancel_job(&a.s("id")).await.map(done),
        "is_job_in_state" => q.is_job_in_state(&a.s("job_id"), &a.s("status")).await.map(done),
        "get_job_errors" => q.get_job_errors(&a.s("id")).await.map(done),
        "replay" => q.replay(&a.s("id")).await.map(done),
        "replay_history" => q.replay_history(&a.s("id")).await.map(done),
        "job_dag" => q.job_dag(&a.s("id")).await.map(done),
        "job_logs" => q.job_logs(&a.s("id")).await.map(done),
        "publish_partial" => q.publish_partial(&a.s("id"), a.bytes("data")).await.map(done),
        "log" => q.log(&a.s("id"), &a.s("level"), &a.s("message")).await,
        "list_jobs" => {
            q.list_jobs(&filter(a.args("filter")), a.i("limit", 50), a.i("offset", 0)).await.map(done)
        }
        "list_jobs_filtered" => q
            .list_jobs_filtered(&filter(a.args("filter")), a.i("limit", 50), a.i("offset", 0))
            .await
            .map(done),
        "list_jobs_after" => {
            let after = a.opt_s("after");
            q.list_jobs_after(&filter(a.args("filter")), a.i("limit", 50), after.as_deref()).await.map(done)
        }
        "list_jobs_filtered_after" => {
            let after = a.opt_s("after");
            q.list_jobs_filtered_after(&filter(a.args("filter")), a.i("limit", 50), after.as_deref())
                .await
                .map(done)
        }
        "list_archived" => q.list_archived(a.i("limit", 50), a.i("offset", 0)).await.map(done),
        "list_archived_after" => {
            q.list_archived_after(a.i("limit", 50), a.opt_s("after").as_deref()).await.map(done)
        }
        "pause" => q.pause(&a.s("queue")).await,
        "resume" => q.resume(&a.s("queue")).await,
        "set_queue_rate_limit" => q.set_queue_rate_limit(&a.s("queue"), &a.s("rate_limit")).await,
        "clear_queue_rate_limit" => q.clear_queue_rate_limit(&a.s("queue")).await,
        "set_queue_concurrency" => q.set_queue_concurrency(&a.s("queue"), a.i("max_concurrent", 1)).await,
        "clear_queue_concurrency" => q.clear_queue_concurrency(&a.s("queue")).await,
        "set_queue_max_stalled" => q.set_queue_max_stalled(&a.s("queue"), a.i("max_stalled_count", 1)).await,
        "clear_queue_max_stalled" => q.clear_queue_max_stalled(&a.s("queue")).await,
        "queue_config" => q.queue_config(&a.s("queue")).await.map(done),
        "purge" => q.purge(&a.s("queue")).await.map(done),
        "revoke_task" => q.revoke_task(&a.s("task")).await,
        "unrevoke_task" => q.unrevoke_task(&a.s("task")).await.map(done),
        "purge_completed" => q.purge_completed(a.i("older_than_secs", 86_400)).await.map(done),
        "requeue_job" => q.requeue_job(&a.s("id")).await.map(done),
        "dead_letters" => q.dead_letters(a.i("limit", 10), a.i("offset", 0)).await.map(done),
        "dead_letters_by_task" => {
            q.dead_letters_by_task(&a.s("task"), a.i("limit", 10), a.i("offset", 0)).await.map(done)
        }
        "dead_letters_after" => {
            q.dead_letters_after(a.i("limit", 10), a.opt_s("after").as_deref()).await.map(done)
        }
        "retry_dead" => q.retry_dead(&a.s("dead_id")).await.map(done),
        "delete_dead" => q.delete_dead(&a.s("dead_id")).await.map(done),
        "purge_dead" => q.purge_dead(a.i("older_than_secs", 86_400)).await.map(done),
        "purge_dead_by_task" => q.purge_dead_by_task(&a.s("task")).await.map(done),
        "stats" => q.stats().await.map(done),
        "stats_for_queue" => q.stats_for_queue(&a.s("queue")).await.map(done),
        "metrics" => q.metrics(a.opt_s("task").as_deref(), a.i("since_secs", 3_600)).await.map(done),
        "metrics_timeseries" => {
            let task = a.opt_s("task");
            q.metrics_timeseries(task.as_deref(), a.i("since_secs", 3_600), a.i("bucket_secs", 60))
                .await
                .map(done)
        }
        "get_metrics" => q.get_metrics(a.i("since_ms", 0), a.opt_s("task").as_deref()).await.map(done),
        "count_pending_by_queue" => q.count_pending_by_queue(&a.s("queue")).await.map(done),
        "get_setting" => q.get_setting(&a.s("key")).await.map(done),
        "set_setting" => q.set_setting(&a.s("key"), &a.s("value")).await,
        "set_setting_if" => {
            q.set_setting_if(&a.s("key"), a.opt_s("expected").as_deref(), &a.s("value")).await.map(done)
        }
        "delete_setting" => q.delete_setting(&a.s("key")).await.map(done),
        "set_min_contract" => q.set_min_contract(a.i("level", 1)).await,
        "dry_run_retention" => q.dry_run_retention(retention(a.args("retention"))).await.map(done),
        "clean" => {
            q.clean(&a.s("queue"), &a.s("status"), a.i("grace_ms", 0), a.i("limit", 1_000)).await.map(done)
        }
        "drain" => q.drain(&a.s("queue"), a.b("include_delayed", false)).await.map(done),
        "obliterate" => q.obliterate(&a.s("queue"), a.b("force", false), a.i("count", 1_000)).await.map(done),
        "retry_jobs" => {
            let status = a.opt_s("status").unwrap_or_else(|| "failed".into());
            q.retry_jobs(&a.s("queue"), &status, a.i("count", 1_000)).await.map(done)
        }
        "remove" => q.remove(&a.s("job_id"), a.b("remove_children", true)).await.map(done),
        "is_maxed" => q.is_maxed(&a.s("queue")).await.map(done),
        "rate_limit_ttl" => q.rate_limit_ttl(&a.s("queue")).await.map(done),
        "change_delay" => q.change_delay(&a.s("job_id"), a.i("delay_ms", 0)).await,
        "promote" => q.promote(&a.s("job_id")).await,
        "promote_jobs" => q.promote_jobs(&a.s("queue"), a.i("count", 1_000)).await.map(done),
        "change_priority" => q.change_priority(&a.s("job_id"), a.i("priority", 0), a.b("lifo", false)).await,
        "add_flow" => q.add_flow(flow_node(a.args("tree").unwrap())).await.map(done),
        "get_dependencies" => {
            q.get_dependencies(&a.s("job_id"), a.opt_s("after").as_deref(), a.i("limit", 100)).await.map(done)
        }
        "remove_child_dependency" => q.remove_child_dependency(&a.s("child_id")).await.map(done),
        "dedup_job_id" => q.dedup_job_id(&a.s("key")).await.map(done),
        "delete_dedup_key" => q.delete_dedup_key(&a.s("key")).await.map(done),
        "upsert_job_scheduler" => {
            let t = a.args("template").unwrap();
            let template = JobTemplate {
                task: t.s("task"),
                payload: t.bytes("payload"),
                options: enqueue_options(t.args("options")),
            };
            q.upsert_job_scheduler(&a.s("id"), repeat_rule(a.args("repeat").unwrap()), template)
                .await
                .map(done)
        }
        "get_job_scheduler" => q.get_job_scheduler(&a.s("id")).await.map(done),
        "list_job_schedulers" => {
            q.list_job_schedulers(a.i("limit", 100), a.opt_s("after").as_deref()).await.map(done)
        }
        "remove_job_scheduler" => q.remove_job_scheduler(&a.s("id")).await.map(done),
        "publish_event" => {
            let data = a.get("data").cloned().unwrap_or(Value::Null);
            let (job_id, queue) = (a.opt_s("job_id"), a.opt_s("queue"));
            q.publish_event(&a.s("name"), data, job_id.as_deref(), queue.as_deref()).await.map(done)
        }
        "read_events" => {
            q.read_events(a.opt_s("after").as_deref(), a.i("block_ms", 0), a.i("limit", 100)).await.map(done)
        }
        "trim_events" => q.trim_events(a.i("max_len", 10_000), a.opt_i("max_age_ms")).await.map(done),
        "events" => {
            let from = match a.opt_s("after") {
                Some(id) => EventsFrom::After(id),
                None if a.b("from_start", false) => EventsFrom::Start,
                None => EventsFrom::Now,
            };
            let block = Duration::from_millis(a.opt_u("block_ms").unwrap_or(5_000));
            let batch = a.opt_u("batch").unwrap_or(256) as u32;
            q.events(EventsOptions { from, kinds: a.strs("kinds"), block, batch }).await.map(|_| ())
        }
        "last_event_id" => q.last_event_id().await.map(done),
        "result" => {
            let (timeout, poll) = (millis(a.opt_u("timeout_ms")), millis(a.opt_u("poll_ms")));
            q.result(&a.s("id"), timeout, poll).await.map(done)
        }
        "stream" => {
            q.stream(&a.s("id"), millis(a.opt_u("timeout_ms")), millis(a.opt_u("poll_ms"))).map(|_| ())
        }
        "workflow_jobs" => {
            let opts = WorkflowOptions {
                queue: a.opt_s("queue"),
                fairness_group_by: a.opt_s("fairness_group_by"),
                fairness_cap: a.opt_u("fairness_cap").map(|c| c as u32),
                claim_ahead: a.b("claim_ahead", false),
                worker_id: a.opt_s("worker_id"),
            };
            q.workflow_jobs(opts).map(|_| ())
        }
        other => panic!("no dispatch for {other}"),
    }
}

/// Every count and listing a refused call must leave as it was.
async fn snapshot(w: &World) -> String {
    let q = &w.queue;
    let all = JobFilter::default();
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        q.stats().await.unwrap(),
        q.stats_all_queues().await.unwrap(),
        q.list_jobs(&all, 10_000, 0).await.unwrap(),
        q.dead_letters(10_000, 0).await.unwrap(),
        q.list_settings().await.unwrap(),
        q.list_job_schedulers(10_000, None).await.unwrap().items,
        q.paused_queues().await.unwrap(),
        q.revoked_tasks().await.unwrap(),
        q.queue_config("cat").await.unwrap(),
        q.last_event_id().await.unwrap(),
        q.events_enabled().await.unwrap(),
        w.other.list_jobs(&all, 10_000, 0).await.unwrap(),
    )
}

/// Why the case is known to fail in Rust on the world's store, if it is.
fn skip_reason<'a>(case: &'a Value, store: &str) -> Option<&'a str> {
    let failing = case.get("known_failing")?;
    ["rust", "all", store].iter().find_map(|k| failing.get(*k)).and_then(Value::as_str)
}

fn mention(case: &Value) -> Option<&str> {
    match case.get("mentions")? {
        Value::Object(m) => m.get("rust").and_then(Value::as_str),
        v => v.as_str(),
    }
}

/// The store a `connect` case's URL names when this build does not compile it in (the call
/// would answer `Unsupported` before looking at the rest of the URL).
fn store_not_built(case: &Value, spec: &Value) -> Option<&'static str> {
    if case["op"] != "connect" {
        return None;
    }
    let url = spec["url"].as_str()?;
    let backend = flexiq_runtime::StoreUrl::parse(url).ok()?.backend();
    let built = match backend {
        "postgres" => cfg!(feature = "postgres"),
        "redis" => cfg!(feature = "redis"),
        _ => true,
    };
    (!built).then_some(backend)
}

/// Runs every Rust case of the catalogue on the store of `b`; fails naming each case that did
/// not hold.
async fn run(store: &'static str, b: Backend) {
    let catalogue: Value = serde_json::from_str(CATALOGUE).expect("the catalogue is JSON");
    let errors = &catalogue["errors"];
    let w = build(store, &b).await;
    let (mut ran, mut failures) = (0, Vec::new());
    for case in catalogue["cases"].as_array().unwrap() {
        let Some(spec) = case.get("rust") else { continue };
        let id = case["id"].as_str().unwrap();
        if let Some(reason) = skip_reason(case, w.store) {
            eprintln!("catalogue {id} on {store}: skipped, known failing: {reason}");
            continue;
        }
        if let Some(missing) = store_not_built(case, spec) {
            eprintln!("catalogue {id} on {store}: skipped, this build has no {missing} store");
            continue;
        }
        ran += 1;
        let expect = case["expect"].as_str().unwrap();
        let kind = errors[expect]["rust"].as_str().unwrap();
        let before = snapshot(&w).await;
        let spec = resolve(spec, &w.refs);
        let outcome = call(&w, case["op"].as_str().unwrap(), case["on"].as_str(), Args::of(&spec)).await;
        match outcome {
            Ok(()) => failures.push(format!("{id}: not refused")),
            Err(e) if e.code() != expect || e.kind().map(|k| format!("{k:?}")).as_deref() != Some(kind) => {
                failures.push(format!(
                    "{id}: expected {expect} ({kind}), got {} ({:?}): {e}",
                    e.code(),
                    e.kind()
                ))
            }
            Err(e) => {
                if let Some(m) = mention(case).filter(|m| !e.to_string().contains(m)) {
                    failures.push(format!("{id}: the message does not name {m}: {e}"));
                }
            }
        }
        if snapshot(&w).await != before {
            failures.push(format!("{id}: the refused call changed the store"));
        }
    }
    let _ = w.other.close().await;
    b.cleanup().await;
    assert!(ran >= 150, "only {ran} Rust cases ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} catalogue cases failed on {store}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test]
async fn sqlite() {
    run("sqlite", crate::backends::sqlite().await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres() {
    run("postgres", crate::backends::postgres().await).await;
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn redis() {
    run("redis", crate::backends::redis().await).await;
}
