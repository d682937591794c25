//! `flexiq queue pause | resume | paused | rate-limit | concurrency | max-stalled | limits`:
//! persisted queue controls and what they allow now; `flexiq queue clean | drain | obliterate
//! | retry | promote`: jobs in bulk.
//!
//! Every control is stored, so one command affects every worker of the namespace and
//! survives restarts. `off` clears a rate limit or a concurrency cap, `--clear` a stall
//! budget (the default budget then applies).
//!
//! The bulk commands make one runtime call each, except `obliterate`, which walks the queue a
//! page at a time until the store says nothing of it is left, printing each page, so an
//! operator watching a large queue go sees it shrink, and `promote`, which calls until no
//! delayed job is left and prints the total. It is the one command here that cannot
//! be undone in any part (dead letters and controls go too), so it asks for `--yes` and
//! refuses before opening the store without it. Ages are milliseconds (`--grace-ms`), as the
//! backend contract names them.

use clap::{ArgGroup, Subcommand};
use serde::Serialize;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult, EXIT_CONFLICT};
use crate::output::{table, Output};

/// `flexiq queue ...`
#[derive(Debug, Subcommand)]
pub enum QueueCmd {
    /// Pause a queue: workers skip it until resumed (running jobs finish).
    Pause {
        /// The queue.
        queue: String,
    },
    /// Resume a paused queue.
    Resume {
        /// The queue.
        queue: String,
    },
    /// List paused queues.
    Paused,
    /// Limit claims from a queue across all workers: N/s, N/m or N/h (`off` clears it).
    RateLimit {
        /// The queue.
        queue: String,
        /// For example 10/s, 600/m, 1000/h, or off.
        #[arg(allow_hyphen_values = true)]
        rate: String,
    },
    /// Cap how many jobs of a queue run at once across all workers (`off` clears it).
    Concurrency {
        /// The queue.
        queue: String,
        /// At least 1, or off.
        #[arg(allow_hyphen_values = true)]
        max: String,
    },
    /// How many stalls (lapsed leases) a job of a queue recovers from before it fails with STALLED.
    #[command(group(ArgGroup::new("budget").required(true).args(["max", "clear"])))]
    MaxStalled {
        /// The queue.
        queue: String,
        /// 0 to 10,000 (0: the first stall fails the job).
        #[arg(allow_negative_numbers = true)]
        max: Option<i64>,
        /// Restore the default budget.
        #[arg(long)]
        clear: bool,
    },
    /// Whether a queue is at its concurrency cap, and when its rate limit grants the next claim.
    Limits {
        /// The queue.
        queue: String,
    },
    /// Remove a queue's jobs of one status older than a grace period, oldest first.
    Clean {
        /// The queue.
        queue: String,
        /// Which jobs: completed, failed, dead, cancelled, pending, waiting or suspended.
        #[arg(long)]
        status: String,
        /// Only jobs finished (unfinished statuses: created) at least this many ms ago.
        #[arg(long, value_name = "MS", allow_negative_numbers = true)]
        grace_ms: i64,
        /// Most jobs removed, 1 to 10,000.
        #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
        limit: i64,
    },
    /// Remove a queue's pending jobs that are due (waiting, suspended and running ones stay).
    Drain {
        /// The queue.
        queue: String,
        /// Also remove pending jobs delayed to a later time.
        #[arg(long)]
        include_delayed: bool,
    },
    /// Remove a queue with every job, dead letter and control of it, a page at a time.
    Obliterate {
        /// The queue.
        queue: String,
        /// Remove running jobs too (their workers' late acks are then refused).
        #[arg(long)]
        force: bool,
        /// Jobs removed per page, 1 to 10,000.
        #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
        count: i64,
        /// Confirm: nothing removed can be brought back.
        #[arg(long)]
        yes: bool,
    },
    /// Move a queue's failed, dead or completed jobs back to pending with a fresh retry budget.
    Retry {
        /// The queue.
        queue: String,
        /// Which jobs: failed, dead or completed.
        #[arg(long)]
        status: String,
        /// Most jobs moved, 1 to 10,000, oldest finished first.
        #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
        count: i64,
    },
    /// Make every delayed job of a queue due now, soonest first.
    Promote {
        /// The queue.
        queue: String,
        /// Jobs promoted per call, 1 to 10,000.
        #[arg(long, default_value_t = 1000, allow_negative_numbers = true)]
        count: i64,
    },
}

