//! Namespace isolation as a property: random operation sequences on two namespaces of one
//! store never observe each other.
//!
//! Namespaces share a store's tables (one SQLite file, one PostgreSQL schema, one Redis key
//! prefix), so a query that forgets its namespace leaks. Each case opens two queues on the same
//! store under fresh namespaces and applies operations to either: enqueues (single, batch,
//! delayed, under unique keys), pauses and resumes, claims (leases), completions, failures that
//! dead-letter, cancels, settings. After each operation the other namespace's snapshot (stats,
//! per-queue stats, listing, paused queues, dead letters, newest event id) must be exactly what
//! it was, and both must match a model of what was done to each; a unique key held in one
//! namespace never deduplicates an enqueue in the other. Settings are the one deployment-wide
//! surface (see `flexiq_core::store::settings`): both namespaces must see the same settings,
//! those both wrote.
//!
//! SQLite opens its two queues with `connect` on one file and `ConnectOptions::namespace`;
//! PostgreSQL and Redis (`--features postgres` / `redis`) scope one store connection to two
//! namespaces, as `connect` does with its namespace option. `PROPTEST_CASES` (default 32) sets
//! how many cases run per store; each has up to 40 operations.

#[path = "isolation/model.rs"]
mod model;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use flexiq_runtime::core::store::{Ack, AckKind, AckRequest, ClaimRequest};
use flexiq_runtime::{AckOutcome, EnqueueItem, EnqueueOptions, JobStatus, Queue};
use model::{op, queue_name, setting_key, unique_key, MJob, Model, Op, Side, Snapshot};
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Far enough ahead that no claim of the case takes a delayed job.
const DELAY_MS: u64 = 3_600_000;

fn options(queue: u8, priority: i8, delayed: bool, key: Option<u8>) -> EnqueueOptions {
    EnqueueOptions {
        queue: Some(queue_name(queue)),
        priority: Some(i32::from(priority)),
        delay_ms: delayed.then_some(DELAY_MS),
        max_retries: Some(0),
        unique_key: key.map(unique_key),
        ..Default::default()
    }
}

