//! Counts, metrics and the worker registry on `NativeQueue`.
//!
//! `countPendingByQueue` is synchronous (index-backed, the `maxPending` number); the rest
//! scan and return Promises. Metrics: per-task aggregates and time-series buckets over the
//! raw execution rows.

use std::collections::HashMap;

use flexiq_core::stats::{aggregate, timeseries};
use napi::bindgen_prelude::block_on;
use napi_derive::napi;

use crate::args;
use crate::error::{invalid, IntoNapi, Result};
use crate::queue::NativeQueue;
use crate::types::{stats_map, Metric, Stats};

#[napi]
impl NativeQueue {
    /// Jobs per status over the whole namespace.
    #[napi]
    pub async fn stats(&self) -> Result<Stats> {
        let q = self.queue()?;
        Ok(q.stats().await.napi()?.into())
    }

    /// Jobs per status on one queue.
    #[napi]
    pub async fn stats_by_queue(&self, queue: String) -> Result<Stats> {
        let q = self.queue()?;
        Ok(q.stats_for_queue(&queue).await.napi()?.into())
    }

    /// Jobs per status for every known queue, including queues with no jobs.
    #[napi]
    pub async fn stats_all_queues(&self) -> Result<HashMap<String, Stats>> {
        let q = self.queue()?;
        Ok(stats_map(q.stats_all_queues().await.napi()?))
    }

    /// Raw per-execution metric rows recorded at or after `sinceMs` (Unix ms), oldest first,
    /// optionally of one task.
    #[napi]
    pub async fn get_metrics(&self, since_ms: f64, task: Option<String>) -> Result<Vec<Metric>> {
        let since = args::unix_ms("sinceMs", since_ms)?;
        let q = self.queue()?;
        Ok(q.get_metrics(since, task.as_deref()).await.napi()?.into_iter().map(Into::into).collect())
    }

    /// Pending jobs waiting on one queue: the number the `maxPending` cap is compared
    /// against. Synchronous and index-backed.
    #[napi]
    pub fn count_pending_by_queue(&self, queue: String) -> Result<f64> {
        let q = self.queue()?;
        Ok(block_on(q.count_pending_by_queue(&queue)).napi()? as f64)
    }
}

/// Default window of `metrics` / `metricsTimeseries`: one hour (ms).
const DEFAULT_SINCE_MS: i64 = 3_600_000;
/// Default bucket of `metricsTimeseries`: one minute (ms).
const DEFAULT_BUCKET_MS: i64 = 60_000;

/// One task's executions over a window. Durations in milliseconds.
#[napi(object)]
pub struct TaskMetrics {
    /// Executions (a job that ran three attempts counts three).
    pub count: f64,
    /// Successful executions.
    pub success_count: f64,
    /// Failed executions.
    pub failure_count: f64,
    /// Mean duration (ms).
    pub avg_ms: f64,
    /// Median duration (ms).
    pub p50_ms: f64,
    /// 95th percentile (ms).
    pub p95_ms: f64,
    /// 99th percentile (ms).
    pub p99_ms: f64,
    /// Shortest (ms).
    pub min_ms: f64,
    /// Longest (ms).
    pub max_ms: f64,
}

/// One time-series bucket. Durations in milliseconds.
#[napi(object)]
pub struct MetricBucket {
    /// Bucket start (Unix ms).
    pub timestamp: f64,
    /// Executions.
    pub count: f64,
    /// Successes.
    pub success: f64,
    /// Failures.
    pub failure: f64,
    /// Mean duration (ms).
    pub avg_ms: f64,
    /// Median (ms).
    pub p50_ms: f64,
    /// 95th percentile (ms).
    pub p95_ms: f64,
    /// 99th percentile (ms).
    pub p99_ms: f64,
}

/// A positive whole number of milliseconds, or `default`.
fn window(what: &str, v: Option<f64>, default: i64) -> Result<i64> {
    match v {
        None => Ok(default),
        Some(v) => args::int(what, v, 1, i64::MAX),
    }
}

impl NativeQueue {
    async fn metric_rows(
        &self,
        task: Option<String>,
        since_ms: Option<f64>,
    ) -> Result<Vec<flexiq_core::MetricRow>> {
        let since = window("sinceMs", since_ms, DEFAULT_SINCE_MS)?;
        if task.as_deref() == Some("") {
            return Err(invalid("taskName must not be empty: pass null for every task"));
        }
        let q = self.queue()?;
        let from = q.now_ms().saturating_sub(since).max(0);
        q.get_metrics(from, task.as_deref()).await.napi()
    }
}

#[napi]
impl NativeQueue {
    /// Per-task aggregates over executions of the last `sinceMs` milliseconds (default one
    /// hour), keyed by task name, optionally of one task.
    #[napi]
    pub async fn metrics(
        &self,
        task_name: Option<String>,
        since_ms: Option<f64>,
    ) -> Result<HashMap<String, TaskMetrics>> {
        let rows = self.metric_rows(task_name, since_ms).await?;
        Ok(aggregate(&rows)
            .into_iter()
            .map(|(task, a)| {
                let m = TaskMetrics {
                    count: a.count as f64,
                    success_count: a.success_count as f64,
                    failure_count: a.failure_count as f64,
                    avg_ms: a.avg_ms,
                    p50_ms: a.p50_ms,
                    p95_ms: a.p95_ms,
                    p99_ms: a.p99_ms,
                    min_ms: a.min_ms,
                    max_ms: a.max_ms,
                };
                (task, m)
            })
            .collect())
    }

    /// The same executions in `bucketMs`-millisecond buckets (default one minute), oldest
    /// first; an empty bucket is absent rather than zero-filled.
    #[napi]
    pub async fn metrics_timeseries(
        &self,
        task_name: Option<String>,
        since_ms: Option<f64>,
        bucket_ms: Option<f64>,
    ) -> Result<Vec<MetricBucket>> {
        let bucket = window("bucketMs", bucket_ms, DEFAULT_BUCKET_MS)?;
        let rows = self.metric_rows(task_name, since_ms).await?;
        Ok(timeseries(&rows, bucket as u64)
            .into_iter()
            .map(|b| MetricBucket {
                timestamp: b.timestamp as f64,
                count: b.count as f64,
                success: b.success as f64,
                failure: b.failure as f64,
                avg_ms: b.avg_ms,
                p50_ms: b.p50_ms,
                p95_ms: b.p95_ms,
                p99_ms: b.p99_ms,
            })
            .collect())
    }
}

/// A worker as it registered itself.
#[napi(object)]
pub struct WorkerInfo {
    /// The worker's id (stamped on the jobs it claims).
    pub id: String,
    /// The queues it serves (empty: every queue).
    pub queues: Vec<String>,
    /// Its concurrency.
    pub concurrency: u32,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// When it started (Unix ms).
    pub started_at: f64,
    /// Its last heartbeat (Unix ms).
    pub heartbeat_at: f64,
    /// Ids of the jobs it is running now (running with its id stamped).
    pub current_jobs: Vec<String>,
}

#[napi]
impl NativeQueue {
    /// Workers registered in the namespace with their last heartbeat and the jobs they run
    /// now.
    #[napi]
    pub async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        let q = self.queue()?;
        Ok(q.list_workers()
            .await
            .napi()?
            .into_iter()
            .map(|w| WorkerInfo {
                id: w.id,
                queues: w.queues,
                concurrency: w.concurrency,
                host: w.host,
                pid: w.pid,
                started_at: w.started_at as f64,
                heartbeat_at: w.heartbeat_at as f64,
                current_jobs: w.current_jobs,
            })
            .collect())
    }
}
