//! The store contract: small traits by capability, bundled by [`Store`].
//!
//! One file per trait, and every store implements each trait in a file of the same name
//! (`jobs.rs`, `inspect.rs`, `dead.rs`, `control.rs`, `history.rs`, `settings.rs`,
//! `leadership.rs`, `maintenance.rs`, `schema.rs`, `workflow.rs`, `admin.rs`, `reschedule.rs`,
//! `flows.rs`, `dedup.rs`, `schedulers.rs`, `events.rs`). A method takes nothing, one typed value (a
//! [`JobId`](crate::JobId), a queue, task or key name, a record), or one request struct named
//! for it (`archive_terminal` takes [`ArchiveTerminalRequest`]) whose fields carry their units
//! (`cutoff_ms`, `ttl_ms`) and the injected `now` (Unix ms, so tests control time). The rules
//! on a request live in its `validate()`, here in core: stores call it first and check only
//! what their own encoding limits. Stores decide every status change with
//! [`crate::transition::transition`] and a new job's start with [`crate::start::starting`]; the
//! batched forms (enqueue many, ack many) are primary. Everything is scoped to the store
//! handle's namespace except [`Settings`], which is deployment-wide. The conformance suite in
//! `flexiq-conformance` pins down the semantics.

mod admin;
mod control;
mod dead;
mod dedup;
mod events;
mod flows;
mod history;
mod inspect;
mod jobs;
mod leadership;
mod maintenance;
mod reschedule;
mod schedulers;
mod schema;
mod settings;
mod validate;
mod workflow;

pub use admin::{
    Admin, CleanRequest, DrainRequest, ObliterateRequest, RateLimitTtlRequest, RemoveJobRequest, Removed,
    RetryJobsRequest,
};
pub use control::{
    PurgeCompletedRequest, PurgeQueueRequest, QueueConfig, QueueControl, SetConcurrencyRequest,
    SetMaxStalledRequest, SetRateLimitRequest, DEFAULT_MAX_STALLED_COUNT, MAX_STALLED_LIMIT,
};
pub use dead::{
    DeadLetters, DeadLettersAfterRequest, DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest,
};
pub use dedup::{DedupJobIdRequest, Deduplication};
pub use events::{Events, PublishEventRequest, ReadEventsRequest, TrimEventsRequest};
pub use flows::{ChildDependency, Dependencies, DependenciesRequest, Flows, RemoveChildDependencyRequest};
pub use history::{
    AppendLogRequest, GetMetricsRequest, History, PartialsRequest, PublishPartialRequest, ReplayRequest,
    SetProgressRequest,
};
pub use inspect::{
    Inspect, ListArchivedAfterRequest, ListArchivedRequest, ListJobsAfterRequest, ListJobsRequest,
};
pub use jobs::{
    Ack, AckKind, AckRequest, CancelRequest, ClaimRequest, EnqueueRequest, Enqueued, ExpireRunawayRequest,
    HeartbeatReply, HeartbeatRequest, JobStore, ReleaseStaleRequest, RequestCancelRequest, RequeueRequest,
    WaitForJobRequest, WaitForWorkRequest,
};
pub use leadership::{AcquireLeaseRequest, Leadership, LeaseRequest, ReleaseLeaseRequest};
pub use maintenance::{ArchiveTerminalRequest, Maintenance, PruneWorkersRequest, RetentionRequest};
pub use reschedule::{
    is_lifo, lifo_run_at, placed_run_at, plan_change_delay, plan_change_priority, plan_promote,
    validate_priority, wrong_state, ChangeDelayRequest, ChangePriorityRequest, PromoteJobsRequest,
    PromoteRequest, Reschedule, MAX_PRIORITY,
};
pub use schedulers::{
    schedulers_page, FireSchedulersRequest, FiredSlot, ListSchedulersRequest, Schedulers,
    UpsertSchedulerRequest, SCHEDULERS_LISTING,
};
pub use schema::Schema;
pub use settings::{SetSettingIfRequest, SetSettingRequest, Settings};
pub use workflow::{
    AckClaimFairReply, AckClaimFairRequest, CancelRunRequest, ClaimFairRequest, DeleteStagesRequest,
    UpsertStagesRequest, WorkflowServes, Workflows, MAX_ACKS_BEFORE_CLAIM, MAX_FAIR_CLAIMERS,
};

/// Everything a store does; what the runtime holds as `Arc<dyn Store>`.
#[async_trait::async_trait]
pub trait Store:
    JobStore
    + Inspect
    + DeadLetters
    + QueueControl
    + History
    + Settings
    + Leadership
    + Maintenance
    + Schema
    + Workflows
    + Admin
    + Reschedule
    + Flows
    + Deduplication
    + Schedulers
    + Events
{
    /// The namespace this handle is scoped to.
    fn namespace(&self) -> &str;

    /// The backend's name (`"sqlite"`, `"postgres"`, `"redis"`).
    fn backend(&self) -> &'static str;

    /// Releases connections and background threads; later calls fail with `Closed`.
    async fn close(&self) -> crate::Result<()>;
}
