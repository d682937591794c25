//! The demo's handlers: tiny simulated work whose outcome the payload scripts.
//!
//! Every task shares one handler: it sleeps the payload's 0 to 3 ms, then succeeds, fails
//! its first attempt (`flaky`) or fails every attempt (`poison`). The chain's handlers also
//! check that every job they depend on has completed, so a dependency released too early
//! fails the job for good and the demo's final check catches it.

use std::time::Duration;

use flexiq::{HandlerError, HandlerResult, JobContext, JobStatus, Worker};

use crate::demo::workload::{Behaviour, DemoPayload, CHAIN_TASKS, POISON_TASK};

/// Every task the demo enqueues.
pub const TASKS: [&str; 7] = [
    "email.send",
    "image.resize",
    "report.render",
    POISON_TASK,
    CHAIN_TASKS[0],
    CHAIN_TASKS[1],
    CHAIN_TASKS[2],
];

/// Registers the demo handler for every demo task.
pub fn register_all(worker: &mut Worker) -> flexiq::Result<()> {
    for task in TASKS {
        worker.register(task, handle)?;
    }
    Ok(())
}

async fn handle(ctx: JobContext) -> HandlerResult {
    let p: DemoPayload = serde_json::from_slice(ctx.payload()).map_err(|e| {
        HandlerError::fatal(format!("job {} has a payload the demo cannot read: {e}", ctx.id()))
    })?;
    tokio::time::sleep(Duration::from_millis(p.work_ms)).await;
    if CHAIN_TASKS.contains(&ctx.task()) {
        check_dependencies(&ctx).await?;
    }
    match p.behaviour {
        Behaviour::Ok => Ok(Some(format!(r#"{{"n":{},"ok":true}}"#, p.n).into_bytes())),
        Behaviour::Flaky if ctx.attempt() > 1 => {
            Ok(Some(format!(r#"{{"n":{},"ok":true,"attempt":{}}}"#, p.n, ctx.attempt()).into_bytes()))
        }
        Behaviour::Flaky => {
            Err(HandlerError::retryable("connection reset by peer (simulated: the retry succeeds)"))
        }
        Behaviour::Poison => Err(HandlerError::retryable(format!(
            "endpoint answered 503 on attempt {} (simulated: every attempt fails)",
            ctx.attempt()
        ))),
    }
}

async fn check_dependencies(ctx: &JobContext) -> Result<(), HandlerError> {
    for dep in &ctx.job().depends_on {
        let status = ctx.queue().get_job(dep.as_str()).await?.map(|j| j.status);
        if status != Some(JobStatus::Completed) {
            return Err(HandlerError::fatal(format!(
                "job {} started before its dependency {dep} completed ({})",
                ctx.id(),
                status.map_or("missing".to_string(), |s| s.to_string())
            )));
        }
    }
    Ok(())
}
