//! The demo's final report and its check that every job ended as scripted.
//!
//! The report reads everything back from the store (stats, metric rows, dead letters, the
//! jobs themselves), never from the worker's own bookkeeping, so a passing check means the
//! store holds the right history: the right number of jobs completed and dead, one metric row
//! per attempt, delays honoured and every chain run in dependency order.

use std::collections::BTreeMap;
use std::time::Duration;

use flexiq::{Job, JobFilter, JobId, Queue, TaskAggregate, WorkerCounters};
use serde::Serialize;

use crate::commands::dlq::dead_table;
use crate::commands::stats::{collect, stats_table, QueueRow};
use crate::commands::view::DeadView;
use crate::demo::workload::{DemoPayload, Expected, POISON_TASK};
use crate::error::{CliError, CliResult};
use crate::output::{ms, table, Output};

/// How long the phases took.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Enqueuing the whole workload.
    pub enqueue: Duration,
    /// From the worker's start until every job was terminal.
    pub run: Duration,
}

/// One scripted expectation and what the store says.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// The scripted number.
    pub expected: u64,
    /// The number read back.
    pub actual: u64,
    /// Whether they agree.
    pub ok: bool,
}

fn check(name: &str, expected: u64, actual: u64) -> Check {
    Check { name: name.to_string(), expected, actual, ok: expected == actual }
}

/// The worker's own counters, as printed.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WorkerView {
    /// Jobs claimed.
    pub claimed: u64,
    /// Attempts that succeeded.
    pub succeeded: u64,
    /// Attempts that failed.
    pub failed: u64,
    /// Acks refused as superseded.
    pub superseded: u64,
}

/// Everything the demo prints at the end.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The store file or URL.
    pub target: String,
    /// The backend's name.
    pub backend: String,
    /// The namespace used.
    pub namespace: String,
    /// Handlers at once.
    pub concurrency: u32,
    /// Time to enqueue everything (ms).
    pub enqueue_ms: u64,
    /// Time from worker start until every job was terminal (ms).
    pub run_ms: u64,
    /// Terminal jobs per second of `run_ms`.
    pub jobs_per_sec: f64,
    /// What the workload scripted.
    pub expected: Expected,
    /// Per-queue counts.
    pub queues: BTreeMap<String, QueueRow>,
    /// Per-task aggregates (durations in ms).
    pub metrics: BTreeMap<String, TaskAggregate>,
    /// The dead letters.
    pub dead_letters: Vec<DeadView>,
    /// The worker's counters.
    pub worker: WorkerView,
    /// The checks.
    pub checks: Vec<Check>,
    /// Whether every check passed.
    pub ok: bool,
}

/// Every job of the namespace, walked page by page.
async fn all_jobs(q: &Queue) -> CliResult<Vec<Job>> {
    let mut jobs = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = q.list_jobs_after(&JobFilter::default(), 10_000, after.as_deref()).await?;
        jobs.extend(page.items);
        match page.next_cursor {
            Some(c) => after = Some(c),
            None => return Ok(jobs),
        }
    }
}

/// Whether `job` was scripted with a delay and first ran no earlier than it allowed.
fn delay_honoured(job: &Job) -> bool {
    let delay = serde_json::from_slice::<DemoPayload>(&job.payload).map_or(0, |p| p.delay_ms);
    delay > 0 && job.started_at.is_some_and(|s| s >= job.created_at + delay as i64)
}

/// Chains whose links completed, each starting no earlier than the previous one finished.
async fn chains_in_order(q: &Queue, chains: &[[JobId; 3]]) -> CliResult<u64> {
    let mut ok = 0;
    for chain in chains {
        let mut links = Vec::with_capacity(3);
        for id in chain {
            links.push(q.get_job(id.as_str()).await?);
        }
        let in_order = links
            .iter()
            .all(|j| j.as_ref().is_some_and(|j| j.status == flexiq::JobStatus::Completed))
            && links.windows(2).all(|w| match (&w[0], &w[1]) {
                (Some(a), Some(b)) => matches!((a.finished_at, b.started_at), (Some(f), Some(s)) if s >= f),
                _ => false,
            });
        ok += u64::from(in_order);
    }
    Ok(ok)
}

