//! [`WorkflowJobs`]: a queue seen as the job transport of a workflow engine.
//!
//! A workflow engine runs hosts that execute the stages of workflow runs. Each stage is an
//! ordinary flexiq job on the view's queue (`workflow` by default) whose task is the workflow
//! id, so listings, stats, metrics, dead letters and the CLI see it like any other job. The view
//! adds what the workflow contract asks for, under its names: stages enqueued idempotently on
//! (run, stage) with replacement in place, a dequeue restricted to the (workflow, version)
//! pairs a host serves with a per-group cap on running jobs served round-robin, fenced and
//! unfenced acks, an unfenced lease touch, both lease tiers, and the run-wide cancel, delete and
//! listing.
//!
//! The fenced ack forms are the ones to use: they write only while the attempt that was
//! dequeued is still the running one and answer `Superseded` otherwise. The unfenced forms
//! exist for transports that cannot carry the fence: they ack whatever attempt is running now
//! (retrying once when a concurrent re-claim supersedes the fence they read), change nothing
//! when the job is not running, and always answer `Acknowledged`.

mod ahead;
mod combine;
mod records;

use std::sync::Arc;

use flexiq_core::options::validate_name;
use flexiq_core::store::{
    Ack, AckKind, CancelRunRequest, ClaimFairRequest, DeleteStagesRequest, ExpireRunawayRequest,
    HeartbeatRequest, ReleaseStaleRequest, UpsertStagesRequest,
};
use flexiq_core::{AckOutcome, FairnessPath, Fence, JobId};
use parking_lot::Mutex;

use combine::ClaimShape;
pub(crate) use combine::Combiner;
use records::check_poll_at;
pub use records::{
    DequeueOptions, Dequeued, WorkflowJobRecord, WorkflowJobSpec, WorkflowOptions, DEFAULT_MAX_ATTEMPTS,
    DEFAULT_WORKFLOW_QUEUE,
};

use super::{parse_id, Queue};
use crate::error::{Error, Result};

/// A queue as a workflow engine's job transport. Cheap to clone; clones share the worker id.
#[derive(Clone)]
pub struct WorkflowJobs {
    inner: Arc<Inner>,
}

struct Inner {
    queue: Queue,
    queue_name: String,
    path: Option<FairnessPath>,
    cap: Option<u32>,
    /// Whether the worker id came from the options (then a host cannot replace it).
    configured_worker: bool,
    worker_id: Mutex<String>,
    claim_ahead: bool,
    /// The shape of the last dequeue, which an ack's claim ahead repeats.
    last_shape: Mutex<Option<ClaimShape>>,
}

impl std::fmt::Debug for WorkflowJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkflowJobs")
            .field("queue", &self.inner.queue_name)
            .field("fairness_group_by", &self.fairness_group_by())
            .field("fairness_cap", &self.inner.cap)
            .field("worker_id", &self.worker_id())
            .field("claim_ahead", &self.inner.claim_ahead)
            .finish()
    }
}

impl Queue {
    /// The workflow view of this queue's namespace. `InvalidArgument` naming the field for an
    /// empty or malformed queue name or worker id, a malformed `fairness_group_by` path, or a
    /// `fairness_cap` of 0.
    pub fn workflow_jobs(&self, opts: WorkflowOptions) -> Result<WorkflowJobs> {
        let queue_name = opts.queue.unwrap_or_else(|| DEFAULT_WORKFLOW_QUEUE.to_string());
        validate_name("queue name", &queue_name)?;
        let path = opts.fairness_group_by.as_deref().map(FairnessPath::parse).transpose()?;
        if opts.fairness_cap == Some(0) {
            return Err(Error::invalid(format!(
                "fairness_cap of the workflow view of queue {queue_name} must be at least 1"
            )));
        }
        if let Some(w) = &opts.worker_id {
            validate_name("worker_id", w)?;
        }
        let configured_worker = opts.worker_id.is_some();
        let worker_id = opts.worker_id.unwrap_or_else(generated_worker_id);
        Ok(WorkflowJobs {
            inner: Arc::new(Inner {
                queue: self.clone(),
                queue_name,
                path,
                cap: opts.fairness_cap,
                configured_worker,
                worker_id: Mutex::new(worker_id),
                claim_ahead: opts.claim_ahead,
                last_shape: Mutex::new(None),
            }),
        })
    }
}

