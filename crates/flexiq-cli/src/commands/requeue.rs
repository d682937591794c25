//! `flexiq requeue ID`: force a stuck running job back to pending.
//!
//! The runtime answers a plain false both for an unknown job and for one that is not
//! running; the CLI tells the two apart (exit 3 and exit 4) by reading the job first.

use serde_json::json;

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult, EXIT_CONFLICT};
use crate::output::Output;

/// Runs `flexiq requeue ID`.
pub async fn run(g: &GlobalArgs, id: &str, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    let job = q.get_job(id).await?.ok_or_else(|| CliError::not_found(format!("job {id} not found")))?;
    if !q.requeue_job(id).await? {
        // Re-read: the job may have finished between the two calls.
        let status = q.get_job(id).await?.map_or(job.status, |j| j.status);
        return Err(CliError {
            message: format!("job {id} is {status}, not running: only a running job can be requeued"),
            code: EXIT_CONFLICT,
        });
    }
    out.emit(&json!({ "job_id": id, "requeued": true }), || outln!("job {id} requeued (pending again)"))
}