/// What `queue limits` prints with `--json`.
#[derive(Debug, Serialize)]
struct LimitsView {
    queue: String,
    paused: bool,
    rate_limit: Option<String>,
    /// Until the rate limit grants another claim (ms); 0 without a limit or when one is free.
    rate_limit_ttl_ms: u64,
    concurrency: Option<u32>,
    running: u64,
    maxed: bool,
    /// Stalls a job recovers from before it fails with `STALLED` (the default when unset).
    stall_budget: u32,
}

/// What `queue obliterate` prints with `--json`.
#[derive(Debug, Serialize)]
struct ObliterateView {
    queue: String,
    force: bool,
    pages: usize,
    /// Jobs of the queue left after each page; the last is 0.
    left_after_page: Vec<u64>,
}

/// Runs a `queue` subcommand.
pub async fn run(g: &GlobalArgs, cmd: QueueCmd, out: Output) -> CliResult {
    if let QueueCmd::Obliterate { queue, yes: false, .. } = &cmd {
        return Err(CliError::invalid(format!(
            "obliterate removes queue {queue} with every job, dead letter and control of it: \
             pass --yes to confirm"
        )));
    }
    let q = open(g, Open::Existing).await?;
    match cmd {
        QueueCmd::Pause { queue } => {
            q.pause(&queue).await?;
            out.emit(&json!({ "queue": queue, "paused": true }), || outln!("queue {queue} paused"))
        }
        QueueCmd::Resume { queue } => {
            q.resume(&queue).await?;
            out.emit(&json!({ "queue": queue, "paused": false }), || outln!("queue {queue} resumed"))
        }
        QueueCmd::Paused => {
            let paused = q.paused_queues().await?;
            out.emit(&paused, || {
                if paused.is_empty() {
                    outln!("no paused queues");
                } else {
                    paused.iter().for_each(|p| outln!("{p}"));
                }
            })
        }
        QueueCmd::RateLimit { queue, rate } => {
            if rate == "off" {
                q.clear_queue_rate_limit(&queue).await?;
            } else {
                q.set_queue_rate_limit(&queue, &rate).await?;
            }
            let cfg = q.queue_config(&queue).await?;
            let shown = cfg.rate_limit.map(|r| r.to_string());
            out.emit(&json!({ "queue": queue, "rate_limit": shown }), || match &shown {
                Some(r) => outln!("queue {queue} rate limit set to {r}"),
                None => outln!("queue {queue} has no rate limit"),
            })
        }
        QueueCmd::Concurrency { queue, max } => {
            if max == "off" {
                q.clear_queue_concurrency(&queue).await?;
            } else {
                let n: i64 = max.trim().parse().map_err(|_| {
                    CliError::invalid(format!(
                        "concurrency {max:?} of queue {queue} is not a whole number or off"
                    ))
                })?;
                q.set_queue_concurrency(&queue, n).await?;
            }
            let cfg = q.queue_config(&queue).await?;
            out.emit(&json!({ "queue": queue, "concurrency": cfg.concurrency }), || match cfg.concurrency {
                Some(n) => outln!("queue {queue} runs at most {n} jobs at once"),
                None => outln!("queue {queue} has no concurrency cap"),
            })
        }
        QueueCmd::MaxStalled { queue, max, .. } => max_stalled(&q, queue, max, out).await,
        QueueCmd::Limits { queue } => limits(&q, queue, out).await,
        QueueCmd::Clean { queue, status, grace_ms, limit } => {
            let ids: Vec<String> =
                q.clean(&queue, &status, grace_ms, limit).await?.iter().map(|id| id.to_string()).collect();
            out.emit(&json!({ "queue": queue, "status": status, "removed": ids }), || {
                ids.iter().for_each(|id| outln!("{id}"));
                outln!("removed {} {status} jobs of queue {queue} at least {grace_ms} ms old", ids.len());
            })
        }
        QueueCmd::Drain { queue, include_delayed } => {
            let n = q.drain(&queue, include_delayed).await?;
            out.emit(&json!({ "queue": queue, "include_delayed": include_delayed, "removed": n }), || {
                let which = if include_delayed { "pending" } else { "due pending" };
                outln!("removed {n} {which} jobs of queue {queue}");
            })
        }
        QueueCmd::Obliterate { queue, force, count, .. } => obliterate(&q, queue, force, count, out).await,
        QueueCmd::Retry { queue, status, count } => {
            let n = q.retry_jobs(&queue, &status, count).await?;
            out.emit(&json!({ "queue": queue, "status": status, "retried": n }), || {
                outln!("moved {n} {status} jobs of queue {queue} back to pending");
            })
        }
        QueueCmd::Promote { queue, count } => {
            let (promoted, calls) = promote(&q, &queue, count).await?;
            out.emit(&json!({ "queue": queue, "promoted": promoted, "calls": calls }), || {
                outln!("promoted {promoted} delayed jobs of queue {queue} (due now)");
            })
        }
    }
}

