//! The option objects JavaScript passes in, and their conversion to the runtime's types.
//!
//! Durations a caller configures are in **seconds** (fractions allowed) unless the name ends
//! in `Ms`; timestamps are Unix milliseconds. Every number is checked by [`crate::args`], so
//! NaN, fractions where a count is expected and negative values are `INVALID_ARGUMENT` before
//! anything is written.

use flexiq_core::dedup::DedupMode;
use flexiq_core::flow::{EdgePolicy, FlowNode};
use flexiq_core::{Backoff, EnqueueOptions, JobFilter, JobStatus, Retention};
use flexiq_runtime::{ConnectOptions, Durability};
use napi_derive::napi;

use crate::args;
use crate::error::{invalid, IntoNapi, Result};

/// How to open a queue: exactly one of `dbPath` (SQLite) or `url`.
#[napi(object)]
pub struct QueueOptions {
    /// An SQLite database file (created if missing).
    pub db_path: Option<String>,
    /// `sqlite:///abs/path.db`, `postgres://user@host/db?schema=name` or
    /// `redis://host:6379?prefix=name`.
    pub url: Option<String>,
    /// The namespace every call is scoped to (default `"default"`).
    pub namespace: Option<String>,
    /// Apply pending schema migrations when opening (default `true`); with `false`, call
    /// `migrate()` before using fresh storage.
    pub auto_migrate: Option<bool>,
    /// Admission cap: an enqueue that would take a queue past this many pending jobs (the
    /// number `countPendingByQueue` returns) is rejected with `QUEUE_FULL`.
    pub max_pending: Option<f64>,
    /// Retention windows (seconds) this process would apply: used by `dryRunRetention()` and
    /// by a worker's retention sweep. Default: the recommended windows.
    pub retention: Option<RetentionOptions>,
    /// SQLite commit durability: `"normal"` (default, survives a process crash) or `"full"`
    /// (every commit on disk before it returns).
    #[napi(ts_type = "'normal' | 'full'")]
    pub durability: Option<String>,
    /// SQLite read connections.
    pub read_connections: Option<f64>,
    /// SQLite busy timeout (ms).
    pub busy_timeout_ms: Option<f64>,
    /// PostgreSQL pool size.
    pub pool_size: Option<f64>,
}

impl QueueOptions {
    /// The store URL and connect options, checked.
    pub(crate) fn resolve(self) -> Result<(String, ConnectOptions)> {
        let url = match (self.db_path, self.url) {
            (Some(_), Some(_)) => return Err(invalid("give dbPath or url, not both")),
            (None, None) => {
                return Err(invalid("give dbPath (SQLite) or url (postgres://, redis://, sqlite://)"))
            }
            (Some(p), None) => {
                if p.contains("://") {
                    return Err(invalid(format!("dbPath {p:?} is a url: pass it as url")));
                }
                if p.trim().is_empty() {
                    return Err(invalid("dbPath must not be empty"));
                }
                p
            }
            (None, Some(u)) => u,
        };
        let mut o = ConnectOptions::default();
        if let Some(ns) = self.namespace {
            o.namespace = ns;
        }
        if let Some(m) = self.auto_migrate {
            o.auto_migrate = m;
        }
        if let Some(m) = self.max_pending {
            o.max_pending = Some(args::int("maxPending", m, 1, i64::MAX)? as u64);
        }
        if let Some(r) = self.retention {
            o.retention = Some(r.resolve()?);
        }
        o.durability = match self.durability.as_deref() {
            None | Some("normal") => Durability::Normal,
            Some("full") => Durability::Full,
            Some(other) => {
                return Err(invalid(format!("durability {other:?} must be \"normal\" or \"full\"")))
            }
        };
        if let Some(n) = self.read_connections {
            o.read_connections = Some(args::int("readConnections", n, 1, 1_024)? as usize);
        }
        if let Some(ms) = self.busy_timeout_ms {
            o.busy_timeout_ms = Some(args::millis("busyTimeoutMs", ms)?);
        }
        if let Some(n) = self.pool_size {
            o.pool_size = Some(args::int("poolSize", n, 1, 1_024)? as usize);
        }
        o.validate().napi()?;
        Ok((url, o))
    }
}

