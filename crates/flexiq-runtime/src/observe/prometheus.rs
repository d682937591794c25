//! A queue's store-level metrics in the Prometheus / OpenMetrics text format.
//!
//! Everything here is read from the store at scrape time, so any process with a
//! [`Queue`](crate::Queue) handle (the dashboard, a worker, a sidecar) reports the same
//! numbers for the same namespace:
//!
//! - `flexiq_jobs{namespace, queue, status}`: jobs per queue and status, every known queue
//!   included (a queue with no jobs reports zeros). `status="pending"` is the backlog the
//!   `max_pending` cap compares against; `status="dead"` counts dead-lettered jobs.
//! - Over a trailing window (default 60 s, [`PrometheusOptions::window`]) of the store's
//!   per-execution metric rows: `flexiq_window_executions{namespace, queue, task, outcome}`
//!   (`outcome` is `completed` or `failed`), `flexiq_window_retried_executions{namespace,
//!   queue, task}` (executions that were a retry, attempt 2 or later),
//!   `flexiq_window_throughput_per_second{namespace}` and
//!   `flexiq_window_duration_milliseconds{namespace, task, quantile}` (0.5, 0.95, 0.99).
//!   These are gauges, not counters: metric rows are subject to retention, so a count of all
//!   of them would fall when the sweep runs. A worker's in-process counters
//!   ([`WorkerMetrics`](super::WorkerMetrics)) are the monotonic ones.
//! - `flexiq_window_seconds{namespace}`: the window itself.
//!
//! A scrape costs one stats query plus a read of the window's metric rows, so it tracks the
//! executions per window, not the jobs stored.

use std::collections::BTreeMap;
use std::time::Duration;

use flexiq_core::stats::aggregate;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::WorkerMetrics;
use crate::error::{Error, Result};
use crate::queue::Queue;

/// The `Content-Type` of what [`render`] returns (OpenMetrics text, which Prometheus reads).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The default trailing window of the execution gauges (60 s).
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(60);

/// The longest trailing window accepted (one day), so a scrape cannot read a whole history.
pub const MAX_WINDOW: Duration = Duration::from_secs(86_400);

/// How [`render_with`] reads the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrometheusOptions {
    /// The trailing window of the execution gauges, whole seconds from 1 s to [`MAX_WINDOW`]
    /// (default [`DEFAULT_WINDOW`], 60 s).
    pub window: Duration,
}

impl Default for PrometheusOptions {
    fn default() -> Self {
        PrometheusOptions { window: DEFAULT_WINDOW }
    }
}