/// `host-pid-suffix`, the shape of a worker's own default id.
fn generated_worker_id() -> String {
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{}-{}-{}", crate::worker::hostname(), std::process::id(), &suffix[..8])
}

impl WorkflowJobs {
    /// The dotted path fairness groups are read from, or `None` when the view reads none.
    pub fn fairness_group_by(&self) -> Option<&str> {
        self.inner.path.as_ref().map(FairnessPath::as_str)
    }

    /// The cap on running jobs per fairness group, or `None` when fairness is off.
    pub fn fairness_cap(&self) -> Option<u32> {
        self.inner.cap
    }

    /// The queue stages are enqueued to (and dequeued from by default).
    pub fn queue_name(&self) -> &str {
        &self.inner.queue_name
    }

    /// The queue underneath.
    pub fn queue(&self) -> &Queue {
        &self.inner.queue
    }

    /// The worker id stamped on claims.
    pub fn worker_id(&self) -> String {
        self.inner.worker_id.lock().clone()
    }

    /// Offers a host's worker id: a view configured with its own `worker_id` keeps it,
    /// otherwise `id` becomes the id stamped on later claims. Returns the id the view stamps
    /// either way, so the host can warn on a mismatch. `InvalidArgument` for an empty or
    /// malformed id.
    pub fn adopt_worker_id(&self, id: &str) -> Result<String> {
        validate_name("worker_id", id)?;
        let mut current = self.inner.worker_id.lock();
        if !self.inner.configured_worker {
            *current = id.to_string();
        }
        Ok(current.clone())
    }

