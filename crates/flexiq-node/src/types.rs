//! The plain objects the addon returns, in camelCase, converted from the engine's types.
//!
//! Timestamps are Unix milliseconds and durations milliseconds, as JS numbers. Payloads,
//! results and partials are JSON-decoded here (flexiq's SDKs all write JSON); bytes that are
//! not JSON come back as a string.

use std::collections::{BTreeMap, HashMap};

use flexiq_core as core;
use flexiq_core::RetentionTable;
use napi_derive::napi;
use serde_json::Value;

/// JSON-decodes stored bytes; text that is not JSON comes back as a string.
pub(crate) fn decode(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

fn ms(v: i64) -> f64 {
    v as f64
}

/// A job as stored.
#[napi(object)]
pub struct Job {
    /// The job's id (a UUIDv7).
    pub id: String,
    /// The namespace it lives in.
    pub namespace: String,
    /// Its queue.
    pub queue: String,
    /// The task (handler) name.
    pub task: String,
    /// The payload, JSON-decoded.
    #[napi(ts_type = "unknown")]
    pub payload: Value,
    /// Higher runs first.
    pub priority: i32,
    /// `pending`, `running`, `completed`, `failed`, `dead`, `cancelled`, `suspended` or `waiting`.
    #[napi(
        ts_type = "'pending' | 'running' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'suspended' | 'waiting'"
    )]
    pub status: String,
    /// Attempts started so far (the running one included).
    pub attempt: u32,
    /// Claims of this job so far: unlike `attempt`, never given back by a requeue, so each
    /// claim's fence is unique (a worker that lost its claim is refused as `superseded`).
    pub claim_seq: f64,
    /// Times its lease lapsed and it was recovered; past its queue's `maxStalledCount` it
    /// fails with an error starting `STALLED`.
    pub stall_count: u32,
    /// Retries allowed after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry (ms); it doubles per retry up to `backoffMaxMs`.
    pub backoff_base_ms: f64,
    /// Upper bound of a retry delay (ms).
    pub backoff_max_ms: f64,
    /// When it was enqueued (Unix ms).
    pub created_at: f64,
    /// When it may run (Unix ms); negative for a LIFO job (minus the time it was placed).
    pub run_at: f64,
    /// When the current or last attempt started (Unix ms).
    pub started_at: Option<f64>,
    /// Last heartbeat of the running attempt (Unix ms).
    pub heartbeat_at: Option<f64>,
    /// When it reached a terminal status (Unix ms).
    pub finished_at: Option<f64>,
    /// The worker holding (or that last held) it.
    pub worker_id: Option<String>,
    /// The JSON-decoded result of a completed job (`null` without one).
    #[napi(ts_type = "unknown")]
    pub result: Value,
    /// The last error recorded.
    pub last_error: Option<String>,
    /// Deduplication key.
    pub unique_key: Option<String>,
    /// Metadata object (`null` without one).
    #[napi(ts_type = "Record<string, unknown> | null")]
    pub metadata: Value,
    /// Progress reported by the handler (0 to 100).
    pub progress: Option<f64>,
    /// Hard timeout of one attempt (ms).
    pub timeout_ms: Option<f64>,
    /// Whether cooperative cancellation was requested.
    pub cancel_requested: bool,
    /// Ids of the jobs this one waits for.
    pub depends_on: Vec<String>,
    /// Fairness group.
    pub group_key: Option<String>,
}

impl From<core::Job> for Job {
    fn from(j: core::Job) -> Self {
        Job {
            id: j.id.to_string(),
            namespace: j.namespace,
            queue: j.queue,
            task: j.task,
            payload: decode(&j.payload),
            priority: j.priority,
            status: j.status.as_str().to_string(),
            attempt: j.attempt,
            claim_seq: j.claim_seq as f64,
            stall_count: j.stall_count,
            max_retries: j.max_retries,
            backoff_base_ms: j.backoff.base_ms as f64,
            backoff_max_ms: j.backoff.max_ms as f64,
            created_at: ms(j.created_at),
            run_at: ms(j.run_at),
            started_at: j.started_at.map(ms),
            heartbeat_at: j.heartbeat_at.map(ms),
            finished_at: j.finished_at.map(ms),
            worker_id: j.worker_id,
            result: j.result.as_deref().map_or(Value::Null, decode),
            last_error: j.last_error,
            unique_key: j.unique_key,
            metadata: j.metadata.as_deref().map_or(Value::Null, |m| decode(m.as_bytes())),
            progress: j.progress,
            timeout_ms: j.timeout_ms.map(|t| t as f64),
            cancel_requested: j.cancel_requested,
            depends_on: j.depends_on.into_iter().map(|d| d.to_string()).collect(),
            group_key: j.group_key,
        }
    }
}

