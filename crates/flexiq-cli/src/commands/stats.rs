//! `flexiq stats`: job counts by status per queue, with each queue's controls.
//!
//! Queues with no jobs but some control (paused, rate limit, cap) are listed too, so an
//! operator sees why a queue is quiet. The demo prints its final report with the same table.

use std::collections::BTreeMap;

use comfy_table::Table;
use flexiq::{Queue, Stats};
use serde::Serialize;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::CliResult;
use crate::output::{table, Output};

/// One queue's line.
#[derive(Debug, Clone, Serialize)]
pub struct QueueRow {
    /// Counts per status.
    #[serde(flatten)]
    pub stats: Stats,
    /// Every job counted.
    pub total: u64,
    /// Whether claims skip the queue.
    pub paused: bool,
    /// Its rate limit (`"N/s"`, `"N/m"`, `"N/h"`).
    pub rate_limit: Option<String>,
    /// Its concurrency cap.
    pub concurrency: Option<u32>,
}

/// Counts and controls of every known queue (or only `only`), by queue name.
pub async fn collect(q: &Queue, only: Option<&str>) -> CliResult<BTreeMap<String, QueueRow>> {
    let mut by_queue = q.stats_all_queues().await?;
    if let Some(name) = only {
        let stats = by_queue.remove(name).unwrap_or_default();
        by_queue = BTreeMap::from([(name.to_string(), stats)]);
    }
    let mut rows = BTreeMap::new();
    for (name, stats) in by_queue {
        let cfg = q.queue_config(&name).await?;
        rows.insert(
            name,
            QueueRow {
                total: stats.total(),
                stats,
                paused: cfg.paused,
                rate_limit: cfg.rate_limit.map(|r| r.to_string()),
                concurrency: cfg.concurrency,
            },
        );
    }
    Ok(rows)
}

/// The per-queue table, with a total line when there is more than one queue.
pub fn stats_table(rows: &BTreeMap<String, QueueRow>) -> Table {
    let mut t = table([
        "queue",
        "pending",
        "running",
        "completed",
        "failed",
        "dead",
        "cancelled",
        "suspended",
        "waiting",
        "total",
        "controls",
    ]);
    let mut sum = Stats::default();
    for (name, r) in rows {
        let mut line = vec![name.clone()];
        line.extend(r.stats.entries().into_iter().map(|(status, n)| {
            if let Ok(st) = status.parse() {
                sum.add(st, n);
            }
            n.to_string()
        }));
        line.push(r.total.to_string());
        line.push(controls(r));
        t.add_row(line);
    }
    if rows.len() > 1 {
        let mut line = vec!["(all)".to_string()];
        line.extend(sum.entries().into_iter().map(|(_, n)| n.to_string()));
        line.push(sum.total().to_string());
        line.push(String::new());
        t.add_row(line);
    }
    t
}

fn controls(r: &QueueRow) -> String {
    let mut parts = Vec::new();
    if r.paused {
        parts.push("paused".to_string());
    }
    if let Some(rate) = &r.rate_limit {
        parts.push(format!("rate {rate}"));
    }
    if let Some(c) = r.concurrency {
        parts.push(format!("max {c} running"));
    }
    if parts.is_empty() {
        "-".to_string()
    } else {
        parts.join(", ")
    }
}

/// Runs `flexiq stats`.
pub async fn run(g: &GlobalArgs, only: Option<&str>, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    let rows = collect(&q, only).await?;
    out.emit(&rows, || {
        if rows.is_empty() {
            outln!("no queues in namespace {}", q.namespace());
        } else {
            outln!("{}", stats_table(&rows));
        }
    })
}
