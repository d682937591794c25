//! `flexiq jobs list | show | remove | remove-orphans`: keyset pages of jobs, one job in
//! detail, and removing jobs with everything kept about them; `flexiq jobs delay | promote |
//! priority`: moving one job that has not started in time or in line; `flexiq jobs deps |
//! detach`: a job's dependencies by outcome (see `deps.rs`).
//!
//! Listing walks keyset pages only: the printed cursor goes back in as `--after`, so a walk
//! is stable while jobs keep arriving. The cursor is opaque and bound to the filter; a
//! garbage or foreign one is an invalid argument (exit 2), never a wrong page.
//!
//! `remove` takes the jobs a job waits on with it unless `--keep-children`, matching the
//! runtime's default, and refuses (exit 4, nothing removed) while it or such a child runs.
//!
//! `delay`, `promote` and `priority` print the job's `run_at` as the store has it afterwards,
//! so an operator sees where the job landed; a job that started or finished is refused with
//! exit 4 naming its status. Delays are milliseconds, as the backend contract names them.

use clap::Subcommand;
use flexiq::{JobFilter, JobStatus};
use serde::Serialize;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::commands::view::JobView;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::{opt_text, opt_time, run_at, short, table, time, Output};

/// `flexiq jobs ...`
#[derive(Debug, Subcommand)]
pub enum JobsCmd {
    /// Jobs newest first, one keyset page at a time.
    List {
        /// Only this status (pending, running, completed, failed, dead, cancelled, suspended, waiting).
        #[arg(long)]
        status: Option<String>,
        /// Only this queue.
        #[arg(long)]
        queue: Option<String>,
        /// Only this task.
        #[arg(long)]
        task: Option<String>,
        /// Page size, 1 to 10,000.
        #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
        limit: i64,
        /// The cursor printed by the previous page.
        #[arg(long, value_name = "CURSOR")]
        after: Option<String>,
    },
    /// One job: its fields, every failed attempt and its dependency graph.
    Show {
        /// The job id.
        id: String,
    },
    /// Remove a job with its history, and the jobs it waits on that no other job needs.
    Remove {
        /// The job id.
        id: String,
        /// Remove only this job, leaving the jobs it waits on.
        #[arg(long)]
        keep_children: bool,
    },
    /// Remove history rows and records that no job owns any more.
    RemoveOrphans,
    /// Make a pending job due this many milliseconds from now, whatever its delay was.
    Delay {
        /// The job id.
        id: String,
        /// Milliseconds from now (0: due now).
        #[arg(allow_negative_numbers = true)]
        delay_ms: i64,
    },
    /// Make a delayed pending job due now.
    Promote {
        /// The job id.
        id: String,
    },
    /// Give a job that has not started a new priority (higher runs first).
    Priority {
        /// The job id.
        id: String,
        /// The new priority, -2097152 to 2097152.
        #[arg(allow_negative_numbers = true)]
        priority: i64,
        /// Place it LIFO: ahead of that priority's FIFO jobs, newest LIFO job first (it must be due).
        #[arg(long)]
        lifo: bool,
    },
    /// A job's dependencies (a flow parent's children) by outcome, one page at a time.
    Deps {
        /// The parent job id.
        id: String,
        /// The cursor printed by the previous page (a child id).
        #[arg(long, value_name = "CHILD_ID")]
        after: Option<String>,
        /// Page size, 1 to 10,000.
        #[arg(long, default_value_t = crate::commands::deps::DEFAULT_DEPS_LIMIT, allow_negative_numbers = true)]
        limit: i64,
    },
    /// Detach an unfinished child from the jobs waiting on it (a parent left with nothing open can run).
    Detach {
        /// The child job id.
        child_id: String,
    },
}

/// One page as printed with `--json`.
#[derive(Debug, Serialize)]
struct PageView {
    items: Vec<JobView>,
    next_cursor: Option<String>,
}