/// Reads everything back and runs the checks.
pub async fn build(
    q: &Queue,
    target: &str,
    concurrency: u32,
    e: &Expected,
    chains: &[[JobId; 3]],
    timing: Timing,
    counters: WorkerCounters,
) -> CliResult<Report> {
    let queues = collect(q, None).await?;
    let metrics = q.metrics(None, 86_400).await?;
    let dead = q.dead_letters(10_000, 0).await?;
    let jobs = all_jobs(q).await?;
    let stats = q.stats().await?;

    let failures: u64 = metrics.values().map(|m| m.failure_count).sum();
    let successes: u64 = metrics.values().map(|m| m.success_count).sum();
    let early = jobs.iter().filter(|j| j.started_at.is_some_and(|s| s < j.run_at)).count() as u64;
    let delayed_ran = jobs.iter().filter(|j| delay_honoured(j)).count() as u64;
    let checks = vec![
        check("jobs completed", e.completed, stats.completed),
        check("jobs dead", e.dead, stats.dead),
        check("jobs failed, cancelled or unfinished", 0, stats.total() - stats.completed - stats.dead),
        check(
            "dead letters of webhook.deliver",
            e.dead,
            dead.iter().filter(|d| d.task_name == POISON_TASK).count() as u64,
        ),
        check("dead letters in all", e.dead, dead.len() as u64),
        check("successful executions in metrics", e.successful_executions, successes),
        check("failed executions in metrics", e.failed_executions, failures),
        check("delayed jobs run after their delay", e.delayed, delayed_ran),
        check("jobs started before their run_at", 0, early),
        check("chains run in dependency order", e.chains, chains_in_order(q, chains).await?),
    ];
    let run_ms = timing.run.as_millis() as u64;
    Ok(Report {
        target: target.to_string(),
        backend: q.backend().to_string(),
        namespace: q.namespace().to_string(),
        concurrency,
        enqueue_ms: timing.enqueue.as_millis() as u64,
        run_ms,
        jobs_per_sec: e.jobs as f64 / timing.run.as_secs_f64().max(0.001),
        expected: *e,
        queues,
        metrics,
        dead_letters: dead.iter().map(DeadView::from).collect(),
        worker: WorkerView {
            claimed: counters.claimed,
            succeeded: counters.succeeded,
            failed: counters.failed,
            superseded: counters.superseded,
        },
        ok: checks.iter().all(|c| c.ok),
        checks,
    })
}

/// Prints the report: tables, or one JSON document.
pub fn print(r: &Report, out: Output) -> CliResult {
    out.emit(r, || {
        outln!(
            "\n{} jobs finished in {:.2} s ({:.0} jobs/s); enqueued in {} ms",
            r.expected.jobs,
            r.run_ms as f64 / 1_000.0,
            r.jobs_per_sec,
            r.enqueue_ms
        );
        outln!("\nqueues:\n{}", stats_table(&r.queues));
        let mut m = table(["task", "count", "success", "failure", "avg ms", "p50 ms", "p95 ms", "p99 ms"]);
        for (task, a) in &r.metrics {
            m.add_row(vec![
                task.clone(),
                a.count.to_string(),
                a.success_count.to_string(),
                a.failure_count.to_string(),
                ms(a.avg_ms),
                ms(a.p50_ms),
                ms(a.p95_ms),
                ms(a.p99_ms),
            ]);
        }
        outln!("\nmetrics per task (one row per attempt):\n{m}");
        outln!("\ndead letters ({}):\n{}", r.dead_letters.len(), dead_table(&r.dead_letters));
        let mut c = table(["check", "expected", "actual", "result"]);
        for k in &r.checks {
            c.add_row(vec![
                k.name.clone(),
                k.expected.to_string(),
                k.actual.to_string(),
                if k.ok { "ok" } else { "FAILED" }.to_string(),
            ]);
        }
        outln!("\nchecks:\n{c}");
        if r.ok {
            outln!("every job ended as scripted");
        }
    })
}

/// Exit 0 when every check passed, else a one-line summary of the failed ones (exit 1).
pub fn verdict(r: &Report) -> CliResult {
    let failed: Vec<String> = r
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| format!("{}: expected {}, got {}", c.name, c.expected, c.actual))
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError::other(format!("demo check failed: {}", failed.join("; "))))
    }
}