/// Jobs per status.
#[napi(object)]
pub struct Stats {
    /// Pending (delayed included).
    pub pending: f64,
    /// Running.
    pub running: f64,
    /// Completed.
    pub completed: f64,
    /// Failed for good.
    pub failed: f64,
    /// Dead-lettered.
    pub dead: f64,
    /// Cancelled.
    pub cancelled: f64,
    /// Suspended.
    pub suspended: f64,
    /// Waiting for dependencies.
    pub waiting: f64,
}

impl From<core::Stats> for Stats {
    fn from(s: core::Stats) -> Self {
        Stats {
            pending: s.pending as f64,
            running: s.running as f64,
            completed: s.completed as f64,
            failed: s.failed as f64,
            dead: s.dead as f64,
            cancelled: s.cancelled as f64,
            suspended: s.suspended as f64,
            waiting: s.waiting as f64,
        }
    }
}

/// Stats keyed by queue name.
pub(crate) fn stats_map(m: BTreeMap<String, core::Stats>) -> HashMap<String, Stats> {
    m.into_iter().map(|(k, v)| (k, v.into())).collect()
}

/// One execution of a job.
#[napi(object)]
pub struct Metric {
    /// The job.
    pub job_id: String,
    /// Its task.
    pub task: String,
    /// Its queue.
    pub queue: String,
    /// Which attempt.
    pub attempt: u32,
    /// Whether it succeeded.
    pub success: bool,
    /// Wall time of the attempt (ms).
    pub duration_ms: f64,
    /// When it ended (Unix ms).
    pub recorded_at: f64,
}

impl From<core::MetricRow> for Metric {
    fn from(m: core::MetricRow) -> Self {
        Metric {
            job_id: m.job_id,
            task: m.task,
            queue: m.queue,
            attempt: m.attempt,
            success: m.success,
            duration_ms: m.duration_ms as f64,
            recorded_at: ms(m.recorded_at),
        }
    }
}

/// A dead-letter entry.
#[napi(object)]
pub struct DeadJob {
    /// The entry's own id (what `retryDead` / `deleteDead` take).
    pub id: String,
    /// The job that died.
    pub original_job_id: String,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task_name: String,
    /// Its payload, JSON-decoded.
    #[napi(ts_type = "unknown")]
    pub payload: Value,
    /// The last error.
    pub error: Option<String>,
    /// Attempts made.
    pub retry_count: u32,
    /// When it died (Unix ms).
    pub failed_at: f64,
    /// Its metadata object (`null` without one).
    #[napi(ts_type = "Record<string, unknown> | null")]
    pub metadata: Value,
}

impl From<core::DeadJob> for DeadJob {
    fn from(d: core::DeadJob) -> Self {
        DeadJob {
            id: d.id,
            original_job_id: d.original_job_id,
            queue: d.queue,
            task_name: d.task_name,
            payload: decode(&d.payload),
            error: d.error,
            retry_count: d.retry_count,
            failed_at: ms(d.failed_at),
            metadata: d.metadata.as_deref().map_or(Value::Null, |m| decode(m.as_bytes())),
        }
    }
}

/// A keyset page of jobs.
#[napi(object)]
pub struct JobPage {
    /// The jobs.
    pub items: Vec<Job>,
    /// Pass back as `after` for the next page; `null` when this was the last.
    pub next_cursor: Option<String>,
}

impl From<flexiq_core::Page<core::Job>> for JobPage {
    fn from(p: flexiq_core::Page<core::Job>) -> Self {
        JobPage { items: p.items.into_iter().map(Into::into).collect(), next_cursor: p.next_cursor }
    }
}

