//! The JSON shapes of the API: the engine's model seen over HTTP.
//!
//! These mirror the engine's types rather than re-exporting them so the OpenAPI document is
//! derived from exactly what is serialised, and so bytes (payloads, results, partials) travel
//! as base64 with a UTF-8 preview instead of arrays of numbers. Timestamps are Unix ms,
//! durations ms, unless a field's name says seconds.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use flexiq::core::store::QueueConfig;
use flexiq::{DeadJob, Job, JobStatus, Stats};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Opaque bytes: base64, and the text when they are UTF-8.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Bytes {
    /// Length in bytes.
    pub size: usize,
    /// Standard base64.
    pub base64: String,
    /// The bytes as text, when they are valid UTF-8.
    pub text: Option<String>,
}

impl Bytes {
    /// Wraps raw bytes.
    pub fn of(b: &[u8]) -> Self {
        Bytes {
            size: b.len(),
            base64: STANDARD.encode(b),
            text: std::str::from_utf8(b).ok().map(str::to_string),
        }
    }
}

/// Jobs per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StatusCounts {
    /// Pending (including delayed).
    pub pending: u64,
    /// Running.
    pub running: u64,
    /// Completed.
    pub completed: u64,
    /// Failed for good.
    pub failed: u64,
    /// Dead-lettered.
    pub dead: u64,
    /// Cancelled.
    pub cancelled: u64,
    /// Suspended.
    pub suspended: u64,
    /// Waiting for dependencies.
    pub waiting: u64,
    /// All of the above.
    pub total: u64,
}

impl From<Stats> for StatusCounts {
    fn from(s: Stats) -> Self {
        StatusCounts {
            pending: s.pending,
            running: s.running,
            completed: s.completed,
            failed: s.failed,
            dead: s.dead,
            cancelled: s.cancelled,
            suspended: s.suspended,
            waiting: s.waiting,
            total: s.total(),
        }
    }
}

/// Counts for the namespace and per queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StatsView {
    /// The namespace.
    pub namespace: String,
    /// The store's backend (`sqlite`, `postgres`, `redis`).
    pub backend: String,
    /// Every queue together.
    pub total: StatusCounts,
    /// Per queue, every known queue (including ones with no jobs).
    pub by_queue: BTreeMap<String, StatusCounts>,
}

/// A queue's persisted controls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct QueueControls {
    /// Claims skip a paused queue.
    pub paused: bool,
    /// Rate limit as `N/s`, `N/m` or `N/h`; `null` for none.
    pub rate_limit: Option<String>,
    /// Most jobs running at once across all workers; `null` for no cap.
    pub concurrency: Option<u32>,
    /// Stalls a job may recover from before it fails.
    pub max_stalled_count: u32,
}

impl From<QueueConfig> for QueueControls {
    fn from(c: QueueConfig) -> Self {
        QueueControls {
            paused: c.paused,
            rate_limit: c.rate_limit.map(|r| r.to_string()),
            concurrency: c.concurrency,
            max_stalled_count: c.stall_budget(),
        }
    }
}

/// A queue: its counts and controls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct QueueView {
    /// The queue's name.
    pub name: String,
    /// Jobs per status.
    pub counts: StatusCounts,
    /// Its controls.
    pub controls: QueueControls,
    /// The admission cap this dashboard's handle enqueues under (a connection option, not a
    /// stored control); `null` for none.
    pub max_pending: Option<u64>,
}

/// A job in a listing (no payload or result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobSummary {
    /// The job id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: String,
    /// Higher runs first.
    pub priority: i32,
    /// Attempts started so far.
    pub attempt: u32,
    /// Retries allowed after the first attempt.
    pub max_retries: u32,
    /// Enqueued (Unix ms).
    pub created_at: i64,
    /// May run from (Unix ms).
    pub run_at: i64,
    /// Reached a terminal status (Unix ms).
    pub finished_at: Option<i64>,
    /// Last error recorded.
    pub last_error: Option<String>,
    /// Progress (0-100).
    pub progress: Option<f64>,
}

impl From<&Job> for JobSummary {
    fn from(j: &Job) -> Self {
        JobSummary {
            id: j.id.to_string(),
            queue: j.queue.clone(),
            task: j.task.clone(),
            status: j.status.as_str().to_string(),
            priority: j.priority,
            attempt: j.attempt,
            max_retries: j.max_retries,
            created_at: j.created_at,
            run_at: j.run_at,
            finished_at: j.finished_at,
            last_error: j.last_error.clone(),
            progress: j.progress,
        }
    }
}

