//! `flexiq workflow jobs | cancel-run`: the job rows of a workflow run, and cancelling a run.
//!
//! A workflow engine keeps one job per stage of each run (task = the workflow id); an operator
//! looking into a stuck run wants those rows side by side (status, attempt, lease, next poll,
//! last error) and, when the run must stop, to cancel what has not started. Running attempts
//! are left to finish or to lose their lease, and finished stages are never touched, so
//! cancelling is safe to repeat.

use clap::Subcommand;
use flexiq::{JobStatus, WorkflowJobRecord, WorkflowOptions};
use serde::Serialize;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::commands::view::Bytes;
use crate::connect::{open, Open};
use crate::error::CliResult;
use crate::output::{opt_text, opt_time, short, table, time, Output};

/// `flexiq workflow ...`
#[derive(Debug, Subcommand)]
pub enum WorkflowCmd {
    /// The jobs of a workflow run, oldest first: one per stage, in any status.
    Jobs {
        /// The workflow run id.
        run_id: String,
    },
    /// Cancel a run's pending, waiting and suspended jobs (running and finished ones are left alone).
    CancelRun {
        /// The workflow run id.
        run_id: String,
    },
}

/// A workflow job as printed with `--json` (timestamps in Unix ms).
#[derive(Debug, Serialize)]
struct WorkflowJobView {
    id: String,
    queue: String,
    workflow_run_id: String,
    workflow_id: String,
    stage_id: String,
    definition_version: Option<String>,
    group_key: Option<String>,
    status: JobStatus,
    attempt: u32,
    max_attempts: u32,
    worker_id: Option<String>,
    locked_at: Option<i64>,
    started_at: Option<i64>,
    next_poll_at: i64,
    last_error: Option<String>,
    payload: Bytes,
    created_at: i64,
    updated_at: i64,
}

impl From<&WorkflowJobRecord> for WorkflowJobView {
    fn from(r: &WorkflowJobRecord) -> Self {
        WorkflowJobView {
            id: r.id.to_string(),
            queue: r.queue.clone(),
            workflow_run_id: r.workflow_run_id.clone(),
            workflow_id: r.workflow_id.clone(),
            stage_id: r.stage_id.clone(),
            definition_version: r.definition_version.clone(),
            group_key: r.group_key.clone(),
            status: r.status,
            attempt: r.attempt,
            max_attempts: r.max_attempts,
            worker_id: r.worker_id.clone(),
            locked_at: r.locked_at,
            started_at: r.started_at,
            next_poll_at: r.next_poll_at,
            last_error: r.last_error.clone(),
            payload: Bytes::of(&r.payload),
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// Runs a `workflow` subcommand.
pub async fn run(g: &GlobalArgs, cmd: WorkflowCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    let wf = q.workflow_jobs(WorkflowOptions::default())?;
    match cmd {
        WorkflowCmd::Jobs { run_id } => {
            let jobs = wf.get_jobs_by_workflow_run(&run_id).await?;
            let view: Vec<WorkflowJobView> = jobs.iter().map(WorkflowJobView::from).collect();
            out.emit(&view, || print_jobs(&run_id, &view))
        }
        WorkflowCmd::CancelRun { run_id } => {
            let n = wf.cancel_by_run(&run_id).await?;
            out.emit(&json!({ "workflow_run_id": run_id, "cancelled": n }), || {
                outln!("cancelled {n} jobs of workflow run {run_id}")
            })
        }
    }
}

fn print_jobs(run_id: &str, jobs: &[WorkflowJobView]) {
    if jobs.is_empty() {
        outln!("no jobs for workflow run {run_id}");
        return;
    }
    let mut t = table([
        "id",
        "stage",
        "workflow",
        "version",
        "status",
        "attempt",
        "worker",
        "locked at",
        "next poll",
        "last error",
    ]);
    for j in jobs {
        t.add_row(vec![
            j.id.clone(),
            j.stage_id.clone(),
            j.workflow_id.clone(),
            opt_text(j.definition_version.as_deref()),
            j.status.to_string(),
            format!("{}/{}", j.attempt, j.max_attempts),
            opt_text(j.worker_id.as_deref()),
            opt_time(j.locked_at),
            time(j.next_poll_at),
            short(&opt_text(j.last_error.as_deref()), 40),
        ]);
    }
    outln!("{t}");
    outln!("{} jobs of workflow run {run_id}", jobs.len());
}
