//! `flexiq workers`: the worker processes registered in the store, their heartbeats and the
//! jobs each runs now.
//!
//! A worker's running jobs go one id per line in its row, so a hung worker's jobs can be
//! copied straight into `flexiq requeue`.

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::CliResult;
use crate::output::{table, time, Output};

/// Runs `flexiq workers`.
pub async fn run(g: &GlobalArgs, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    let workers = q.list_workers().await?;
    out.emit(&workers, || {
        if workers.is_empty() {
            outln!("no workers registered in namespace {}", q.namespace());
            return;
        }
        let mut t = table([
            "id",
            "host",
            "pid",
            "queues",
            "concurrency",
            "started",
            "last heartbeat",
            "running jobs",
        ]);
        for w in &workers {
            let queues = if w.queues.is_empty() { "(all)".to_string() } else { w.queues.join(", ") };
            t.add_row(vec![
                w.id.clone(),
                w.host.clone(),
                w.pid.to_string(),
                queues,
                w.concurrency.to_string(),
                time(w.started_at),
                time(w.heartbeat_at),
                if w.current_jobs.is_empty() { "-".to_string() } else { w.current_jobs.join("\n") },
            ]);
        }
        outln!("{t}");
    })
}
