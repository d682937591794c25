//! Task metrics (aggregates and time series) and the events stream, read-only.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::{ApiQuery, ApiResult, ErrorBody};
use crate::state::AppState;

/// Window of the metrics when `since_secs` is not given (s).
pub const DEFAULT_SINCE_SECS: i64 = 3_600;
/// Bucket width when `bucket_secs` is not given (s).
pub const DEFAULT_BUCKET_SECS: i64 = 60;

/// Which executions to aggregate.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MetricsQuery {
    /// Executions of the last this many seconds (default 3,600).
    pub since_secs: Option<i64>,
    /// Bucket width of the time series in seconds (default 60).
    pub bucket_secs: Option<i64>,
    /// Only this task.
    pub task: Option<String>,
}

impl MetricsQuery {
    fn task(&self) -> Option<&str> {
        self.task.as_deref().filter(|t| !t.is_empty())
    }
}

/// Aggregates over one task's executions (durations ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TaskMetrics {
    /// Executions.
    pub count: u64,
    /// Successes.
    pub success_count: u64,
    /// Failures.
    pub failure_count: u64,
    /// Mean (ms).
    pub avg_ms: f64,
    /// Median (ms).
    pub p50_ms: f64,
    /// 95th percentile (ms).
    pub p95_ms: f64,
    /// 99th percentile (ms).
    pub p99_ms: f64,
}

/// One time-series bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Bucket {
    /// Bucket start (Unix ms).
    pub timestamp: i64,
    /// Executions.
    pub count: u64,
    /// Successes.
    pub success: u64,
    /// Failures.
    pub failure: u64,
    /// Mean duration (ms).
    pub avg_ms: f64,
    /// 95th percentile (ms).
    pub p95_ms: f64,
}

/// Per-task aggregates.
pub async fn task_metrics(app: &AppState, q: &MetricsQuery) -> ApiResult<BTreeMap<String, TaskMetrics>> {
    let m = app.queue.metrics(q.task(), q.since_secs.unwrap_or(DEFAULT_SINCE_SECS)).await?;
    Ok(m.into_iter()
        .map(|(task, a)| {
            let view = TaskMetrics {
                count: a.count,
                success_count: a.success_count,
                failure_count: a.failure_count,
                avg_ms: a.avg_ms,
                p50_ms: a.p50_ms,
                p95_ms: a.p95_ms,
                p99_ms: a.p99_ms,
            };
            (task, view)
        })
        .collect())
}

/// Executions in buckets, oldest first.
pub async fn timeseries(app: &AppState, q: &MetricsQuery) -> ApiResult<Vec<Bucket>> {
    let since = q.since_secs.unwrap_or(DEFAULT_SINCE_SECS);
    let bucket = q.bucket_secs.unwrap_or(DEFAULT_BUCKET_SECS);
    let rows = app.queue.metrics_timeseries(q.task(), since, bucket).await?;
    Ok(rows
        .into_iter()
        .map(|b| Bucket {
            timestamp: b.timestamp,
            count: b.count,
            success: b.success,
            failure: b.failure,
            avg_ms: b.avg_ms,
            p95_ms: b.p95_ms,
        })
        .collect())
}

/// Per-task execution counts and latency percentiles.
#[utoipa::path(get, path = "/metrics/tasks", tag = "metrics", params(MetricsQuery),
    responses((status = 200, body = BTreeMap<String, TaskMetrics>), (status = 400, body = ErrorBody)))]
pub async fn get_task_metrics(
    State(app): State<AppState>,
    ApiQuery(q): ApiQuery<MetricsQuery>,
) -> ApiResult<Json<BTreeMap<String, TaskMetrics>>> {
    Ok(Json(task_metrics(&app, &q).await?))
}

/// Throughput, failures and latency over time.
#[utoipa::path(get, path = "/metrics/timeseries", tag = "metrics", params(MetricsQuery),
    responses((status = 200, body = Vec<Bucket>), (status = 400, body = ErrorBody)))]
pub async fn get_timeseries(
    State(app): State<AppState>,
    ApiQuery(q): ApiQuery<MetricsQuery>,
) -> ApiResult<Json<Vec<Bucket>>> {
    Ok(Json(timeseries(&app, &q).await?))
}

/// Where to read the events stream from.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Events after this id (default: from the oldest kept).
    pub after: Option<String>,
    /// Most events, 1 to 1,000 (default 100).
    pub limit: Option<i64>,
}

/// One event of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    /// Opaque, ordered id: pass as `after` to read on.
    pub id: String,
    /// Kind name or a custom event's name (`dashboard.write` records a dashboard write).
    pub name: String,
    /// The job it is about.
    pub job_id: Option<String>,
    /// The queue.
    pub queue: Option<String>,
    /// The task.
    pub task: Option<String>,
    /// When (Unix ms).
    pub at_ms: i64,
    /// What the event carries.
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
}

/// Events of the namespace in commit order (without waiting for new ones).
#[utoipa::path(get, path = "/events", tag = "events", params(EventsQuery),
    responses((status = 200, body = Vec<EventView>), (status = 400, body = ErrorBody)))]
pub async fn list_events(
    State(app): State<AppState>,
    ApiQuery(q): ApiQuery<EventsQuery>,
) -> ApiResult<Json<Vec<EventView>>> {
    let after = q.after.as_deref().filter(|a| !a.is_empty());
    let events = app.queue.read_events(after, 0, q.limit.unwrap_or(100).min(1_000)).await?;
    Ok(Json(
        events
            .into_iter()
            .map(|e| EventView {
                id: e.id,
                name: e.name,
                job_id: e.job_id,
                queue: e.queue,
                task: e.task,
                at_ms: e.at_ms,
                data: e.data,
            })
            .collect(),
    ))
}
