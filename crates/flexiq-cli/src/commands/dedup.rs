//! `flexiq dedup show | delete KEY`: the dedup keys behind deduplicated enqueues.
//!
//! A key is held by one job at a time (see the dedup modes in `docs/cli.md`); `show` names
//! the holder or says the key is free, `delete` frees it so the next enqueue with it inserts,
//! leaving the holding job alone. Both answer for the namespace given (`--namespace`).

use clap::Subcommand;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::CliResult;
use crate::output::Output;

/// `flexiq dedup ...`
#[derive(Debug, Subcommand)]
pub enum DedupCmd {
    /// The job holding a dedup key now, or "free".
    Show {
        /// The dedup key.
        key: String,
    },
    /// Free a dedup key: the next enqueue with it inserts (the holding job is left alone).
    Delete {
        /// The dedup key.
        key: String,
    },
}

/// Runs a `dedup` subcommand.
pub async fn run(g: &GlobalArgs, cmd: DedupCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    match cmd {
        DedupCmd::Show { key } => {
            let holder = q.dedup_job_id(&key).await?.map(|id| id.to_string());
            out.emit(&json!({ "key": key, "job_id": holder }), || match &holder {
                Some(id) => outln!("dedup key {key} is held by job {id}"),
                None => outln!("dedup key {key} is free"),
            })
        }
        DedupCmd::Delete { key } => {
            let deleted = q.delete_dedup_key(&key).await?;
            out.emit(&json!({ "key": key, "deleted": deleted }), || {
                if deleted {
                    outln!("deleted dedup key {key}: the next enqueue with it inserts");
                } else {
                    outln!("dedup key {key} did not exist");
                }
            })
        }
    }
}