/// Retention windows in **seconds** per table; an unset window keeps that table forever.
#[napi(object)]
pub struct RetentionOptions {
    /// Archived jobs (s).
    pub archived_jobs: Option<f64>,
    /// Dead letters (s).
    pub dead_letter: Option<f64>,
    /// Task logs (s).
    pub task_logs: Option<f64>,
    /// Task metrics (s).
    pub task_metrics: Option<f64>,
    /// Job errors (s).
    pub job_errors: Option<f64>,
}

impl RetentionOptions {
    /// The engine's retention, checked (whole seconds, 1 or more).
    pub(crate) fn resolve(self) -> Result<Retention> {
        let w = |what: &str, v: Option<f64>| -> Result<Option<u64>> {
            v.map(|s| args::int(what, s, 1, i64::MAX / 1_000).map(|s| s as u64)).transpose()
        };
        let r = Retention {
            archived_jobs: w("retention.archivedJobs", self.archived_jobs)?,
            dead_letter: w("retention.deadLetter", self.dead_letter)?,
            task_logs: w("retention.taskLogs", self.task_logs)?,
            task_metrics: w("retention.taskMetrics", self.task_metrics)?,
            job_errors: w("retention.jobErrors", self.job_errors)?,
        };
        r.validate().napi()?;
        Ok(r)
    }
}

/// Retry backoff, in **seconds**: the first retry waits `base`, each next one twice as long,
/// capped at `max` (defaults 1 s and 3,600 s).
#[napi(object)]
pub struct BackoffOptions {
    /// Delay before the first retry (s).
    pub base: Option<f64>,
    /// Upper bound of any retry delay (s).
    pub max: Option<f64>,
}

/// Options of one enqueued job.
#[napi(object)]
pub struct JobOptions {
    /// Queue name (default `"default"`).
    pub queue: Option<String>,
    /// Higher runs first (a whole number, default 0).
    pub priority: Option<f64>,
    /// Run no earlier than this many **seconds** from now. Exclusive with `runAt`.
    pub delay: Option<f64>,
    /// Run no earlier than this time (Unix ms). Exclusive with `delay`.
    pub run_at: Option<f64>,
    /// Retries after the first attempt (default 3).
    pub max_retries: Option<f64>,
    /// Retry backoff (seconds).
    pub backoff: Option<BackoffOptions>,
    /// Hard timeout of one attempt, in **seconds**.
    pub timeout: Option<f64>,
    /// While a live job holds this key, enqueue returns that job's id instead.
    pub unique_key: Option<String>,
    /// Metadata object, stored as JSON (the JS layer serialises it).
    #[napi(ts_type = "string")]
    pub metadata: Option<String>,
    /// Ids of jobs (same namespace) that must complete first.
    pub depends_on: Option<Vec<String>>,
    /// Fairness group.
    pub group_key: Option<String>,
    /// Claim it ahead of the FIFO jobs of its priority, the newest LIFO job first (default
    /// `false`). Exclusive with `delay` and `runAt`.
    pub lifo: Option<bool>,
    /// Deduplication by key and mode. Exclusive with `uniqueKey`.
    pub dedup: Option<DedupOptions>,
}

impl JobOptions {
    /// The engine's enqueue options, numbers checked.
    pub(crate) fn resolve(self) -> Result<EnqueueOptions> {
        let backoff = match self.backoff {
            None => None,
            Some(b) => {
                let d = Backoff::default();
                Some(Backoff {
                    base_ms: b.base.map_or(Ok(d.base_ms), |s| args::secs_to_ms("backoff.base", s))?,
                    max_ms: b.max.map_or(Ok(d.max_ms), |s| args::secs_to_ms("backoff.max", s))?,
                })
            }
        };
        Ok(EnqueueOptions {
            queue: self.queue,
            priority: self
                .priority
                .map(|p| args::int("priority", p, i64::from(i32::MIN), i64::from(i32::MAX)).map(|p| p as i32))
                .transpose()?,
            delay_ms: self.delay.map(|d| args::secs_to_ms("delay", d)).transpose()?,
            run_at: self.run_at.map(|t| args::unix_ms("runAt", t)).transpose()?,
            max_retries: self
                .max_retries
                .map(|r| args::int("maxRetries", r, 0, i64::from(u32::MAX)).map(|r| r as u32))
                .transpose()?,
            backoff,
            timeout_ms: self.timeout.map(|t| args::secs_to_ms("timeout", t)).transpose()?,
            unique_key: self.unique_key,
            metadata: self.metadata,
            depends_on: self.depends_on.unwrap_or_default(),
            group_key: self.group_key,
            lifo: self.lifo.unwrap_or(false),
            dedup: self.dedup.map(DedupOptions::resolve).transpose()?,
            workflow_run_id: None,
            workflow_stage_id: None,
            workflow_version: None,
        })
    }
}

