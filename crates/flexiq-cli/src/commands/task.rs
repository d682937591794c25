//! `flexiq task revoke | unrevoke | revoked`: stop and restart enqueues of a task name.
//!
//! A revocation is stored, so it holds for every producer of the namespace at once, the way an
//! operator stops a misbehaving task without a deploy. Jobs of the task already pending still
//! run; only new enqueues (and retries of its dead letters, replays of its jobs) are refused.

use clap::Subcommand;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::CliResult;
use crate::output::Output;

/// `flexiq task ...`
#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Refuse every future enqueue of a task (pending jobs of it still run).
    Revoke {
        /// The task name.
        task: String,
    },
    /// Allow enqueues of a revoked task again.
    Unrevoke {
        /// The task name.
        task: String,
    },
    /// List revoked tasks.
    Revoked,
}

/// Runs a `task` subcommand.
pub async fn run(g: &GlobalArgs, cmd: TaskCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    match cmd {
        TaskCmd::Revoke { task } => {
            q.revoke_task(&task).await?;
            out.emit(&json!({ "task": task, "revoked": true }), || {
                outln!("task {task} revoked: new enqueues are refused, pending jobs still run")
            })
        }
        TaskCmd::Unrevoke { task } => {
            let lifted = q.unrevoke_task(&task).await?;
            out.emit(&json!({ "task": task, "revoked": false, "was_revoked": lifted }), || {
                if lifted {
                    outln!("task {task} unrevoked");
                } else {
                    outln!("task {task} was not revoked");
                }
            })
        }
        TaskCmd::Revoked => {
            let revoked = q.revoked_tasks().await?;
            out.emit(&revoked, || {
                if revoked.is_empty() {
                    outln!("no revoked tasks");
                } else {
                    revoked.iter().for_each(|t| outln!("{t}"));
                }
            })
        }
    }
}