impl PrometheusOptions {
    /// Checks the window; `InvalidArgument` names it.
    pub fn validate(&self) -> Result<()> {
        if self.window < Duration::from_secs(1) || self.window > MAX_WINDOW {
            return Err(Error::invalid(format!(
                "metrics window {} ms must be between 1 s and {} s",
                self.window.as_millis(),
                MAX_WINDOW.as_secs()
            )));
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NsLabels {
    namespace: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    namespace: String,
    queue: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExecutionLabels {
    namespace: String,
    queue: String,
    task: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskQueueLabels {
    namespace: String,
    queue: String,
    task: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QuantileLabels {
    namespace: String,
    task: String,
    quantile: String,
}

type FloatGauge = Gauge<f64, std::sync::atomic::AtomicU64>;

/// Renders `queue`'s store-level metrics with the default options.
pub async fn render(queue: &Queue) -> Result<String> {
    render_with(queue, &PrometheusOptions::default(), None).await
}

/// Renders `queue`'s store-level metrics read with `opts`, followed by `worker`'s in-process
/// metrics when given, as one OpenMetrics document (see [`CONTENT_TYPE`]).
pub async fn render_with(
    queue: &Queue,
    opts: &PrometheusOptions,
    worker: Option<&WorkerMetrics>,
) -> Result<String> {
    opts.validate()?;
    let mut registry = Registry::with_prefix("flexiq");
    register_store_metrics(&mut registry, queue, opts).await?;
    if let Some(w) = worker {
        w.register(&mut registry);
    }
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, &registry)
        .map_err(|e| Error::Core(flexiq_core::Error::backend(format!("encoding metrics failed: {e}"))))?;
    Ok(out)
}

/// Reads the store and registers its gauges in `registry`.
async fn register_store_metrics(
    registry: &mut Registry,
    queue: &Queue,
    opts: &PrometheusOptions,
) -> Result<()> {
    let ns = queue.namespace().to_string();

    let jobs = Family::<JobLabels, Gauge>::default();
    for (q, stats) in queue.stats_all_queues().await? {
        for (status, n) in stats.entries() {
            let labels = JobLabels { namespace: ns.clone(), queue: q.clone(), status: status.to_string() };
            jobs.get_or_create(&labels).set(clamp(n));
        }
    }
    registry.register("jobs", "Jobs per queue and status (pending includes delayed)", jobs);

    let window_ms = i64::try_from(opts.window.as_millis()).unwrap_or(i64::MAX);
    let since = queue.now_ms().saturating_sub(window_ms).max(0);
    let rows = queue.get_metrics(since, None).await?;

    let executions = Family::<ExecutionLabels, Gauge>::default();
    let retried = Family::<TaskQueueLabels, Gauge>::default();
    let mut per_key: BTreeMap<(String, String, bool), i64> = BTreeMap::new();
    for r in &rows {
        *per_key.entry((r.queue.clone(), r.task.clone(), r.success)).or_default() += 1;
        let tq = TaskQueueLabels { namespace: ns.clone(), queue: r.queue.clone(), task: r.task.clone() };
        let g = retried.get_or_create(&tq);
        if r.attempt > 1 {
            g.inc();
        }
    }
    for ((q, task, success), n) in per_key {
        let outcome = if success { "completed" } else { "failed" };
        let labels = ExecutionLabels { namespace: ns.clone(), queue: q, task, outcome: outcome.to_string() };
        executions.get_or_create(&labels).set(n);
    }
    registry.register(
        "window_executions",
        "Executions that ended in the trailing window, by outcome (completed or failed)",
        executions,
    );
    registry.register(
        "window_retried_executions",
        "Executions in the trailing window that were a retry (attempt 2 or later)",
        retried,
    );

    let throughput = Family::<NsLabels, FloatGauge>::default();
    throughput
        .get_or_create(&NsLabels { namespace: ns.clone() })
        .set(rows.len() as f64 / opts.window.as_secs_f64());
    registry.register(
        "window_throughput_per_second",
        "Executions per second over the trailing window",
        throughput,
    );

    let quantiles = Family::<QuantileLabels, FloatGauge>::default();
    for (task, agg) in aggregate(&rows) {
        for (q, v) in [("0.5", agg.p50_ms), ("0.95", agg.p95_ms), ("0.99", agg.p99_ms)] {
            let labels =
                QuantileLabels { namespace: ns.clone(), task: task.clone(), quantile: q.to_string() };
            quantiles.get_or_create(&labels).set(v);
        }
    }
    registry.register(
        "window_duration_milliseconds",
        "Execution wall time percentiles over the trailing window (ms)",
        quantiles,
    );

    let window = Family::<NsLabels, Gauge>::default();
    window.get_or_create(&NsLabels { namespace: ns }).set(clamp(opts.window.as_secs()));
    registry.register("window_seconds", "The trailing window of the window_ gauges (s)", window);
    Ok(())
}

fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_outside_one_second_to_a_day_are_refused() {
        assert!(PrometheusOptions::default().validate().is_ok());
        let bad = |w| PrometheusOptions { window: w }.validate().unwrap_err().to_string();
        assert!(bad(Duration::from_millis(999)).contains("metrics window"));
        assert!(bad(MAX_WINDOW + Duration::from_secs(1)).contains("metrics window"));
    }
}