/// The `dedup` option of an enqueue: what an enqueue does while its key is held by another job.
#[napi(object)]
pub struct DedupOptions {
    /// The dedup key, scoped to the namespace.
    pub id: String,
    /// `simple`: ignored while the holder is unfinished. `throttle`: ignored for `ttlMs` after
    /// the holder was enqueued. `debounce`: ignored for `ttlMs`, `extend` restarting the window
    /// and `replace` giving a holder that has not started the newest payload and options.
    /// `keep_last_if_active`: one running and one waiting job at most, the waiting one taking
    /// the newest payload.
    #[napi(ts_type = "'simple' | 'throttle' | 'debounce' | 'keep_last_if_active'")]
    pub mode: String,
    /// The window in **milliseconds** (1 or more): required by `throttle` and `debounce`,
    /// refused by the other modes.
    pub ttl_ms: Option<f64>,
    /// `debounce` only: each duplicate restarts the window (default `false`).
    pub extend: Option<bool>,
    /// `debounce` only: a duplicate replaces the payload and options of a holder that has not
    /// started (default `false`).
    pub replace: Option<bool>,
}

impl DedupOptions {
    /// The engine's dedup options, checked (the mode's name, `ttlMs` where the mode needs it).
    pub(crate) fn resolve(self) -> Result<flexiq_core::dedup::DedupOptions> {
        let d = flexiq_core::dedup::DedupOptions {
            mode: DedupMode::parse(&self.mode).napi()?,
            ttl_ms: self
                .ttl_ms
                .map(|t| args::int("dedup.ttlMs", t, 1, i64::MAX).map(|t| t as u64))
                .transpose()?,
            extend: self.extend.unwrap_or(false),
            replace: self.replace.unwrap_or(false),
            id: self.id,
        };
        d.validate().napi()?;
        Ok(d)
    }
}

/// One node of `addFlow(tree)` as the addon takes it: the JS layer lists the tree in
/// pre-order (a node, then each child's subtree in turn), each node naming its parent's
/// index, so no conversion recurses however deep the tree is.
#[napi(object)]
pub struct FlowNodeInput {
    /// Index of this node's parent in the list; absent for the root, which comes first.
    pub parent: Option<u32>,
    /// Task name.
    pub task: String,
    /// The payload as JSON text.
    pub payload: String,
    /// Pre-assigned job id (a UUID); one is made when absent.
    pub id: Option<String>,
    /// The namespace the node is meant for; when given it must be the queue's own.
    pub namespace: Option<String>,
    /// What this node's failure does to its parent (default `fail_parent`); refused on the root.
    #[napi(ts_type = "'fail_parent' | 'continue_parent' | 'ignore_dependency' | 'remove_dependency'")]
    pub on_failure: Option<String>,
    /// Its enqueue options (the queue is the node's own); unique keys and dedup are refused.
    pub options: Option<JobOptions>,
}

impl FlowNodeInput {
    /// The engine's node without children, and its parent's index.
    pub(crate) fn resolve(self) -> Result<(Option<u32>, FlowNode)> {
        let node = FlowNode {
            id: self.id,
            namespace: self.namespace,
            payload: self.payload.into_bytes(),
            options: self.options.map(JobOptions::resolve).transpose()?.unwrap_or_default(),
            on_failure: self.on_failure.as_deref().map(EdgePolicy::parse).transpose().napi()?,
            children: Vec::new(),
            task: self.task,
        };
        Ok((self.parent, node))
    }
}

