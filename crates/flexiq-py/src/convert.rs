//! Engine records as Python values: dicts keyed in snake_case, timestamps in Unix ms,
//! durations in ms, payloads and results as `bytes` (the Python layer deserialises them).

use std::collections::BTreeMap;

use flexiq_core::{
    CatchUp, DeadJob, EffectiveRetention, EnqueueOptions, Job, JobDag, JobError, JobScheduler, LogEntry,
    MetricBucket, MigrationSummary, Partial, QueueEvent, Repeat, RepeatRule, ReplayEntry, RetentionPreview,
    RetentionTable, RetentionWindows, Stats, TaskAggregate,
};
use flexiq_runtime::{ChildDependency, Dependencies, WorkflowJobRecord};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// A job as a dict with every field of the record.
pub(crate) fn job<'py>(py: Python<'py>, j: &Job) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", j.id.as_str())?;
    d.set_item("namespace", &j.namespace)?;
    d.set_item("queue", &j.queue)?;
    d.set_item("task", &j.task)?;
    d.set_item("payload", PyBytes::new(py, &j.payload))?;
    d.set_item("priority", j.priority)?;
    d.set_item("status", j.status.as_str())?;
    d.set_item("attempt", j.attempt)?;
    d.set_item("max_retries", j.max_retries)?;
    d.set_item("created_at", j.created_at)?;
    d.set_item("run_at", j.run_at)?;
    d.set_item("started_at", j.started_at)?;
    d.set_item("heartbeat_at", j.heartbeat_at)?;
    d.set_item("finished_at", j.finished_at)?;
    d.set_item("worker_id", j.worker_id.as_deref())?;
    d.set_item("result", j.result.as_deref().map(|r| PyBytes::new(py, r)))?;
    d.set_item("last_error", j.last_error.as_deref())?;
    d.set_item("unique_key", j.unique_key.as_deref())?;
    d.set_item("metadata", j.metadata.as_deref())?;
    d.set_item("progress", j.progress)?;
    d.set_item("timeout_ms", j.timeout_ms)?;
    d.set_item("cancel_requested", j.cancel_requested)?;
    let deps: Vec<&str> = j.depends_on.iter().map(|d| d.as_str()).collect();
    d.set_item("depends_on", deps)?;
    d.set_item("group_key", j.group_key.as_deref())?;
    d.set_item("workflow_run_id", j.workflow_run_id.as_deref())?;
    d.set_item("workflow_stage_id", j.workflow_stage_id.as_deref())?;
    d.set_item("stall_count", j.stall_count)?;
    Ok(d)
}

/// A workflow job as the workflow contract names its fields (timestamps Unix ms, the
/// payload JSON text as `bytes`).
pub(crate) fn workflow_job<'py>(py: Python<'py>, j: &WorkflowJobRecord) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", j.id.as_str())?;
    d.set_item("queue", &j.queue)?;
    d.set_item("workflow_run_id", &j.workflow_run_id)?;
    d.set_item("workflow_id", &j.workflow_id)?;
    d.set_item("stage_id", &j.stage_id)?;
    d.set_item("definition_version", j.definition_version.as_deref())?;
    d.set_item("group_key", j.group_key.as_deref())?;
    d.set_item("status", j.status.as_str())?;
    d.set_item("attempt", j.attempt)?;
    d.set_item("max_attempts", j.max_attempts)?;
    d.set_item("worker_id", j.worker_id.as_deref())?;
    d.set_item("locked_at", j.locked_at)?;
    d.set_item("started_at", j.started_at)?;
    d.set_item("next_poll_at", j.next_poll_at)?;
    d.set_item("last_error", j.last_error.as_deref())?;
    d.set_item("payload", PyBytes::new(py, &j.payload))?;
    d.set_item("created_at", j.created_at)?;
    d.set_item("updated_at", j.updated_at)?;
    Ok(d)
}

/// A list of jobs.
pub(crate) fn jobs<'py>(py: Python<'py>, js: &[Job]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for j in js {
        out.append(job(py, j)?)?;
    }
    Ok(out)
}

