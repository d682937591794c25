//! The plain objects the addon returns, in camelCase, converted from the engine's types.
//!
//! Timestamps are Unix milliseconds and durations milliseconds, as JS numbers. Payloads,
//! results and partials are JSON-decoded here (flexiq's SDKs all write JSON); bytes that are
//! not JSON come back as a string.

use std::collections::{BTreeMap, HashMap};

use flexiq_core::{
    DagEdge, DagNode, DeadJob, EffectiveRetention, Job, JobDag, JobError, MetricRow, MigrationSummary, ReplayEntry,
    RetentionPreview, RetentionTable, RetentionWindows, Stats,
};
use napi_derive::napi;
use serde_json::Value;

/// JSON-decodes stored bytes; text that is not JSON comes back as a string.
pub(crate) fn decode(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

fn ms(v: i64) -> f64 {
    v as f64
}

/// A job as stored.
#[napi(object, js_name = "Job")]
pub struct JsJob {
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
    #[napi(ts_type = "'pending' | 'running' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'suspended' | 'waiting'")]
    pub status: String,
    /// Attempts started so far (the running one included).
    pub attempt: u32,
    /// Retries allowed after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry (ms); it doubles per retry up to `backoffMaxMs`.
    pub backoff_base_ms: f64,
    /// Upper bound of a retry delay (ms).
    pub backoff_max_ms: f64,
    /// When it was enqueued (Unix ms).
    pub created_at: f64,
    /// When it may run (Unix ms).
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

impl From<Job> for JsJob {
    fn from(j: Job) -> Self {
        JsJob {
            id: j.id.to_string(),
            namespace: j.namespace,
            queue: j.queue,
            task: j.task,
            payload: decode(&j.payload),
            priority: j.priority,
            status: j.status.as_str().to_string(),
            attempt: j.attempt,
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
#[napi(object, js_name = "Stats")]
pub struct JsStats {
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

impl From<Stats> for JsStats {
    fn from(s: Stats) -> Self {
        JsStats {
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
pub(crate) fn stats_map(m: BTreeMap<String, Stats>) -> HashMap<String, JsStats> {
    m.into_iter().map(|(k, v)| (k, v.into())).collect()
}

/// One execution of a job.
#[napi(object, js_name = "Metric")]
pub struct JsMetric {
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

impl From<MetricRow> for JsMetric {
    fn from(m: MetricRow) -> Self {
        JsMetric {
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
#[napi(object, js_name = "DeadJob")]
pub struct JsDeadJob {
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

impl From<DeadJob> for JsDeadJob {
    fn from(d: DeadJob) -> Self {
        JsDeadJob {
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
#[napi(object, js_name = "JobPage")]
pub struct JsJobPage {
    /// The jobs.
    pub items: Vec<JsJob>,
    /// Pass back as `after` for the next page; `null` when this was the last.
    pub next_cursor: Option<String>,
}

impl From<flexiq_core::Page<Job>> for JsJobPage {
    fn from(p: flexiq_core::Page<Job>) -> Self {
        JsJobPage { items: p.items.into_iter().map(Into::into).collect(), next_cursor: p.next_cursor }
    }
}

/// A keyset page of dead letters.
#[napi(object, js_name = "DeadJobPage")]
pub struct JsDeadJobPage {
    /// The entries.
    pub items: Vec<JsDeadJob>,
    /// Pass back as `after` for the next page; `null` when this was the last.
    pub next_cursor: Option<String>,
}

impl From<flexiq_core::Page<DeadJob>> for JsDeadJobPage {
    fn from(p: flexiq_core::Page<DeadJob>) -> Self {
        JsDeadJobPage { items: p.items.into_iter().map(Into::into).collect(), next_cursor: p.next_cursor }
    }
}

/// One failed attempt.
#[napi(object, js_name = "JobError")]
pub struct JsJobError {
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

impl From<JobError> for JsJobError {
    fn from(e: JobError) -> Self {
        JsJobError { id: e.id, job_id: e.job_id, attempt: e.attempt, error: e.error, failed_at: ms(e.failed_at) }
    }
}

/// One replay of a job.
#[napi(object, js_name = "ReplayEntry")]
pub struct JsReplayEntry {
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

impl From<ReplayEntry> for JsReplayEntry {
    fn from(r: ReplayEntry) -> Self {
        JsReplayEntry {
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
#[napi(object, js_name = "DagNode")]
pub struct JsDagNode {
    /// The job id.
    pub id: String,
    /// Its task.
    pub task: String,
    /// Its status.
    #[napi(ts_type = "'pending' | 'running' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'suspended' | 'waiting'")]
    pub status: String,
}

/// An edge: `from` is a dependency of `to`.
#[napi(object, js_name = "DagEdge")]
pub struct JsDagEdge {
    /// The dependency.
    pub from: String,
    /// The dependent.
    pub to: String,
}

/// The dependency graph reachable from a job, in both directions.
#[napi(object, js_name = "JobDag")]
pub struct JsJobDag {
    /// Jobs in the graph.
    pub nodes: Vec<JsDagNode>,
    /// Dependency -> dependent edges.
    pub edges: Vec<JsDagEdge>,
}

impl From<JobDag> for JsJobDag {
    fn from(d: JobDag) -> Self {
        JsJobDag {
            nodes: d
                .nodes
                .into_iter()
                .map(|DagNode { id, task, status }| JsDagNode { id, task, status: status.as_str().to_string() })
                .collect(),
            edges: d.edges.into_iter().map(|DagEdge { from, to }| JsDagEdge { from, to }).collect(),
        }
    }
}

/// Retention windows per table, in **milliseconds** (`null`: kept forever).
#[napi(object, js_name = "RetentionWindows")]
pub struct JsRetentionWindows {
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

impl From<&RetentionWindows> for JsRetentionWindows {
    fn from(w: &RetentionWindows) -> Self {
        let get = |t| w.get(t).map(|v| v as f64);
        JsRetentionWindows {
            archived_jobs: get(RetentionTable::ArchivedJobs),
            dead_letter: get(RetentionTable::DeadLetter),
            task_logs: get(RetentionTable::TaskLogs),
            task_metrics: get(RetentionTable::TaskMetrics),
            job_errors: get(RetentionTable::JobErrors),
        }
    }
}

/// Rows per table a retention purge would delete.
#[napi(object, js_name = "RetentionCounts")]
pub struct JsRetentionCounts {
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
#[napi(object, js_name = "EffectiveRetention")]
pub struct JsEffectiveRetention {
    /// Whether any window is set.
    pub enabled: bool,
    /// Whether the windows are the recommended defaults, set by no one.
    pub defaulted: bool,
    /// The namespace swept (purges are namespace-scoped).
    pub namespace: String,
    /// When the sweep published this (Unix ms).
    pub reported_at: f64,
    /// Windows (ms).
    pub windows: JsRetentionWindows,
}

impl From<EffectiveRetention> for JsEffectiveRetention {
    fn from(e: EffectiveRetention) -> Self {
        JsEffectiveRetention {
            enabled: e.enabled,
            defaulted: e.defaulted,
            namespace: e.namespace,
            reported_at: ms(e.reported_at),
            windows: (&e.windows).into(),
        }
    }
}

/// What a retention purge would delete now. Windows in ms, `referenceTime` Unix ms.
#[napi(object, js_name = "RetentionPreview")]
pub struct JsRetentionPreview {
    /// Whether any window is set.
    pub enabled: bool,
    /// Whether the windows are the recommended defaults.
    pub defaulted: bool,
    /// The namespace.
    pub namespace: String,
    /// The `now` of the snapshot (Unix ms).
    pub reference_time: f64,
    /// Windows (ms).
    pub windows: JsRetentionWindows,
    /// Rows that would go, per table.
    pub counts: JsRetentionCounts,
    /// Sum of `counts`.
    pub total: f64,
}

impl From<RetentionPreview> for JsRetentionPreview {
    fn from(p: RetentionPreview) -> Self {
        let count = |t| p.counts.get(&t).copied().unwrap_or(0) as f64;
        JsRetentionPreview {
            enabled: p.enabled,
            defaulted: p.defaulted,
            namespace: p.namespace.clone(),
            reference_time: ms(p.reference_time),
            windows: (&p.windows).into(),
            counts: JsRetentionCounts {
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
#[napi(object, js_name = "MigrationSummary")]
pub struct JsMigrationSummary {
    /// Schema versions applied, in order (empty: already current).
    pub applied: Vec<u32>,
    /// Workflow-schema versions applied, in order.
    pub workflow_applied: Vec<u32>,
    /// Rows the one-time backlog sweep moved into the archive.
    pub archived_jobs: f64,
    /// The backend stores no schema (nothing ever to migrate).
    pub schemaless: bool,
}

impl From<MigrationSummary> for JsMigrationSummary {
    fn from(m: MigrationSummary) -> Self {
        JsMigrationSummary {
            applied: m.applied,
            workflow_applied: m.workflow_applied,
            archived_jobs: m.archived_jobs as f64,
            schemaless: m.schemaless,
        }
    }
}