/// One keyset page of jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobPage {
    /// The jobs, newest first.
    pub items: Vec<JobSummary>,
    /// Pass as `after` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// A job in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobView {
    /// The listing fields.
    #[serde(flatten)]
    pub summary: JobSummary,
    /// Its namespace.
    pub namespace: String,
    /// Payload bytes.
    pub payload: Bytes,
    /// Result bytes of a completed job.
    pub result: Option<Bytes>,
    /// Current or last attempt started (Unix ms).
    pub started_at: Option<i64>,
    /// Last heartbeat (Unix ms).
    pub heartbeat_at: Option<i64>,
    /// Worker holding or that last held it.
    pub worker_id: Option<String>,
    /// Deduplication key.
    pub unique_key: Option<String>,
    /// Metadata (JSON text).
    pub metadata: Option<String>,
    /// Hard timeout of one attempt (ms).
    pub timeout_ms: Option<u64>,
    /// Whether cooperative cancellation was requested.
    pub cancel_requested: bool,
    /// Jobs it waits for.
    pub depends_on: Vec<String>,
    /// Fairness group.
    pub group_key: Option<String>,
    /// Workflow run.
    pub workflow_run_id: Option<String>,
    /// Workflow stage.
    pub workflow_stage_id: Option<String>,
}

impl From<&Job> for JobView {
    fn from(j: &Job) -> Self {
        JobView {
            summary: JobSummary::from(j),
            namespace: j.namespace.clone(),
            payload: Bytes::of(&j.payload),
            result: j.result.as_deref().map(Bytes::of),
            started_at: j.started_at,
            heartbeat_at: j.heartbeat_at,
            worker_id: j.worker_id.clone(),
            unique_key: j.unique_key.clone(),
            metadata: j.metadata.clone(),
            timeout_ms: j.timeout_ms,
            cancel_requested: j.cancel_requested,
            depends_on: j.depends_on.iter().map(ToString::to_string).collect(),
            group_key: j.group_key.clone(),
            workflow_run_id: j.workflow_run_id.clone(),
            workflow_stage_id: j.workflow_stage_id.clone(),
        }
    }
}

/// One failed attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AttemptError {
    /// Which attempt.
    pub attempt: u32,
    /// What went wrong.
    pub error: String,
    /// When (Unix ms).
    pub failed_at: i64,
}

/// One log line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LogLine {
    /// Level (`info`, `warn`, ...).
    pub level: String,
    /// The text.
    pub message: String,
    /// When (Unix ms).
    pub logged_at: i64,
}

/// One partial result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PartialView {
    /// Sequence number from 1.
    pub seq: u64,
    /// The bytes.
    pub data: Bytes,
    /// When (Unix ms).
    pub published_at: i64,
}

/// A job with its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobDetail {
    /// The job.
    pub job: JobView,
    /// Every failed attempt, oldest first.
    pub errors: Vec<AttemptError>,
    /// Its log lines, oldest first.
    pub logs: Vec<LogLine>,
    /// Its first partial results (up to 100), in order.
    pub partials: Vec<PartialView>,
}

/// A node of a dependency graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DagNodeView {
    /// Job id.
    pub id: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: String,
}

/// An edge: `from` is a dependency of `to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DagEdgeView {
    /// The dependency.
    pub from: String,
    /// The dependent.
    pub to: String,
}

/// The dependency graph around a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DagView {
    /// Jobs.
    pub nodes: Vec<DagNodeView>,
    /// Edges.
    pub edges: Vec<DagEdgeView>,
}

/// A new job's id (replay, dead-letter retry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct NewJobId {
    /// The new job.
    pub job_id: String,
}

/// How many rows an operation touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Affected {
    /// Rows.
    pub count: u64,
}

/// A dead letter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DeadLetterView {
    /// The entry's id (not the job's).
    pub id: String,
    /// The job that died.
    pub job_id: String,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task: String,
    /// Its payload.
    pub payload: Bytes,
    /// Last error.
    pub error: Option<String>,
    /// Attempts made.
    pub retry_count: u32,
    /// When it died (Unix ms).
    pub failed_at: i64,
    /// Its metadata.
    pub metadata: Option<String>,
}

impl From<&DeadJob> for DeadLetterView {
    fn from(d: &DeadJob) -> Self {
        DeadLetterView {
            id: d.id.clone(),
            job_id: d.original_job_id.clone(),
            queue: d.queue.clone(),
            task: d.task_name.clone(),
            payload: Bytes::of(&d.payload),
            error: d.error.clone(),
            retry_count: d.retry_count,
            failed_at: d.failed_at,
            metadata: d.metadata.clone(),
        }
    }
}

/// A page of dead letters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DeadLetterPage {
    /// Newest first.
    pub items: Vec<DeadLetterView>,
    /// Pass as `after` for the next page (keyset listing only).
    pub next_cursor: Option<String>,
}

/// The statuses a filter accepts, for documentation and the pages' drop-downs.
pub fn status_names() -> Vec<&'static str> {
    JobStatus::ALL.iter().map(|s| s.as_str()).collect()
}