/// A parent's dependency: `{"id", "queue", "task", "status", "policy", "result" (bytes of a
/// completed child, else None), "error" (the last error of a failed one, else None)}`.
pub(crate) fn child_dependency<'py>(py: Python<'py>, c: &ChildDependency) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", c.id.as_str())?;
    d.set_item("queue", &c.queue)?;
    d.set_item("task", &c.task)?;
    d.set_item("status", c.status.as_str())?;
    d.set_item("policy", c.policy.as_str())?;
    d.set_item("result", c.result.as_deref().map(|r| PyBytes::new(py, r)))?;
    d.set_item("error", c.error.as_deref())?;
    Ok(d)
}

/// One page of dependencies: a list of child dicts per outcome, and `next_after`.
pub(crate) fn dependencies<'py>(py: Python<'py>, deps: &Dependencies) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (key, children) in [
        ("processed", &deps.processed),
        ("unprocessed", &deps.unprocessed),
        ("ignored", &deps.ignored),
        ("failed", &deps.failed),
    ] {
        let out = PyList::empty(py);
        for c in children {
            out.append(child_dependency(py, c)?)?;
        }
        d.set_item(key, out)?;
    }
    d.set_item("next_after", deps.next_after.as_ref().map(|i| i.as_str()))?;
    Ok(d)
}

/// A dead letter as the spec's dict: id, original_job_id, queue, task_name, error,
/// retry_count, failed_at (Unix ms), metadata.
pub(crate) fn dead_job<'py>(py: Python<'py>, dj: &DeadJob) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &dj.id)?;
    d.set_item("original_job_id", &dj.original_job_id)?;
    d.set_item("queue", &dj.queue)?;
    d.set_item("task_name", &dj.task_name)?;
    d.set_item("error", dj.error.as_deref())?;
    d.set_item("retry_count", dj.retry_count)?;
    d.set_item("failed_at", dj.failed_at)?;
    d.set_item("metadata", dj.metadata.as_deref())?;
    Ok(d)
}

/// A list of dead letters.
pub(crate) fn dead_jobs<'py>(py: Python<'py>, ds: &[DeadJob]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for d in ds {
        out.append(dead_job(py, d)?)?;
    }
    Ok(out)
}

/// One failed attempt.
pub(crate) fn job_error<'py>(py: Python<'py>, e: &JobError) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &e.id)?;
    d.set_item("job_id", &e.job_id)?;
    d.set_item("attempt", e.attempt)?;
    d.set_item("error", &e.error)?;
    d.set_item("failed_at", e.failed_at)?;
    Ok(d)
}

/// One replay record.
pub(crate) fn replay_entry<'py>(py: Python<'py>, r: &ReplayEntry) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &r.id)?;
    d.set_item("original_job_id", &r.original_job_id)?;
    d.set_item("replay_job_id", &r.replay_job_id)?;
    d.set_item("replayed_at", r.replayed_at)?;
    d.set_item("original_error", r.original_error.as_deref())?;
    d.set_item("replay_error", r.replay_error.as_deref())?;
    Ok(d)
}

/// The dependency graph: `{"nodes": [{id, task, status}], "edges": [{from, to}]}`.
pub(crate) fn job_dag<'py>(py: Python<'py>, g: &JobDag) -> PyResult<Bound<'py, PyDict>> {
    let nodes = PyList::empty(py);
    for n in &g.nodes {
        let d = PyDict::new(py);
        d.set_item("id", &n.id)?;
        d.set_item("task", &n.task)?;
        d.set_item("status", n.status.as_str())?;
        nodes.append(d)?;
    }
    let edges = PyList::empty(py);
    for e in &g.edges {
        let d = PyDict::new(py);
        d.set_item("from", &e.from)?;
        d.set_item("to", &e.to)?;
        edges.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("nodes", nodes)?;
    d.set_item("edges", edges)?;
    Ok(d)
}

/// A partial result: `{"seq", "data" (bytes), "published_at" (Unix ms)}`.
pub(crate) fn partial<'py>(py: Python<'py>, p: &Partial) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("seq", p.seq)?;
    d.set_item("data", PyBytes::new(py, &p.data))?;
    d.set_item("published_at", p.published_at)?;
    Ok(d)
}

/// A log line.
pub(crate) fn log_entry<'py>(py: Python<'py>, l: &LogEntry) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("job_id", &l.job_id)?;
    d.set_item("level", &l.level)?;
    d.set_item("message", &l.message)?;
    d.set_item("logged_at", l.logged_at)?;
    Ok(d)
}

