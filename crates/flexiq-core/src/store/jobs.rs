//! Enqueue, claim, ack, leases and waits: the hot path.

use crate::error::Result;
use crate::fence::{AckOutcome, Fence};
use crate::id::JobId;
use crate::job::{ClaimedJob, Job};
use crate::options::NewJob;

/// A batch of validated jobs to insert in one transaction.
#[derive(Debug, Clone)]
pub struct EnqueueRequest {
    /// The jobs, in order. A job may depend on an earlier job of the same batch.
    pub jobs: Vec<NewJob>,
    /// Admission cap: reject the whole batch with `QueueFull` if any queue's pending count would
    /// exceed it.
    pub max_pending: Option<u64>,
    /// Unix ms.
    pub now: i64,
}

/// The outcome of one enqueued job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enqueued {
    /// The job's id (an existing job's id when a unique key deduplicated it).
    pub id: JobId,
    /// False when a live job with the same unique key already existed.
    pub created: bool,
}

/// A claim of up to `limit` jobs.
#[derive(Debug, Clone)]
pub struct ClaimRequest {
    /// Queues to take from; empty means every queue.
    pub queues: Vec<String>,
    /// Most jobs to return (at least 1).
    pub limit: u32,
    /// The claiming worker.
    pub worker_id: String,
    /// Unix ms.
    pub now: i64,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AckKind {
    /// Success, with optional result bytes.
    Complete {
        /// Result bytes.
        result: Option<Vec<u8>>,
    },
    /// Failure.
    Fail {
        /// What went wrong.
        error: String,
        /// False fails the job for good without spending the retry budget.
        retryable: bool,
    },
    /// Park until `until` (Unix ms); the attempt is given back.
    Suspend {
        /// When it may be claimed again.
        until: i64,
    },
    /// Decline until `until` (Unix ms); the attempt is given back.
    Defer {
        /// When it may be claimed again.
        until: i64,
        /// Why.
        reason: String,
    },
    /// The handler stopped because cancellation was requested: the job ends `cancelled`
    /// (no retry), and jobs depending on it are cancelled too.
    Cancel {
        /// What the handler said when it stopped.
        reason: String,
    },
}

/// One fenced ack.
#[derive(Debug, Clone, PartialEq)]
pub struct Ack {
    /// The job.
    pub job_id: JobId,
    /// The fence from its claim.
    pub fence: Fence,
    /// How the attempt ended.
    pub kind: AckKind,
}

/// What a heartbeat found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatReply {
    /// Whether the lease was renewed.
    pub outcome: AckOutcome,
    /// Whether cooperative cancellation has been requested.
    pub cancel_requested: bool,
}

/// Fenced acks applied in one go.
#[derive(Debug, Clone, PartialEq)]
pub struct AckRequest {
    /// The acks, one outcome each in order.
    pub acks: Vec<Ack>,
    /// Unix ms.
    pub now: i64,
}

/// Lease renewals of running attempts.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatRequest {
    /// Each job with the fence of its claim.
    pub jobs: Vec<(JobId, Fence)>,
    /// Unix ms.
    pub now: i64,
}

/// Release running jobs whose heartbeat went quiet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReleaseStaleRequest {
    /// A job is stale when its last heartbeat (or start) is older than this (at least 1).
    pub stale_after_ms: u64,
    /// Unix ms.
    pub now: i64,
}

/// Fail attempts that ran past the absolute cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpireRunawayRequest {
    /// The cap on one attempt's running time (at least 1).
    pub absolute_cap_ms: u64,
    /// Unix ms.
    pub now: i64,
}

/// Force a running job back to pending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequeueRequest {
    /// The job.
    pub id: JobId,
    /// Unix ms.
    pub now: i64,
}

/// Cancel a job that is not running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelRequest {
    /// The job.
    pub id: JobId,
    /// Unix ms.
    pub now: i64,
}

/// Ask a job to stop cooperatively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestCancelRequest {
    /// The job.
    pub id: JobId,
    /// Unix ms.
    pub now: i64,
}

/// Wait for a sign of claimable work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitForWorkRequest {
    /// Queues to watch; empty means every queue.
    pub queues: Vec<String>,
    /// The longest wait.
    pub timeout_ms: u64,
}