/// Applies `op` to `q` and records in `m` what it should have done.
async fn apply(
    q: &Queue,
    m: &mut Model,
    settings: &mut BTreeMap<String, String>,
    op: &Op,
) -> Result<(), String> {
    let ns = q.namespace().to_string();
    let err = |what: &str, e: flexiq_runtime::Error| format!("{what} in namespace {ns}: {e}");
    match *op {
        Op::Enqueue { queue, priority, delayed, key, .. } => {
            let holder = key.and_then(|k| m.key_holder(k));
            let out = q
                .enqueue_outcome("iso.task", b"x".to_vec(), options(queue, priority, delayed, key))
                .await
                .map_err(|e| err("enqueue", e))?;
            let id = out.id.to_string();
            match holder {
                Some(h) if out.created || id != h => {
                    return Err(format!(
                        "enqueue under unique key {key:?} in namespace {ns} gave job {id} (created {}), but job {h} holds the key",
                        out.created
                    ))
                }
                Some(_) => {}
                None if !out.created || m.jobs.contains_key(&id) => {
                    return Err(format!(
                        "enqueue under key {key:?} in namespace {ns} was deduplicated to job {id}, but no live job of this namespace holds the key"
                    ))
                }
                None => {
                    let job = MJob { queue: queue_name(queue), status: JobStatus::Pending, delayed, key, fence: None };
                    m.jobs.insert(id, job);
                }
            }
        }
        Op::EnqueueMany { queue, n, .. } => {
            let items = (0..n)
                .map(|i| EnqueueItem {
                    task: "iso.batch".to_string(),
                    payload: vec![i],
                    options: options(queue, 0, false, None),
                })
                .collect();
            for id in q.enqueue_many(items).await.map_err(|e| err("enqueue_many", e))? {
                let job = MJob {
                    queue: queue_name(queue),
                    status: JobStatus::Pending,
                    delayed: false,
                    key: None,
                    fence: None,
                };
                m.jobs.insert(id.to_string(), job);
            }
        }
        Op::Pause { queue, .. } => {
            q.pause_queue(&queue_name(queue)).await.map_err(|e| err("pause", e))?;
            m.paused.insert(queue_name(queue));
        }
        Op::Resume { queue, .. } => {
            q.resume_queue(&queue_name(queue)).await.map_err(|e| err("resume", e))?;
            m.paused.remove(&queue_name(queue));
        }
        Op::Claim { limit, .. } => {
            let expected = m.claimable().min(usize::from(limit));
            let req = ClaimRequest {
                queues: Vec::new(),
                limit: u32::from(limit),
                worker_id: format!("{ns}-worker"),
                now: q.now_ms(),
            };
            let claimed = q.store().claim(req).await.map_err(|e| err("claim", e.into()))?;
            if claimed.len() != expected {
                return Err(format!(
                    "claim of {limit} in namespace {ns} took {} jobs, model expects {expected}",
                    claimed.len()
                ));
            }
            for c in claimed {
                let id = c.job.id.to_string();
                let claimable = m.jobs.get(&id).is_some_and(|j| {
                    j.status == JobStatus::Pending && !j.delayed && !m.paused.contains(&j.queue)
                });
                if !claimable {
                    return Err(format!(
                        "claim in namespace {ns} took job {id}, which is not a claimable job of it"
                    ));
                }
                let j = m.jobs.get_mut(&id).expect("checked above");
                j.status = JobStatus::Running;
                j.fence = Some(c.fence);
            }
        }
        Op::Complete { pick, .. } | Op::Fail { pick, .. } => {
            let Some(id) = m.nth(JobStatus::Running, pick) else { return Ok(()) };
            let complete = matches!(op, Op::Complete { .. });
            let j = m.jobs.get_mut(&id).expect("picked from the model");
            let kind = if complete {
                AckKind::Complete { result: None }
            } else {
                AckKind::Fail { error: format!("job {id} fails"), retryable: true }
            };
            let job_id = flexiq_runtime::JobId::parse(&id).map_err(|e| format!("job id {id}: {e}"))?;
            let ack = Ack { job_id, fence: j.fence.expect("running jobs have a fence"), kind };
            let out = q
                .store()
                .ack(AckRequest { acks: vec![ack], now: q.now_ms() })
                .await
                .map_err(|e| err("ack", e.into()))?;
            if out != [AckOutcome::Acknowledged] {
                return Err(format!("ack of job {id} in namespace {ns} answered {out:?}"));
            }
            j.fence = None;
            if complete {
                j.status = JobStatus::Completed;
            } else {
                j.status = JobStatus::Dead;
                m.dead.insert(id);
            }
        }
        Op::Cancel { pick, .. } => {
            let Some(id) = m.nth(JobStatus::Pending, pick) else { return Ok(()) };
            if !q.cancel_job(&id).await.map_err(|e| err("cancel_job", e))? {
                return Err(format!("cancel of pending job {id} in namespace {ns} answered false"));
            }
            m.jobs.get_mut(&id).expect("picked from the model").status = JobStatus::Cancelled;
        }
        Op::SetSetting { key, value, .. } => {
            q.set_setting(&setting_key(key), &value.to_string()).await.map_err(|e| err("set_setting", e))?;
            settings.insert(setting_key(key), value.to_string());
        }
        Op::DeleteSetting { key, .. } => {
            let deleted = q.delete_setting(&setting_key(key)).await.map_err(|e| err("delete_setting", e))?;
            let expected = settings.remove(&setting_key(key)).is_some();
            if deleted != expected {
                return Err(format!(
                    "delete_setting {} in namespace {ns} answered {deleted}, model {expected}",
                    setting_key(key)
                ));
            }
        }
    }
    Ok(())
}