/// The spec's status counts: pending, running, completed, failed, dead, cancelled (plus the
/// engine's suspended and waiting, so the counts add up to every job).
pub(crate) fn stats<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (status, n) in s.entries() {
        d.set_item(status, n)?;
    }
    Ok(d)
}

/// Per-queue stats.
pub(crate) fn stats_map<'py>(py: Python<'py>, m: &BTreeMap<String, Stats>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (q, s) in m {
        d.set_item(q, stats(py, s)?)?;
    }
    Ok(d)
}

/// Per-task aggregates keyed by task name.
pub(crate) fn aggregates<'py>(
    py: Python<'py>,
    m: &BTreeMap<String, TaskAggregate>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (task, a) in m {
        let d = PyDict::new(py);
        d.set_item("count", a.count)?;
        d.set_item("success_count", a.success_count)?;
        d.set_item("failure_count", a.failure_count)?;
        d.set_item("avg_ms", a.avg_ms)?;
        d.set_item("p50_ms", a.p50_ms)?;
        d.set_item("p95_ms", a.p95_ms)?;
        d.set_item("p99_ms", a.p99_ms)?;
        d.set_item("min_ms", a.min_ms)?;
        d.set_item("max_ms", a.max_ms)?;
        out.set_item(task, d)?;
    }
    Ok(out)
}

/// Time-series buckets, oldest first (`timestamp` Unix ms).
pub(crate) fn buckets<'py>(py: Python<'py>, bs: &[MetricBucket]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for b in bs {
        let d = PyDict::new(py);
        d.set_item("timestamp", b.timestamp)?;
        d.set_item("count", b.count)?;
        d.set_item("success", b.success)?;
        d.set_item("failure", b.failure)?;
        d.set_item("avg_ms", b.avg_ms)?;
        d.set_item("p50_ms", b.p50_ms)?;
        d.set_item("p95_ms", b.p95_ms)?;
        d.set_item("p99_ms", b.p99_ms)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Retention windows (ms) keyed by table, `None` for a table kept forever.
pub(crate) fn windows<'py>(py: Python<'py>, w: &RetentionWindows) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for t in RetentionTable::ALL {
        d.set_item(t.key(), w.get(t))?;
    }
    Ok(d)
}

/// What the elected cleaner published (windows ms, `reported_at` Unix ms).
pub(crate) fn effective_retention<'py>(
    py: Python<'py>,
    e: &EffectiveRetention,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("enabled", e.enabled)?;
    d.set_item("defaulted", e.defaulted)?;
    d.set_item("namespace", &e.namespace)?;
    d.set_item("reported_at", e.reported_at)?;
    d.set_item("windows", windows(py, &e.windows)?)?;
    Ok(d)
}

/// A retention preview (windows ms, `reference_time` Unix ms, counts per table, total).
pub(crate) fn retention_preview<'py>(py: Python<'py>, p: &RetentionPreview) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("enabled", p.enabled)?;
    d.set_item("defaulted", p.defaulted)?;
    d.set_item("namespace", &p.namespace)?;
    d.set_item("reference_time", p.reference_time)?;
    d.set_item("windows", windows(py, &p.windows)?)?;
    let counts = PyDict::new(py);
    for t in RetentionTable::ALL {
        counts.set_item(t.key(), p.counts.get(&t).copied().unwrap_or(0))?;
    }
    d.set_item("counts", counts)?;
    d.set_item("total", p.total)?;
    Ok(d)
}

/// What `migrate()` ran.
pub(crate) fn migration<'py>(py: Python<'py>, m: &MigrationSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("applied", m.applied.clone())?;
    d.set_item("workflow_applied", m.workflow_applied.clone())?;
    d.set_item("archived_jobs", m.archived_jobs)?;
    d.set_item("schemaless", m.schemaless)?;
    Ok(d)
}