/// Runs a `jobs` subcommand.
pub async fn run(g: &GlobalArgs, cmd: JobsCmd, out: Output) -> CliResult {
    match cmd {
        JobsCmd::List { status, queue, task, limit, after } => {
            let status = status.as_deref().map(str::parse::<JobStatus>).transpose()?;
            let filter = JobFilter { status, queue, task, ..Default::default() };
            let q = open(g, Open::Existing).await?;
            let page = q.list_jobs_after(&filter, limit, after.as_deref()).await?;
            let view = PageView {
                items: page.items.iter().map(JobView::from).collect(),
                next_cursor: page.next_cursor,
            };
            out.emit(&view, || print_page(&view))
        }
        JobsCmd::Show { id } => show(g, &id, out).await,
        JobsCmd::Remove { id, keep_children } => {
            let q = open(g, Open::Existing).await?;
            let removed: Vec<String> =
                q.remove(&id, !keep_children).await?.iter().map(|r| r.to_string()).collect();
            out.emit(&json!({ "job_id": id, "removed": removed }), || {
                removed.iter().for_each(|r| outln!("{r}"));
                let children = removed.len().saturating_sub(1);
                outln!("removed job {id} and {children} jobs it waited on");
            })
        }
        JobsCmd::Delay { id, delay_ms } => {
            let q = open(g, Open::Existing).await?;
            q.change_delay(&id, delay_ms).await?;
            let at = run_at_now(&q, &id).await?;
            out.emit(&json!({ "job_id": id, "delay_ms": delay_ms, "run_at": at }), || {
                outln!("job {id} is due at {} ({delay_ms} ms from now)", run_at(at))
            })
        }
        JobsCmd::Promote { id } => {
            let q = open(g, Open::Existing).await?;
            q.promote(&id).await?;
            let at = run_at_now(&q, &id).await?;
            out.emit(&json!({ "job_id": id, "promoted": true, "run_at": at }), || {
                outln!("job {id} promoted: due now ({})", run_at(at))
            })
        }
        JobsCmd::Priority { id, priority, lifo } => {
            let q = open(g, Open::Existing).await?;
            q.change_priority(&id, priority, lifo).await?;
            let at = run_at_now(&q, &id).await?;
            out.emit(&json!({ "job_id": id, "priority": priority, "lifo": lifo, "run_at": at }), || {
                let placed = if lifo { ", placed LIFO: ahead of that priority's FIFO jobs" } else { "" };
                outln!("job {id} has priority {priority}{placed}");
            })
        }
        JobsCmd::Deps { id, after, limit } => {
            crate::commands::deps::deps(g, &id, after.as_deref(), limit, out).await
        }
        JobsCmd::Detach { child_id } => crate::commands::deps::detach(g, &child_id, out).await,
        JobsCmd::RemoveOrphans => {
            let q = open(g, Open::Existing).await?;
            let n = q.remove_orphans().await?;
            out.emit(&json!({ "removed": n }), || {
                outln!("removed {n} orphaned rows in namespace {}", q.namespace())
            })
        }
    }
}

/// The `run_at` of a job just moved (`NotFound` when it went in the meantime).
async fn run_at_now(q: &flexiq::Queue, id: &str) -> CliResult<i64> {
    let job = q.get_job(id).await?.ok_or_else(|| CliError::not_found(format!("job {id} not found")))?;
    Ok(job.run_at)
}

fn print_page(page: &PageView) {
    let mut t = table([
        "id",
        "queue",
        "task",
        "status",
        "attempt",
        "stalls",
        "created",
        "run at",
        "finished",
        "last error",
    ]);
    for j in &page.items {
        t.add_row(vec![
            j.id.clone(),
            j.queue.clone(),
            j.task.clone(),
            j.status.to_string(),
            format!("{}/{}", j.attempt, j.max_retries + 1),
            j.stall_count.to_string(),
            time(j.created_at),
            run_at(j.run_at),
            opt_time(j.finished_at),
            short(&opt_text(j.last_error.as_deref()), 40),
        ]);
    }
    outln!("{t}");
    match &page.next_cursor {
        Some(c) => outln!("{} jobs; next page: --after {c}", page.items.len()),
        None => outln!("{} jobs; last page", page.items.len()),
    }
}

#[derive(Debug, Serialize)]
struct ShowView {
    job: JobView,
    errors: Vec<flexiq::JobError>,
    dag: flexiq::JobDag,
}

async fn show(g: &GlobalArgs, id: &str, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    let job = q.get_job(id).await?.ok_or_else(|| CliError::not_found(format!("job {id} not found")))?;
    let errors = q.get_job_errors(id).await?;
    let dag = q.job_dag(id).await?;
    let view = ShowView { job: JobView::from(&job), errors, dag };
    out.emit(&view, || print_job(&view))
}

fn print_job(v: &ShowView) {
    let j = &v.job;
    let mut t = table(["field", "value"]);
    let rows: Vec<(&str, String)> = vec![
        ("id", j.id.clone()),
        ("namespace", j.namespace.clone()),
        ("queue", j.queue.clone()),
        ("task", j.task.clone()),
        ("status", j.status.to_string()),
        ("priority", j.priority.to_string()),
        ("attempt", format!("{} of {}", j.attempt, j.max_retries + 1)),
        ("stalls", j.stall_count.to_string()),
        ("created", time(j.created_at)),
        ("run at", run_at(j.run_at)),
        ("started", opt_time(j.started_at)),
        ("finished", opt_time(j.finished_at)),
        ("worker", opt_text(j.worker_id.as_deref())),
        ("payload", short(&j.payload.display(), 80)),
        ("result", short(&j.result.as_ref().map(|r| r.display()).unwrap_or_else(|| "-".into()), 80)),
        ("last error", opt_text(j.last_error.as_deref())),
        ("unique key", opt_text(j.unique_key.as_deref())),
        ("metadata", opt_text(j.metadata.as_deref())),
        ("progress", j.progress.map_or_else(|| "-".to_string(), |p| format!("{p:.0}%"))),
        ("depends on", if j.depends_on.is_empty() { "-".into() } else { j.depends_on.join(", ") }),
    ];
    for (k, val) in rows {
        t.add_row(vec![k.to_string(), val]);
    }
    outln!("{t}");
    if !v.errors.is_empty() {
        let mut e = table(["attempt", "failed at", "error"]);
        for err in &v.errors {
            e.add_row(vec![err.attempt.to_string(), time(err.failed_at), short(&err.error, 80)]);
        }
        outln!("failed attempts:\n{e}");
    }
    if !v.dag.edges.is_empty() {
        let mut d = table(["job", "task", "status"]);
        for n in &v.dag.nodes {
            d.add_row(vec![n.id.clone(), n.task.clone(), n.status.to_string()]);
        }
        outln!("dependency graph ({} edges):\n{d}", v.dag.edges.len());
    }
}