/// Runs one case on queues `a` and `b` (two namespaces of one store).
async fn run_case(a: &Queue, b: &Queue, ops: &[Op]) -> Result<(), String> {
    let (mut ma, mut mb) = (Model::default(), Model::default());
    // Settings are deployment-wide: start each case from none of the keys it uses.
    for k in 0..3 {
        a.delete_setting(&setting_key(k)).await.map_err(|e| format!("clear {}: {e}", setting_key(k)))?;
    }
    let mut settings = BTreeMap::new();
    for (step, op) in ops.iter().enumerate() {
        let (q, m, other, other_model) = match op.side() {
            Side::A => (a, &mut ma, b, &mb),
            Side::B => (b, &mut mb, a, &ma),
        };
        let before = Snapshot::read(other).await?;
        apply(q, m, &mut settings, op).await.map_err(|e| format!("step {step} {op:?}: {e}"))?;
        let after = Snapshot::read(other).await?;
        if after.scoped() != before.scoped() {
            return Err(format!(
                "step {step} {op:?} in namespace {} changed namespace {}:\nbefore {before:?}\nafter  {after:?}",
                q.namespace(),
                other.namespace()
            ));
        }
        let mine = Snapshot::read(q).await?;
        for (queue, model, snap) in [(q, &*m, &mine), (other, other_model, &after)] {
            let diff = model.differences(snap, &settings);
            if !diff.is_empty() {
                return Err(format!(
                    "step {step} {op:?}: namespace {} differs from its model: {}",
                    queue.namespace(),
                    diff.join("; ")
                ));
            }
        }
    }
    Ok(())
}

fn runner() -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(32);
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime")
}

/// Runs the property on `rt` with `open(case)` giving each case its two queues on one store;
/// `close` closes them after each case (not for namespaces sharing a backing's connections).
fn check<F, Fut>(rt: &tokio::runtime::Runtime, store: &str, close: bool, open: F)
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = (Queue, Queue)>,
{
    let case = AtomicU64::new(0);
    let result = runner().run(&proptest::collection::vec(op(), 1..40), |ops| {
        let n = case.fetch_add(1, Ordering::Relaxed);
        rt.block_on(async {
            let (a, b) = open(n).await;
            let r = run_case(&a, &b, &ops).await;
            if close {
                let _ = a.close().await;
                let _ = b.close().await;
            }
            r
        })
        .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("namespace isolation on {store}: {e}");
    }
}

#[test]
fn namespaces_never_observe_each_other_on_sqlite() {
    use flexiq_runtime::{connect, ConnectOptions};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("isolation.db");
    let url = format!("sqlite://{}", path.display());
    check(&runtime(), "sqlite", true, |n| {
        let url = url.clone();
        async move {
            let a = connect(&url, ConnectOptions::namespace(format!("iso-a{n}")))
                .await
                .expect("open namespace a");
            let b = connect(&url, ConnectOptions::namespace(format!("iso-b{n}")))
                .await
                .expect("open namespace b");
            (a, b)
        }
    });
}

/// Two namespaces of one backing (a PostgreSQL schema or a Redis prefix), fresh per case.
#[cfg(any(feature = "postgres", feature = "redis"))]
fn check_backing(rt: &tokio::runtime::Runtime, store: &str, backing: &dyn flexiq_testkit::Backing) {
    use flexiq_runtime::ConnectOptions;
    check(rt, store, false, |n| {
        let pair = (|| {
            let a = backing.namespace(&format!("iso-a{n}"))?;
            let b = backing.namespace(&format!("iso-b{n}"))?;
            Ok::<_, flexiq_runtime::core::Error>((a, b))
        })();
        async move {
            let (a, b) = pair.expect("scope the store to two namespaces");
            let qa = Queue::from_store(a.clone(), &ConnectOptions::namespace(a.namespace()));
            let qb = Queue::from_store(b.clone(), &ConnectOptions::namespace(b.namespace()));
            (qa, qb)
        }
    });
}

#[cfg(feature = "postgres")]
#[test]
fn namespaces_never_observe_each_other_on_postgres() {
    let rt = runtime();
    let backing = rt.block_on(flexiq_testkit::PgBacking::open()).expect("connect to postgres");
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_backing(&rt, "postgres", &backing)));
    rt.block_on(flexiq_testkit::Backing::cleanup(&backing));
    if let Err(p) = outcome {
        std::panic::resume_unwind(p);
    }
}

#[cfg(feature = "redis")]
#[test]
fn namespaces_never_observe_each_other_on_redis() {
    let rt = runtime();
    let backing = rt.block_on(flexiq_testkit::RedisBacking::open()).expect("connect to redis");
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_backing(&rt, "redis", &backing)));
    rt.block_on(flexiq_testkit::Backing::cleanup(&backing));
    if let Err(p) = outcome {
        std::panic::resume_unwind(p);
    }
}