/// A keyset page of dead letters.
#[napi(object)]
pub struct DeadJobPage {
    /// The entries.
    pub items: Vec<DeadJob>,
    /// Pass back as `after` for the next page; `null` when this was the last.
    pub next_cursor: Option<String>,
}

impl From<flexiq_core::Page<core::DeadJob>> for DeadJobPage {
    fn from(p: flexiq_core::Page<core::DeadJob>) -> Self {
        DeadJobPage { items: p.items.into_iter().map(Into::into).collect(), next_cursor: p.next_cursor }
    }
}

/// One failed attempt.
#[napi(object)]
pub struct JobError {
    /// The row id.
    pub id: String,
    /// The job.
    pub job_id: String,
    /// Which attempt failed.
    pub attempt: u32,
    /// What went wrong (a JS handler's message and stack).
    pub error: String,
    /// When (Unix ms).
    pub failed_at: f64,
}

impl From<core::JobError> for JobError {
    fn from(e: core::JobError) -> Self {
        JobError {
            id: e.id,
            job_id: e.job_id,
            attempt: e.attempt,
            error: e.error,
            failed_at: ms(e.failed_at),
        }
    }
}

/// One log line of a job.
#[napi(object)]
pub struct LogEntry {
    /// The job.
    pub job_id: String,
    /// Level: `debug`, `info`, `warn` or `error`.
    pub level: String,
    /// The text.
    pub message: String,
    /// When it was written (Unix ms).
    pub logged_at: f64,
}

impl From<core::LogEntry> for LogEntry {
    fn from(e: core::LogEntry) -> Self {
        LogEntry { job_id: e.job_id, level: e.level, message: e.message, logged_at: ms(e.logged_at) }
    }
}

/// One replay of a job.
#[napi(object)]
pub struct ReplayEntry {
    /// The row id.
    pub id: String,
    /// The job replayed.
    pub original_job_id: String,
    /// The new job.
    pub replay_job_id: String,
    /// When (Unix ms).
    pub replayed_at: f64,
    /// The original's last error at replay time.
    pub original_error: Option<String>,
    /// The replay's own error, once it has failed.
    pub replay_error: Option<String>,
}

impl From<core::ReplayEntry> for ReplayEntry {
    fn from(r: core::ReplayEntry) -> Self {
        ReplayEntry {
            id: r.id,
            original_job_id: r.original_job_id,
            replay_job_id: r.replay_job_id,
            replayed_at: ms(r.replayed_at),
            original_error: r.original_error,
            replay_error: r.replay_error,
        }
    }
}

/// A node of a dependency graph.
#[napi(object)]
pub struct DagNode {
    /// The job id.
    pub id: String,
    /// Its task.
    pub task: String,
    /// Its status.
    #[napi(
        ts_type = "'pending' | 'running' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'suspended' | 'waiting'"
    )]
    pub status: String,
}

/// An edge: `from` is a dependency of `to`.
#[napi(object)]
pub struct DagEdge {
    /// The dependency.
    pub from: String,
    /// The dependent.
    pub to: String,
}

/// The dependency graph reachable from a job, in both directions.
#[napi(object)]
pub struct JobDag {
    /// Jobs in the graph.
    pub nodes: Vec<DagNode>,
    /// Dependency -> dependent edges.
    pub edges: Vec<DagEdge>,
}

impl From<core::JobDag> for JobDag {
    fn from(d: core::JobDag) -> Self {
        JobDag {
            nodes: d
                .nodes
                .into_iter()
                .map(|core::DagNode { id, task, status }| DagNode {
                    id,
                    task,
                    status: status.as_str().to_string(),
                })
                .collect(),
            edges: d.edges.into_iter().map(|core::DagEdge { from, to }| DagEdge { from, to }).collect(),
        }
    }
}

/// Retention windows per table, in **milliseconds** (`null`: kept forever).
#[napi(object)]
pub struct RetentionWindows {
    /// Archived jobs (ms).
    pub archived_jobs: Option<f64>,
    /// Dead letters (ms).
    pub dead_letter: Option<f64>,
    /// Task logs (ms).
    pub task_logs: Option<f64>,
    /// Task metrics (ms).
    pub task_metrics: Option<f64>,
    /// Job errors (ms).
    pub job_errors: Option<f64>,
}