/// Options of `getDependencies(jobId, options)`: one keyset page of a parent's children.
#[napi(object)]
pub struct DependenciesOptions {
    /// Only children after this one (the previous page's `nextAfter`).
    pub after: Option<String>,
    /// Page size, 1 to 10,000 (default 100).
    pub limit: Option<f64>,
}

/// One job of an `enqueueMany` batch (the JS layer builds these).
#[napi(object)]
pub struct EnqueueManyItem {
    /// Task name.
    pub task: String,
    /// The payload as JSON text.
    pub payload: String,
    /// Its options.
    pub options: Option<JobOptions>,
}

/// What a job listing matches, and the page to return.
#[napi(object)]
pub struct ListFilter {
    /// Only this status.
    #[napi(
        ts_type = "'pending' | 'running' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'suspended' | 'waiting'"
    )]
    pub status: Option<String>,
    /// Only this queue.
    pub queue: Option<String>,
    /// Only this task.
    pub task: Option<String>,
    /// Metadata JSON text contains this substring (`listJobsFiltered*` only).
    pub metadata_contains: Option<String>,
    /// Last error contains this substring (`listJobsFiltered*` only).
    pub error_contains: Option<String>,
    /// Created at or after (Unix ms) (`listJobsFiltered*` only).
    pub created_after: Option<f64>,
    /// Created before (Unix ms) (`listJobsFiltered*` only).
    pub created_before: Option<f64>,
    /// Page size, 1 to 10,000 (default 50).
    pub limit: Option<f64>,
    /// Rows to skip (default 0; ignored by the keyset forms).
    pub offset: Option<f64>,
}

/// Default page size of job listings.
pub(crate) const DEFAULT_JOB_LIMIT: i64 = 50;

impl ListFilter {
    /// The engine's filter plus the limit and offset.
    pub(crate) fn resolve(self) -> Result<(JobFilter, i64, i64)> {
        let status = self.status.map(|s| s.parse::<JobStatus>()).transpose().napi()?;
        let filter = JobFilter {
            status,
            queue: self.queue,
            task: self.task,
            metadata_contains: self.metadata_contains,
            error_contains: self.error_contains,
            created_after: self.created_after.map(|t| args::unix_ms("createdAfter", t)).transpose()?,
            created_before: self.created_before.map(|t| args::unix_ms("createdBefore", t)).transpose()?,
        };
        Ok((filter, args::limit(self.limit, DEFAULT_JOB_LIMIT)?, args::offset(self.offset)?))
    }
}

/// Options of `queue.workflowJobs(options)`: the view's queue, its fairness and its worker id.
#[napi(object)]
pub struct WorkflowJobsOptions {
    /// Dotted path into a job's payload whose value is the job's fairness group
    /// (`"tenant.id"`); `null` or absent: no groups.
    pub fairness_group_by: Option<String>,
    /// Most running jobs per fairness group across every worker (a whole number, 1 or more);
    /// `null` or absent: no cap, a claim takes the best job by priority.
    pub fairness_cap: Option<f64>,
    /// The id stamped on the jobs this view claims (default: one made for the view).
    pub worker_id: Option<String>,
    /// The queue the view enqueues to and claims from (default `"workflow"`).
    pub queue: Option<String>,
    /// Claim the host's next job in the store call of each ack and hold it for its next
    /// dequeue (default `false`).
    pub claim_ahead: Option<bool>,
}

impl WorkflowJobsOptions {
    /// The runtime's view options, numbers checked (the runtime checks the path and names).
    pub(crate) fn resolve(self) -> Result<flexiq_runtime::WorkflowOptions> {
        Ok(flexiq_runtime::WorkflowOptions {
            queue: self.queue,
            fairness_group_by: self.fairness_group_by,
            fairness_cap: self
                .fairness_cap
                .map(|c| args::int("fairnessCap", c, 1, i64::from(u32::MAX)).map(|c| c as u32))
                .transpose()?,
            worker_id: self.worker_id,
            claim_ahead: self.claim_ahead.unwrap_or(false),
        })
    }
}