/// Promotes `count` delayed jobs of `queue` at a time until a call promotes fewer than
/// `count` (the queue has caught up, so producers adding delayed jobs cannot keep it looping);
/// returns the total and the calls made.
async fn promote(q: &flexiq::Queue, queue: &str, count: i64) -> CliResult<(u64, usize)> {
    let (mut total, mut calls) = (0, 0);
    loop {
        let n = q.promote_jobs(queue, count).await?;
        calls += 1;
        total += n;
        if n < count.max(0) as u64 {
            return Ok((total, calls));
        }
    }
}

/// Sets the stall budget of `queue` to `max`, or clears it when `None` (the argument group
/// refuses a number with `--clear`, and neither), and prints the budget in force.
async fn max_stalled(q: &flexiq::Queue, queue: String, max: Option<i64>, out: Output) -> CliResult {
    match max {
        Some(n) => q.set_queue_max_stalled(&queue, n).await?,
        None => q.clear_queue_max_stalled(&queue).await?,
    }
    let cfg = q.queue_config(&queue).await?;
    let budget = cfg.stall_budget();
    let view = json!({ "queue": queue, "max_stalled_count": cfg.max_stalled_count, "stall_budget": budget });
    out.emit(&view, || match cfg.max_stalled_count {
        Some(n) => outln!("jobs of queue {queue} recover from {n} stalls, then fail with STALLED"),
        None => outln!("queue {queue} has the default stall budget: {budget} stalls, then STALLED"),
    })
}

async fn limits(q: &flexiq::Queue, queue: String, out: Output) -> CliResult {
    let rate_limit_ttl_ms = q.rate_limit_ttl(&queue).await?;
    let cfg = q.queue_config(&queue).await?;
    let maxed = q.is_maxed(&queue).await?;
    let running = q.stats_for_queue(&queue).await?.running;
    let view = LimitsView {
        queue,
        paused: cfg.paused,
        rate_limit: cfg.rate_limit.map(|r| r.to_string()),
        rate_limit_ttl_ms,
        concurrency: cfg.concurrency,
        running,
        maxed,
        stall_budget: cfg.stall_budget(),
    };
    out.emit(&view, || {
        let mut t = table(["field", "value"]);
        let cap = view.concurrency.map_or_else(|| "none".to_string(), |c| c.to_string());
        let rows = [
            ("queue", view.queue.clone()),
            ("paused", view.paused.to_string()),
            ("rate limit", view.rate_limit.clone().unwrap_or_else(|| "none".into())),
            ("next claim in (ms)", view.rate_limit_ttl_ms.to_string()),
            ("concurrency cap", cap),
            ("running", view.running.to_string()),
            ("maxed", view.maxed.to_string()),
            ("stall budget", view.stall_budget.to_string()),
        ];
        for (k, v) in rows {
            t.add_row(vec![k.to_string(), v]);
        }
        outln!("{t}");
    })
}

/// Pages through `queue` until nothing of it is left. A page that leaves as many jobs as the
/// one before means producers enqueue as fast as pages remove, and looping on would never end.
async fn obliterate(q: &flexiq::Queue, queue: String, force: bool, count: i64, out: Output) -> CliResult {
    let mut left_after_page = Vec::new();
    loop {
        let left = q.obliterate(&queue, force, count).await?;
        let page = left_after_page.len() + 1;
        if !out.json {
            outln!("page {page}: {left} jobs of queue {queue} left");
        }
        if left_after_page.last().is_some_and(|&before| left >= before) {
            return Err(CliError {
                message: format!(
                    "obliterate of queue {queue} stopped at page {page}: {left} jobs left, no fewer \
                     than the page before (jobs arrive as fast as pages remove them)"
                ),
                code: EXIT_CONFLICT,
            });
        }
        left_after_page.push(left);
        if left == 0 {
            break;
        }
    }
    let view = ObliterateView { queue, force, pages: left_after_page.len(), left_after_page };
    out.emit(&view, || outln!("queue {} obliterated in {} pages", view.queue, view.pages))
}