impl From<&core::RetentionWindows> for RetentionWindows {
    fn from(w: &core::RetentionWindows) -> Self {
        let get = |t| w.get(t).map(|v| v as f64);
        RetentionWindows {
            archived_jobs: get(RetentionTable::ArchivedJobs),
            dead_letter: get(RetentionTable::DeadLetter),
            task_logs: get(RetentionTable::TaskLogs),
            task_metrics: get(RetentionTable::TaskMetrics),
            job_errors: get(RetentionTable::JobErrors),
        }
    }
}

/// Rows per table a retention purge would delete.
#[napi(object)]
pub struct RetentionCounts {
    /// Archived jobs.
    pub archived_jobs: f64,
    /// Dead letters.
    pub dead_letter: f64,
    /// Task logs.
    pub task_logs: f64,
    /// Task metrics.
    pub task_metrics: f64,
    /// Job errors.
    pub job_errors: f64,
}

/// What the elected cleaner applied on its last sweep. Windows in ms, `reportedAt` Unix ms.
#[napi(object)]
pub struct EffectiveRetention {
    /// Whether any window is set.
    pub enabled: bool,
    /// Whether the windows are the recommended defaults, set by no one.
    pub defaulted: bool,
    /// The namespace swept (purges are namespace-scoped).
    pub namespace: String,
    /// When the sweep published this (Unix ms).
    pub reported_at: f64,
    /// Windows (ms).
    pub windows: RetentionWindows,
}

impl From<core::EffectiveRetention> for EffectiveRetention {
    fn from(e: core::EffectiveRetention) -> Self {
        EffectiveRetention {
            enabled: e.enabled,
            defaulted: e.defaulted,
            namespace: e.namespace,
            reported_at: ms(e.reported_at),
            windows: (&e.windows).into(),
        }
    }
}

/// What a retention purge would delete now. Windows in ms, `referenceTime` Unix ms.
#[napi(object)]
pub struct RetentionPreview {
    /// Whether any window is set.
    pub enabled: bool,
    /// Whether the windows are the recommended defaults.
    pub defaulted: bool,
    /// The namespace.
    pub namespace: String,
    /// The `now` of the snapshot (Unix ms).
    pub reference_time: f64,
    /// Windows (ms).
    pub windows: RetentionWindows,
    /// Rows that would go, per table.
    pub counts: RetentionCounts,
    /// Sum of `counts`.
    pub total: f64,
}

impl From<core::RetentionPreview> for RetentionPreview {
    fn from(p: core::RetentionPreview) -> Self {
        let count = |t| p.counts.get(&t).copied().unwrap_or(0) as f64;
        RetentionPreview {
            enabled: p.enabled,
            defaulted: p.defaulted,
            namespace: p.namespace.clone(),
            reference_time: ms(p.reference_time),
            windows: (&p.windows).into(),
            counts: RetentionCounts {
                archived_jobs: count(RetentionTable::ArchivedJobs),
                dead_letter: count(RetentionTable::DeadLetter),
                task_logs: count(RetentionTable::TaskLogs),
                task_metrics: count(RetentionTable::TaskMetrics),
                job_errors: count(RetentionTable::JobErrors),
            },
            total: p.total as f64,
        }
    }
}

/// What `migrate()` did.
#[napi(object)]
pub struct MigrationSummary {
    /// Schema versions applied, in order (empty: already current).
    pub applied: Vec<u32>,
    /// Workflow-schema versions applied, in order.
    pub workflow_applied: Vec<u32>,
    /// Rows the one-time backlog sweep moved into the archive.
    pub archived_jobs: f64,
    /// The backend stores no schema (nothing ever to migrate).
    pub schemaless: bool,
}

impl From<core::MigrationSummary> for MigrationSummary {
    fn from(m: core::MigrationSummary) -> Self {
        MigrationSummary {
            applied: m.applied,
            workflow_applied: m.workflow_applied,
            archived_jobs: m.archived_jobs as f64,
            schemaless: m.schemaless,
        }
    }
}