/// One stage of `enqueueParallel(jobs)` as the addon takes it (the JS layer serialises the
/// payload and turns a `Date` into Unix ms).
#[napi(object)]
pub struct WorkflowJobInput {
    /// The workflow run.
    pub workflow_run_id: String,
    /// The workflow (the job's task).
    pub workflow_id: String,
    /// The stage of the run: at most one job row per (run, stage).
    pub stage_id: String,
    /// The workflow definition version the run is pinned to.
    pub definition_version: Option<String>,
    /// The payload as JSON text.
    pub payload: String,
    /// Higher runs first (a whole number, default 0).
    pub priority: Option<f64>,
    /// Claimable from this time (Unix ms; default now).
    pub next_poll_at: Option<f64>,
    /// Attempts allowed, the first included (a whole number, 1 or more; default 3).
    pub max_attempts: Option<f64>,
}

impl WorkflowJobInput {
    /// The runtime's stage spec, numbers checked (`what` names the stage in messages).
    pub(crate) fn resolve(self, what: &str) -> Result<flexiq_runtime::WorkflowJobSpec> {
        Ok(flexiq_runtime::WorkflowJobSpec {
            priority: self
                .priority
                .map(|p| args::int(&format!("{what}.priority"), p, i64::from(i32::MIN), i64::from(i32::MAX)))
                .transpose()?
                .map_or(0, |p| p as i32),
            next_poll_at_ms: self
                .next_poll_at
                .map(|t| args::unix_ms(&format!("{what}.nextPollAt"), t))
                .transpose()?,
            max_attempts: self
                .max_attempts
                .map(|n| {
                    args::int(&format!("{what}.maxAttempts"), n, 1, i64::from(u32::MAX)).map(|n| n as u32)
                })
                .transpose()?,
            workflow_run_id: self.workflow_run_id,
            workflow_id: self.workflow_id,
            stage_id: self.stage_id,
            definition_version: self.definition_version,
            payload: self.payload.into_bytes(),
        })
    }
}

/// A (workflow, definition version) pair a host serves.
#[napi(object)]
pub struct WorkflowServes {
    /// The workflow id.
    pub workflow_id: String,
    /// The definition version; `null` or absent serves every version of the workflow.
    pub definition_version: Option<String>,
}

/// What `dequeue(options)` may claim.
#[napi(object)]
pub struct DequeueOptions {
    /// Only jobs of these pairs; absent or empty serves every workflow.
    pub serves: Option<Vec<WorkflowServes>>,
    /// Queues to claim from; absent or empty: the view's queue.
    pub queues: Option<Vec<String>>,
}

impl DequeueOptions {
    /// The runtime's dequeue options (absent options: every workflow, the view's queue).
    pub(crate) fn resolve(options: Option<Self>) -> flexiq_runtime::DequeueOptions {
        let (serves, queues) = options.map_or((None, None), |o| (o.serves, o.queues));
        flexiq_runtime::DequeueOptions {
            serves: serves
                .unwrap_or_default()
                .into_iter()
                .map(|s| flexiq_core::store::WorkflowServes {
                    workflow_id: s.workflow_id,
                    definition_version: s.definition_version,
                })
                .collect(),
            queues: queues.unwrap_or_default(),
        }
    }
}

/// Options of `obliterate(queue, options)`.
#[napi(object)]
pub struct ObliterateOptions {
    /// Remove the queue's running jobs too (their late acks are then refused as superseded);
    /// without it a queue with running jobs is refused with `CONFLICT` (default `false`).
    pub force: Option<bool>,
    /// Jobs removed per call, 1 to 10,000 (default 1,000); call again until it resolves to 0.
    pub count: Option<f64>,
}

/// Options of `remove(jobId, options)`.
#[napi(object)]
pub struct RemoveOptions {
    /// Also remove the jobs it waits on (transitively) that no other job waits on (default
    /// `true`).
    pub remove_children: Option<bool>,
}

/// Options of `changePriority(jobId, priority, options)`.
#[napi(object)]
pub struct ChangePriorityOptions {
    /// Place the job ahead of the FIFO jobs of its priority, the newest LIFO job first; it
    /// must be pending and due (default `false`).
    pub lifo: Option<bool>,
}
