//! The workflow view: `NativeQueue.workflowJobs` and the `NativeWorkflowJobs` class, the
//! addon's side of the workflow job contract (a workflow engine's job queue over flexiq).
//!
//! Every call is a thin pass to the runtime's `WorkflowJobs`: the runtime owns the stage
//! upsert, the fair claim and the fenced acks. This file checks the numbers JavaScript hands
//! over (through [`crate::args`]) and the fences: a fence carries the id of the job it was
//! claimed for, so a fence passed with another job's id is refused with `INVALID_ARGUMENT`
//! before anything is written. The view shares its queue's handle, so after `queue.close()`
//! every call fails with `CLOSED`. Everything but `adoptWorkerId` and the getters returns a
//! Promise and runs on the addon's threads.

use std::sync::Arc;

use flexiq_runtime::{Fence, Queue, WorkflowJobs};
use napi_derive::napi;
use parking_lot::RwLock;

use crate::args;
use crate::error::{closed, invalid, IntoNapi, Result};
use crate::options::{DequeueOptions, WorkflowJobInput, WorkflowJobsOptions};
use crate::queue::NativeQueue;
use crate::types::{WorkflowDequeued, WorkflowFence, WorkflowJobRecord};

/// What `releaseStaleJobs()` takes without an argument: a running job whose lease was not
/// refreshed for a minute is released.
const DEFAULT_STALE_THRESHOLD_MS: i64 = 60_000;

/// Largest whole number a JS number holds exactly.
const MAX_SAFE: i64 = 9_007_199_254_740_991;

/// The runtime's fence of `fence`, which must be a claim of `job_id`.
fn fence_of(job_id: &str, fence: Option<WorkflowFence>) -> Result<Option<Fence>> {
    let Some(f) = fence else { return Ok(None) };
    if f.job_id != job_id {
        return Err(invalid(format!("the fence of job {} was passed for job {job_id}", f.job_id)));
    }
    Ok(Some(Fence {
        attempt: args::int("fence.attempt", f.attempt, 1, i64::from(u32::MAX))? as u32,
        started_at: args::unix_ms("fence.startedAt", f.started_at)?,
        claim_seq: args::int("fence.claimSeq", f.claim_seq, 1, MAX_SAFE)? as u64,
    }))
}

/// A count the runtime reports, as a JS number.
fn count(n: u64) -> f64 {
    n as f64
}

#[napi]
impl NativeQueue {
    /// A workflow view of this queue: stages enqueued as jobs on its queue (default
    /// `"workflow"`), claimed fairly per `fairnessGroupBy` group under `fairnessCap`.
    #[napi]
    pub fn workflow_jobs(&self, options: Option<WorkflowJobsOptions>) -> Result<NativeWorkflowJobs> {
        let opts = match options {
            Some(o) => o.resolve()?,
            None => flexiq_runtime::WorkflowOptions {
                queue: None,
                fairness_group_by: None,
                fairness_cap: None,
                worker_id: None,
                claim_ahead: false,
            },
        };
        let q = self.queue()?;
        Ok(NativeWorkflowJobs {
            view: q.workflow_jobs(opts).napi()?,
            queue: Arc::clone(&self.inner),
            namespace: self.namespace.clone(),
        })
    }
}

/// The workflow job queue of one namespace and queue, made by `NativeQueue.workflowJobs`.
#[napi]
pub struct NativeWorkflowJobs {
    view: WorkflowJobs,
    /// The queue's handle: `None` once the queue is closed.
    queue: Arc<RwLock<Option<Queue>>>,
    namespace: String,
}

impl NativeWorkflowJobs {
    /// The runtime view, or `CLOSED` once its queue is closed.
    fn view(&self) -> Result<WorkflowJobs> {
        if self.queue.read().is_none() {
            return Err(closed(&format!(
                "queue on namespace {} (workflow view of queue {})",
                self.namespace,
                self.view.queue_name()
            )));
        }
        Ok(self.view.clone())
    }
}

#[napi]
impl NativeWorkflowJobs {
    /// The dotted payload path the fairness cap groups by, or `null` without one.
    #[napi(getter)]
    pub fn fairness_group_by(&self) -> Option<String> {
        self.view.fairness_group_by().map(str::to_string)
    }

    /// Most running jobs per fairness group, or `null` without a cap.
    #[napi(getter)]
    pub fn fairness_cap(&self) -> Option<u32> {
        self.view.fairness_cap()
    }

    /// The queue the view enqueues to and claims from.
    #[napi(getter)]
    pub fn queue_name(&self) -> String {
        self.view.queue_name().to_string()
    }

    /// The id stamped on the jobs this view claims.
    #[napi(getter)]
    pub fn worker_id(&self) -> String {
        self.view.worker_id()
    }

    /// Offers a host's worker id; a view configured with its own `workerId` keeps it. Returns
    /// the id the view stamps from now on. Synchronous.
    #[napi]
    pub fn adopt_worker_id(&self, worker_id: String) -> Result<String> {
        self.view.adopt_worker_id(&worker_id).napi()
    }

