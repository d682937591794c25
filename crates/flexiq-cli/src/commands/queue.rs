//! `flexiq queue pause | resume | paused | rate-limit | concurrency`: persisted queue controls.
//!
//! Every control is stored, so one command affects every worker of the namespace and
//! survives restarts. `off` clears a rate limit or a concurrency cap.

use clap::Subcommand;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::Output;

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
}

/// Runs a `queue` subcommand.
pub async fn run(g: &GlobalArgs, cmd: QueueCmd, out: Output) -> CliResult {
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
    }
}
