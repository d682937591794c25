//! flexiq-core: the pure engine model.
//!
//! Jobs and their statuses, the one state machine every store applies ([`transition`]),
//! fences, enqueue options and their validation, retry backoff, rate limits, keyset cursors,
//! listing filters, stats and metric aggregates, retention (seconds in, milliseconds out),
//! contract levels, settings prefixes, the engine [`Error`], and the store traits in
//! [`store`]. No I/O happens here: no tokio, no database client, no binding crate.
#![forbid(unsafe_code)]

pub mod backoff;
pub mod contract;
pub mod cursor;
pub mod dedup;
pub mod dedup_table;
pub mod error;
pub mod event_loop;
pub mod events;
pub mod fairness;
pub mod fence;
pub mod filter;
pub mod flow;
pub mod history;
pub mod id;
pub mod job;
pub mod options;
pub mod rate;
pub mod retention;
pub mod schedule;
pub mod settings;
pub mod standing;
pub mod start;
pub mod stats;
pub mod store;
pub mod transition;

pub use backoff::Backoff;
pub use contract::{check_floor, validate_new_floor, MigrationSummary, CONTRACT_LEVEL};
pub use cursor::{Cursor, Page};
pub use dedup::{DedupMode, DedupOptions};
pub use error::{Error, ErrorKind, Result};
pub use events::{EventKind, QueueEvent};
pub use fairness::FairnessPath;
pub use fence::{AckOutcome, Fence};
pub use filter::{validate_limit, validate_offset, JobFilter, MAX_PAGE};
pub use flow::{ChildClass, EdgePolicy, FlowNode, FlowPlan};
pub use history::{
    DagEdge, DagNode, DeadJob, JobDag, JobError, Lease, LogEntry, Partial, ReplayEntry, WorkerInfo,
};
pub use id::JobId;
pub use job::{ClaimedJob, Job, JobStatus};
pub use options::{EnqueueOptions, NewJob};
pub use rate::{RateLimit, TokenBucket};
pub use retention::{EffectiveRetention, Retention, RetentionPreview, RetentionTable, RetentionWindows};
pub use schedule::{CatchUp, JobScheduler, JobTemplate, Repeat, RepeatRule};
pub use settings::{is_reserved_setting, reserved_setting_prefixes};
pub use start::{starting, DependencyClass, Starting};
pub use stats::{MetricBucket, MetricRow, Stats, TaskAggregate};
pub use store::Store;
pub use transition::{transition, Event, JobState, Next, Refusal};
