//! `flexiq workers`: the worker processes registered in the store and their heartbeats.

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
        let mut t = table(["id", "host", "pid", "queues", "concurrency", "started", "last heartbeat"]);
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
            ]);
        }
        outln!("{t}");
    })
}