/// The stamp of one claim of a workflow job: a fenced ack is applied only while the job is
/// still this claim's running attempt. Times in Unix ms (the JS layer makes `startedAt` a
/// `Date`).
#[napi(object)]
pub struct WorkflowFence {
    /// The job the claim is of.
    pub job_id: String,
    /// The attempt the claim started (1-based).
    pub attempt: f64,
    /// When the claim started the attempt (Unix ms).
    pub started_at: f64,
    /// The job's claim sequence number at this claim (never given back).
    pub claim_seq: f64,
}

impl WorkflowFence {
    /// The fence of a claim of `job_id`.
    pub(crate) fn of(job_id: &str, f: core::Fence) -> Self {
        WorkflowFence {
            job_id: job_id.to_string(),
            attempt: f64::from(f.attempt),
            started_at: ms(f.started_at),
            claim_seq: f.claim_seq as f64,
        }
    }
}

/// A workflow job row, as `dequeue` and `getJobsByWorkflowRun` return it. Times in Unix ms
/// (the JS layer makes them `Date`s).
#[napi(object)]
pub struct WorkflowJobRecord {
    /// The job's id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// The workflow run.
    pub workflow_run_id: String,
    /// The workflow (the job's task).
    pub workflow_id: String,
    /// The stage of the run.
    pub stage_id: String,
    /// The definition version the run is pinned to.
    pub definition_version: Option<String>,
    /// The fairness group read from the payload when enqueued.
    pub group_key: Option<String>,
    /// `pending`, `running`, `completed`, `failed`, `dead`, `cancelled`, `suspended` or `waiting`.
    #[napi(
        ts_type = "'pending' | 'running' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'suspended' | 'waiting'"
    )]
    pub status: String,
    /// Attempts counted so far (a deferred claim is given back).
    pub attempt: u32,
    /// Attempts allowed, the first included.
    pub max_attempts: u32,
    /// The worker holding (or that last held) it.
    pub worker_id: Option<String>,
    /// The lease: the last heartbeat of the running attempt, else its start (Unix ms).
    pub locked_at: Option<f64>,
    /// When the current or last attempt started (Unix ms).
    pub started_at: Option<f64>,
    /// When it is next claimable (Unix ms).
    pub next_poll_at: f64,
    /// The last error recorded.
    pub last_error: Option<String>,
    /// The payload, JSON-decoded.
    #[napi(ts_type = "unknown")]
    pub payload: Value,
    /// When it was enqueued (Unix ms).
    pub created_at: f64,
    /// Its latest change: the newest of created, started, heartbeat and finished (Unix ms).
    pub updated_at: f64,
}

impl From<flexiq_runtime::WorkflowJobRecord> for WorkflowJobRecord {
    fn from(r: flexiq_runtime::WorkflowJobRecord) -> Self {
        WorkflowJobRecord {
            id: r.id.to_string(),
            queue: r.queue,
            workflow_run_id: r.workflow_run_id,
            workflow_id: r.workflow_id,
            stage_id: r.stage_id,
            definition_version: r.definition_version,
            group_key: r.group_key,
            status: r.status.as_str().to_string(),
            attempt: r.attempt,
            max_attempts: r.max_attempts,
            worker_id: r.worker_id,
            locked_at: r.locked_at.map(ms),
            started_at: r.started_at.map(ms),
            next_poll_at: ms(r.next_poll_at),
            last_error: r.last_error,
            payload: decode(&r.payload),
            created_at: ms(r.created_at),
            updated_at: ms(r.updated_at),
        }
    }
}

/// A claimed workflow job and the fence its acks carry.
#[napi(object)]
pub struct WorkflowDequeued {
    /// The job as claimed (status `running`).
    pub job: WorkflowJobRecord,
    /// Its claim's fence.
    pub fence: WorkflowFence,
}

impl From<flexiq_runtime::Dequeued> for WorkflowDequeued {
    fn from(d: flexiq_runtime::Dequeued) -> Self {
        let fence = WorkflowFence::of(d.job.id.as_ref(), d.fence);
        WorkflowDequeued { job: d.job.into(), fence }
    }
}