/// A scheduler's rule as the `repeat` dict `upsert_job_scheduler` takes, every key present:
/// `cron` and `tz` (`None`: UTC) or `every_ms`, then `limit`, `start_at_ms`, `end_at_ms`,
/// `immediately`, `catch_up` and `catch_up_max` (`None` unless `catch_up` is `"all"`).
pub(crate) fn repeat_rule<'py>(py: Python<'py>, r: &RepeatRule) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match &r.repeat {
        Repeat::Cron { pattern, tz } => {
            d.set_item("cron", pattern)?;
            d.set_item("tz", tz.as_deref())?;
        }
        Repeat::Every { every_ms } => d.set_item("every_ms", every_ms)?,
    }
    d.set_item("limit", r.limit)?;
    d.set_item("start_at_ms", r.start_at_ms)?;
    d.set_item("end_at_ms", r.end_at_ms)?;
    d.set_item("immediately", r.immediately)?;
    let (catch_up, max) = match r.catch_up {
        CatchUp::Latest => ("latest", None),
        CatchUp::None => ("none", None),
        CatchUp::All { max } => ("all", Some(max)),
    };
    d.set_item("catch_up", catch_up)?;
    d.set_item("catch_up_max", max)?;
    Ok(d)
}

/// The options a template sets, in the engine units of the options dict `enqueue` takes
/// (`queue`, `priority`, `max_retries`, `backoff_ms`, `backoff_max_ms`, `timeout_ms`,
/// `metadata` as JSON text, `group_key`); the ones left unset are absent.
pub(crate) fn template_options<'py>(py: Python<'py>, o: &EnqueueOptions) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    set_some(&d, "queue", o.queue.as_deref())?;
    set_some(&d, "priority", o.priority)?;
    set_some(&d, "max_retries", o.max_retries)?;
    set_some(&d, "backoff_ms", o.backoff.map(|b| b.base_ms))?;
    set_some(&d, "backoff_max_ms", o.backoff.map(|b| b.max_ms))?;
    set_some(&d, "timeout_ms", o.timeout_ms)?;
    set_some(&d, "metadata", o.metadata.as_deref())?;
    set_some(&d, "group_key", o.group_key.as_deref())?;
    Ok(d)
}

/// Sets `key` when `v` holds a value (an unset option is absent, not `None`).
fn set_some<'py, T: IntoPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str, v: Option<T>) -> PyResult<()> {
    v.map_or(Ok(()), |v| d.set_item(key, v))
}

/// A scheduler: `id`, `repeat` (see [`repeat_rule`]), `template` (`task`, `payload` as bytes,
/// `options` as [`template_options`]), `next_run_ms` and `last_run_ms` (Unix ms, `None` when
/// there is none), `iterations`, `created_at` and `updated_at` (Unix ms).
pub(crate) fn job_scheduler<'py>(py: Python<'py>, s: &JobScheduler) -> PyResult<Bound<'py, PyDict>> {
    let template = PyDict::new(py);
    template.set_item("task", &s.template.task)?;
    template.set_item("payload", PyBytes::new(py, &s.template.payload))?;
    template.set_item("options", template_options(py, &s.template.options)?)?;
    let d = PyDict::new(py);
    d.set_item("id", &s.id)?;
    d.set_item("repeat", repeat_rule(py, &s.rule)?)?;
    d.set_item("template", template)?;
    d.set_item("next_run_ms", s.next_run_ms)?;
    d.set_item("last_run_ms", s.last_run_ms)?;
    d.set_item("iterations", s.iterations)?;
    d.set_item("created_at", s.created_at)?;
    d.set_item("updated_at", s.updated_at)?;
    Ok(d)
}

/// An event: `id`, `kind` (the kind's name, `"custom"` for a custom event), `name` (the
/// kind's or the custom event's), `job_id`, `queue`, `task`, `attempt`, `at_ms` (Unix ms) and
/// `data` decoded from JSON.
pub(crate) fn queue_event<'py>(py: Python<'py>, e: &QueueEvent) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &e.id)?;
    d.set_item("kind", e.kind.as_str())?;
    d.set_item("name", &e.name)?;
    d.set_item("job_id", e.job_id.as_deref())?;
    d.set_item("queue", e.queue.as_deref())?;
    d.set_item("task", e.task.as_deref())?;
    d.set_item("attempt", e.attempt)?;
    d.set_item("at_ms", e.at_ms)?;
    d.set_item("data", crate::json::to_py(py, &e.data)?)?;
    Ok(d)
}