    /// Enqueues the stages in one transaction and returns their ids in order. Idempotent on
    /// (run, stage): a pair that already has a job row, in any status, is replaced in place (it
    /// keeps its id; status pending, attempt 0, no worker, lease or last error, the new poll
    /// time), so a running attempt of it is superseded. Every spec is checked before anything
    /// is written: `InvalidArgument` naming the field for empty ids, a payload that is not
    /// JSON, `max_attempts` of 0, a poll time before the epoch, or a (run, stage) pair given
    /// twice. An empty list writes nothing.
    pub async fn enqueue_parallel(&self, jobs: Vec<WorkflowJobSpec>) -> Result<Vec<JobId>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let now = self.inner.queue.now_ms();
        let path = self.inner.path.as_ref();
        let jobs = jobs
            .iter()
            .enumerate()
            .map(|(i, s)| s.to_new_job(i, &self.inner.queue_name, path, now))
            .collect::<Result<Vec<_>>>()?;
        let req = UpsertStagesRequest { jobs, now };
        req.validate()?;
        let n = req.jobs.len();
        let ids = self.inner.queue.store.upsert_stages(req).await?;
        tracing::debug!(count = n, queue = %self.inner.queue_name, "enqueued workflow stages");
        Ok(ids)
    }

    /// Claims the next available job of the served (workflow, version) pairs from `opts.queues`
    /// (the view's queue when empty), honouring pauses, rate limits, concurrency caps and the
    /// view's fairness cap; `None` when nothing is claimable. Dequeues of the same shape made
    /// at the same moment by views of one queue handle share one store claim (see
    /// `combine.rs`); each still gets its own job, stamped with its own worker id. With
    /// `claim_ahead`, the job the last ack claimed ahead for this worker (same shape) is the
    /// answer, without a store call.
    pub async fn dequeue(&self, opts: DequeueOptions) -> Result<Option<Dequeued>> {
        let queues = if opts.queues.is_empty() { vec![self.inner.queue_name.clone()] } else { opts.queues };
        let worker = self.worker_id();
        let req = ClaimFairRequest {
            queues,
            serves: opts.serves,
            workers: vec![worker],
            group_cap: self.inner.cap,
            now: self.inner.queue.now_ms(),
        };
        // Bad input is refused here, alone, before it could share a claim with anyone.
        req.validate()?;
        let ClaimFairRequest { queues, serves, group_cap, mut workers, .. } = req;
        let shape = ClaimShape { queues, serves, group_cap };
        if self.inner.claim_ahead {
            *self.inner.last_shape.lock() = Some(shape.clone());
        }
        let worker = workers.pop().expect("one worker above");
        let claimed = self.inner.queue.combiner.claim(shape, worker).await?;
        Ok(claimed.map(|c| Dequeued { fence: c.fence, job: c.job.into() }))
    }

    /// Completes the job. With a fence: `Superseded` (and nothing written) unless that attempt
    /// is still the running one. Without: see the module docs (`NotFound` for an unknown id).
    pub async fn complete(&self, job_id: &str, fence: Option<Fence>) -> Result<AckOutcome> {
        self.ack(job_id, fence, AckKind::Complete { result: None }).await
    }

    /// Fails the attempt: with `should_retry` it is retried after the job's backoff while
    /// attempts remain (then dead-lettered); without, the job fails for good. Fences as
    /// [`WorkflowJobs::complete`].
    pub async fn fail(
        &self,
        job_id: &str,
        error: &str,
        should_retry: bool,
        fence: Option<Fence>,
    ) -> Result<AckOutcome> {
        self.ack(job_id, fence, AckKind::Fail { error: error.to_string(), retryable: should_retry }).await
    }

    /// Parks the job (status suspended) until `next_poll_at_ms` (Unix ms, not before the epoch),
    /// giving the attempt back; it is claimable again from then. Fences as
    /// [`WorkflowJobs::complete`].
    pub async fn suspend(
        &self,
        job_id: &str,
        next_poll_at_ms: i64,
        fence: Option<Fence>,
    ) -> Result<AckOutcome> {
        let until = check_poll_at("job", job_id, next_poll_at_ms)?;
        self.ack(job_id, fence, AckKind::Suspend { until }).await
    }

    /// Declines the claim: the job goes back to pending until `next_poll_at_ms` without
    /// counting the attempt, so declining never exhausts the attempt budget. Fences as
    /// [`WorkflowJobs::complete`].
    pub async fn defer(
        &self,
        job_id: &str,
        next_poll_at_ms: i64,
        reason: &str,
        fence: Option<Fence>,
    ) -> Result<AckOutcome> {
        let until = check_poll_at("job", job_id, next_poll_at_ms)?;
        self.ack(job_id, fence, AckKind::Defer { until, reason: reason.to_string() }).await
    }

    /// Refreshes the lease of the job's running attempt, whichever it is (deliberately
    /// unfenced); nothing happens when the job is not running. `NotFound` for an unknown id.
    pub async fn touch_job(&self, job_id: &str) -> Result<()> {
        let id = parse_id(job_id)?;
        let store = &self.inner.queue.store;
        let job = store.get(&id).await?.ok_or_else(|| flexiq_core::Error::JobNotFound(id.clone()))?;
        if let Some(fence) = job.fence() {
            let req = HeartbeatRequest { jobs: vec![(id, fence)], now: self.inner.queue.now_ms() };
            store.heartbeat(req).await?;
        }
        Ok(())
    }

    /// Releases running jobs whose lease (last touch, else start) is older than `threshold_ms`
    /// (the fine tier: a crashed host), stamping `LEASE_HEARTBEAT_LOST`; returns how many.
    /// Namespace-wide, like the worker's rescuer: pick a threshold longer than any heartbeat
    /// interval in the namespace. `InvalidArgument` below 1.
    pub async fn release_stale_jobs(&self, threshold_ms: i64) -> Result<u64> {
        let stale_after_ms = positive_ms("threshold_ms", threshold_ms)?;
        let req = ReleaseStaleRequest { stale_after_ms, now: self.inner.queue.now_ms() };
        let released = self.inner.queue.store.release_stale(req).await?;
        for id in &released {
            tracing::warn!(job_id = %id, "released workflow job whose lease went stale");
        }
        Ok(released.len() as u64)
    }

    /// Fails running attempts that started more than `absolute_ms` ago even if still touched
    /// (the coarse tier: a wedged host), stamping `LEASE_ABSOLUTE_CAP`; returns how many.
    /// Namespace-wide, like the worker's runaway reaper. `InvalidArgument` below 1.
    pub async fn expire_runaway_jobs(&self, absolute_ms: i64) -> Result<u64> {
        let absolute_cap_ms = positive_ms("absolute_ms", absolute_ms)?;
        let req = ExpireRunawayRequest { absolute_cap_ms, now: self.inner.queue.now_ms() };
        let expired = self.inner.queue.store.expire_runaway(req).await?;
        for id in &expired {
            tracing::warn!(job_id = %id, "expired workflow job past its absolute cap");
        }
        Ok(expired.len() as u64)
    }

    /// Cancels the run's pending, waiting and suspended jobs (running and finished ones are
    /// left alone); returns how many.
    pub async fn cancel_by_run(&self, run_id: &str) -> Result<u64> {
        let req = CancelRunRequest { run_id: run_id.to_string(), now: self.inner.queue.now_ms() };
        req.validate()?;
        // Jobs held for this process's hosts go back first, so the cancel reaches them.
        self.inner.queue.combiner.give_back_all().await;
        let n = self.inner.queue.store.cancel_run(req).await?;
        tracing::info!(workflow_run_id = run_id, cancelled = n, "cancelled workflow run");
        Ok(n)
    }

    /// Deletes every job row of the run's listed stages, whatever their status (a running
    /// attempt's late ack is then `Superseded`); returns how many rows went. An empty list
    /// deletes nothing.
    pub async fn delete_by_run_and_stages(&self, run_id: &str, stage_ids: &[String]) -> Result<u64> {
        let req = DeleteStagesRequest { run_id: run_id.to_string(), stage_ids: stage_ids.to_vec() };
        req.validate()?;
        if req.stage_ids.is_empty() {
            return Ok(0);
        }
        self.inner.queue.combiner.give_back_all().await;
        Ok(self.inner.queue.store.delete_stages(req).await?)
    }

    /// Every job of the run in any status, oldest first.
    pub async fn get_jobs_by_workflow_run(&self, run_id: &str) -> Result<Vec<WorkflowJobRecord>> {
        validate_name("workflow_run_id", run_id)?;
        let jobs = self.inner.queue.store.jobs_of_run(run_id).await?;
        Ok(jobs.into_iter().map(WorkflowJobRecord::from).collect())
    }

    /// One ack, fenced or (without a fence) of whatever attempt is running now.
    async fn ack(&self, job_id: &str, fence: Option<Fence>, kind: AckKind) -> Result<AckOutcome> {
        let id = parse_id(job_id)?;
        if let Some(fence) = fence {
            return self.ack_once(id, fence, kind).await;
        }
        let store = &self.inner.queue.store;
        // A re-claim between the read and the ack supersedes the fence read: read again once.
        for _ in 0..2 {
            let job = store.get(&id).await?.ok_or_else(|| flexiq_core::Error::JobNotFound(id.clone()))?;
            let Some(current) = job.fence() else {
                return Ok(AckOutcome::Acknowledged);
            };
            if self.ack_once(id.clone(), current, kind.clone()).await? == AckOutcome::Acknowledged {
                return Ok(AckOutcome::Acknowledged);
            }
        }
        Ok(AckOutcome::Acknowledged)
    }

    /// One fenced ack, sharing a store call with the acks made at the same moment (and, with
    /// `claim_ahead`, with the claim of this worker's next job).
    async fn ack_once(&self, job_id: JobId, fence: Fence, kind: AckKind) -> Result<AckOutcome> {
        let refill = if self.inner.claim_ahead {
            self.inner.last_shape.lock().clone().map(|shape| (self.worker_id(), shape))
        } else {
            None
        };
        Ok(self.inner.queue.combiner.ack(Ack { job_id, fence, kind }, refill).await?)
    }
}

/// A threshold in ms that must be at least 1.
fn positive_ms(what: &str, ms: i64) -> Result<u64> {
    u64::try_from(ms)
        .ok()
        .filter(|&m| m >= 1)
        .ok_or_else(|| Error::invalid(format!("{what} {ms} must be at least 1 ms")))
}