/// Wait for a change to one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitForJobRequest {
    /// The job.
    pub id: JobId,
    /// The longest wait.
    pub timeout_ms: u64,
}

/// Enqueue, claim, ack, leases and waits.
#[async_trait::async_trait]
pub trait JobStore: Send + Sync {
    /// Inserts the jobs in one transaction, returning one outcome per job in order. Unique keys
    /// dedupe against live jobs; unknown dependencies are `InvalidArgument`; a revoked task is
    /// `TaskRevoked`; `max_pending` is checked atomically. A (workflow run, stage) pair holds at
    /// most one job row: a job naming a pair that already has one is `Conflict` (replacing it
    /// is [`Workflows::upsert_stages`](crate::store::Workflows::upsert_stages)).
    async fn enqueue(&self, req: EnqueueRequest) -> Result<Vec<Enqueued>>;

    /// Claims up to `limit` runnable jobs: pending or suspended, `run_at <= now`, queue not
    /// paused, within the queue's rate limit and concurrency cap; by priority (highest first),
    /// then `run_at`, then id.
    async fn claim(&self, req: ClaimRequest) -> Result<Vec<ClaimedJob>>;

    /// Applies fenced acks, one outcome per ack in order.
    async fn ack(&self, req: AckRequest) -> Result<Vec<AckOutcome>>;

    /// Renews the leases of running attempts (one reply per job in order) and records that
    /// their handlers started: a lapsed lease of an attempt recorded this way is a stall
    /// ([`Event::HeartbeatLost`](crate::transition::Event::HeartbeatLost) with `started`).
    async fn heartbeat(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>>;

    /// Renews the leases of claimed attempts whose handlers have not started (a worker's
    /// prefetch buffer), one reply per job in order, without recording a start: if the worker
    /// dies before it reports the start through [`JobStore::heartbeat`], the release gives the
    /// attempt back and counts no stall.
    async fn renew_buffered(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>>;

    /// Releases running jobs whose last heartbeat (or start) is older than `stale_after_ms`
    /// (`LEASE_HEARTBEAT_LOST`); returns their ids. An attempt whose start no
    /// [`JobStore::heartbeat`] recorded is released as never started (see
    /// [`Event::HeartbeatLost`](crate::transition::Event::HeartbeatLost)).
    async fn release_stale(&self, req: ReleaseStaleRequest) -> Result<Vec<JobId>>;

    /// Fails running attempts started more than `absolute_cap_ms` ago (`LEASE_ABSOLUTE_CAP`).
    async fn expire_runaway(&self, req: ExpireRunawayRequest) -> Result<Vec<JobId>>;

    /// Forces a running job back to pending, keeping its retry budget and clearing any cancel
    /// request. False when the job is unknown or not running.
    async fn requeue(&self, req: RequeueRequest) -> Result<bool>;

    /// Cancels a pending, waiting or suspended job (and its dependents). False when it is
    /// running or already terminal; `NotFound` when unknown.
    async fn cancel(&self, req: CancelRequest) -> Result<bool>;

    /// Flags a job for cooperative cancellation. False when it is already terminal; `NotFound`
    /// when unknown. A job not yet running is cancelled outright.
    async fn request_cancel(&self, req: RequestCancelRequest) -> Result<bool>;

    /// Whether cancellation was requested; `NotFound` when unknown.
    async fn is_cancel_requested(&self, id: &JobId) -> Result<bool>;

    /// The job, or `None`.
    async fn get(&self, id: &JobId) -> Result<Option<Job>>;

    /// The result bytes of a completed job; `None` while not completed (or completed without a
    /// result); `NotFound` when unknown.
    async fn get_result(&self, id: &JobId) -> Result<Option<Vec<u8>>>;

    /// Waits up to `timeout_ms` for a sign that work may be claimable in `queues` (an enqueue,
    /// a release, a delayed job coming due). May return early; callers claim and wait again.
    async fn wait_for_work(&self, req: WaitForWorkRequest) -> Result<()>;

    /// Waits up to `timeout_ms` for a change to job `id` (status, partials). May return early.
    async fn wait_for_job(&self, req: WaitForJobRequest) -> Result<()>;
}