    /// Enqueues stages in one transaction, replacing the row of any (run, stage) pair that
    /// already has one; resolves to the job ids in order (a replaced row keeps its id).
    #[napi]
    pub async fn enqueue_parallel(&self, jobs: Vec<WorkflowJobInput>) -> Result<Vec<String>> {
        let specs = jobs
            .into_iter()
            .enumerate()
            .map(|(i, j)| j.resolve(&format!("jobs[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        let view = self.view()?;
        Ok(view.enqueue_parallel(specs).await.napi()?.into_iter().map(|id| id.to_string()).collect())
    }

    /// Claims one job (fairly, when the view has a cap), or `null` when none is claimable.
    #[napi]
    pub async fn dequeue(&self, options: Option<DequeueOptions>) -> Result<Option<WorkflowDequeued>> {
        let opts = DequeueOptions::resolve(options);
        let view = self.view()?;
        Ok(view.dequeue(opts).await.napi()?.map(Into::into))
    }

    /// Marks a job completed. Fenced: `superseded` (nothing written) unless the fence's claim
    /// is still the running attempt. Unfenced: the running attempt's, or nothing.
    #[napi(ts_return_type = "Promise<'acknowledged' | 'superseded'>")]
    pub async fn complete(&self, job_id: String, fence: Option<WorkflowFence>) -> Result<String> {
        let fence = fence_of(&job_id, fence)?;
        let view = self.view()?;
        Ok(view.complete(&job_id, fence).await.napi()?.as_str().to_string())
    }

    /// Fails the attempt with `error`: retried after a backoff while attempts remain when
    /// `shouldRetry` (default `false`), else failed for good.
    #[napi(ts_return_type = "Promise<'acknowledged' | 'superseded'>")]
    pub async fn fail(
        &self,
        job_id: String,
        error: String,
        should_retry: Option<bool>,
        fence: Option<WorkflowFence>,
    ) -> Result<String> {
        let fence = fence_of(&job_id, fence)?;
        let view = self.view()?;
        Ok(view
            .fail(&job_id, &error, should_retry.unwrap_or(false), fence)
            .await
            .napi()?
            .as_str()
            .to_string())
    }

    /// Suspends the job until `nextPollAt` (Unix ms), when it is claimable again.
    #[napi(ts_return_type = "Promise<'acknowledged' | 'superseded'>")]
    pub async fn suspend(
        &self,
        job_id: String,
        next_poll_at: f64,
        fence: Option<WorkflowFence>,
    ) -> Result<String> {
        let at = args::unix_ms("nextPollAt", next_poll_at)?;
        let fence = fence_of(&job_id, fence)?;
        let view = self.view()?;
        Ok(view.suspend(&job_id, at, fence).await.napi()?.as_str().to_string())
    }

    /// Returns a claimed job to pending until `nextPollAt` (Unix ms) without counting the
    /// claim as an attempt; `reason` is recorded as its last error.
    #[napi(ts_return_type = "Promise<'acknowledged' | 'superseded'>")]
    pub async fn defer(
        &self,
        job_id: String,
        next_poll_at: f64,
        reason: String,
        fence: Option<WorkflowFence>,
    ) -> Result<String> {
        let at = args::unix_ms("nextPollAt", next_poll_at)?;
        let fence = fence_of(&job_id, fence)?;
        let view = self.view()?;
        Ok(view.defer(&job_id, at, &reason, fence).await.napi()?.as_str().to_string())
    }

    /// Refreshes a running job's lease (a no-op when it is not running).
    #[napi]
    pub async fn touch_job(&self, job_id: String) -> Result<()> {
        let view = self.view()?;
        view.touch_job(&job_id).await.napi()
    }

    /// Releases running jobs whose lease is older than `staleThresholdMs` (default 60,000);
    /// resolves to how many.
    #[napi]
    pub async fn release_stale_jobs(&self, stale_threshold_ms: Option<f64>) -> Result<f64> {
        let ms = stale_threshold_ms
            .map(|v| args::int("staleThresholdMs", v, 1, MAX_SAFE))
            .transpose()?
            .unwrap_or(DEFAULT_STALE_THRESHOLD_MS);
        let view = self.view()?;
        Ok(count(view.release_stale_jobs(ms).await.napi()?))
    }

    /// Fails running jobs claimed more than `absoluteTimeoutMs` ago, heartbeats or not;
    /// resolves to how many.
    #[napi]
    pub async fn expire_runaway_jobs(&self, absolute_timeout_ms: f64) -> Result<f64> {
        let ms = args::int("absoluteTimeoutMs", absolute_timeout_ms, 1, MAX_SAFE)?;
        let view = self.view()?;
        Ok(count(view.expire_runaway_jobs(ms).await.napi()?))
    }

    /// Cancels the run's jobs that have not started (pending, waiting, suspended); resolves
    /// to how many.
    #[napi]
    pub async fn cancel_by_run(&self, workflow_run_id: String) -> Result<f64> {
        let view = self.view()?;
        Ok(count(view.cancel_by_run(&workflow_run_id).await.napi()?))
    }

    /// Deletes the job rows of these stages of the run, whatever their status; resolves to
    /// how many. An empty list deletes nothing.
    #[napi]
    pub async fn delete_by_run_and_stages(
        &self,
        workflow_run_id: String,
        stage_ids: Vec<String>,
    ) -> Result<f64> {
        let view = self.view()?;
        Ok(count(view.delete_by_run_and_stages(&workflow_run_id, &stage_ids).await.napi()?))
    }

    /// Every job row of the run, any status, oldest first.
    #[napi]
    pub async fn get_jobs_by_workflow_run(&self, workflow_run_id: String) -> Result<Vec<WorkflowJobRecord>> {
        let view = self.view()?;
        Ok(view
            .get_jobs_by_workflow_run(&workflow_run_id)
            .await
            .napi()?
            .into_iter()
            .map(Into::into)
            .collect())
    }
}
