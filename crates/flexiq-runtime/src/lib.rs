//! flexiq-runtime: the engine's moving parts on top of the store traits.
//!
//! - [`connect`] opens a store by URL (`sqlite:///path.db`, `postgres://...`, `redis://...`)
//!   and returns a [`Queue`], the handle for producing and inspecting work.
//! - [`Worker`] runs registered async handlers for claimed jobs, with batched claims, acks
//!   and heartbeats, timeouts, cooperative cancellation and graceful shutdown. Every ack is
//!   fenced, so a worker that lost its lease can never overwrite a newer attempt.
//! - [`services`] holds the maintenance services (retention, archival, stale-lease rescue,
//!   runaway expiry, registry pruning) and the [`services::Elector`] that makes one worker
//!   per namespace the cleaner.
//! - [`WorkflowJobs`] (from [`Queue::workflow_jobs`]) is a queue seen as the job transport of a
//!   workflow engine: stages enqueued idempotently per (run, stage), a dequeue that serves chosen
//!   workflow versions with a per-group fairness cap, fenced acks and both lease tiers.
//! - [`observe`] renders a queue's and a worker's metrics for Prometheus (and, with the `otel`
//!   feature, exports spans over OTLP); [`webhooks`] delivers job events to signed HTTP hooks.
//!
//! Time comes from an injected [`Clock`] so tests drive leases and windows without sleeping.
//! Units: durations in are seconds where the spec says seconds (or `Duration`s); timestamps
//! out are Unix ms and windows out are ms.

mod clock;
mod connect;
mod error;
pub mod observe;
mod queue;
pub mod services;
mod url;
pub mod webhooks;
mod worker;

pub use clock::{Clock, ManualClock, SystemClock};
pub use connect::{connect, ConnectOptions, Durability};
pub use error::{Error, Result};
pub use queue::{
    DequeueOptions, Dequeued, EnqueueItem, EventStream, EventsFrom, EventsOptions, PartialStream, Queue,
    WorkflowJobRecord, WorkflowJobSpec, WorkflowJobs, WorkflowOptions, DEFAULT_MAX_ATTEMPTS,
    DEFAULT_WORKFLOW_QUEUE,
};
pub use url::StoreUrl;
pub use worker::{
    handler, CancelReason, Handler, HandlerError, HandlerFuture, HandlerResult, JobContext, TaskOptions,
    Worker, WorkerConfig, WorkerCounters, WorkerHandle, MAX_CONCURRENCY, PREFETCH_PER_SLOT,
};

/// The engine's model and store traits, re-exported.
pub use flexiq_core as core;
pub use flexiq_core::dedup::{DedupMode, DedupOptions};
pub use flexiq_core::events::{EventKind, QueueEvent};
pub use flexiq_core::flow::{EdgePolicy, FlowNode};
pub use flexiq_core::schedule::{CatchUp, JobScheduler, JobTemplate, Repeat, RepeatRule};
pub use flexiq_core::store::{ChildDependency, Dependencies, Enqueued, WorkflowServes};
pub use flexiq_core::{
    AckOutcome, Backoff, ClaimedJob, DeadJob, EffectiveRetention, EnqueueOptions, FairnessPath, Fence, Job,
    JobDag, JobError, JobFilter, JobId, JobStatus, LogEntry, MetricBucket, MetricRow, Page, Partial,
    ReplayEntry, Retention, RetentionPreview, RetentionTable, Stats, Store, TaskAggregate, WorkerInfo,
};
pub use tokio_util::sync::CancellationToken;
