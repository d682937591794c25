//! Counts and queue controls: `/stats`, `/queues` and pause / resume / rate limit /
//! concurrency of one queue.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::model::{QueueControls, QueueView, StatsView, StatusCounts};
use crate::error::{ApiError, ApiJson, ApiResult, ErrorBody};
use crate::state::AppState;

/// Job counts for the namespace and for every known queue.
#[utoipa::path(get, path = "/stats", tag = "queues",
    responses((status = 200, body = StatsView), (status = 401, body = ErrorBody)))]
pub async fn get_stats(State(app): State<AppState>) -> ApiResult<Json<StatsView>> {
    let q = &app.queue;
    let by_queue = q.stats_all_queues().await?;
    let total = q.stats().await?;
    Ok(Json(StatsView {
        namespace: q.namespace().to_string(),
        backend: q.backend().to_string(),
        total: total.into(),
        by_queue: by_queue.into_iter().map(|(k, v)| (k, v.into())).collect(),
    }))
}

/// Every known queue with its counts and controls.
#[utoipa::path(get, path = "/queues", tag = "queues",
    responses((status = 200, body = Vec<QueueView>), (status = 401, body = ErrorBody)))]
pub async fn list_queues(State(app): State<AppState>) -> ApiResult<Json<Vec<QueueView>>> {
    let q = &app.queue;
    let mut out = Vec::new();
    for (name, stats) in q.stats_all_queues().await? {
        let controls = q.queue_config(&name).await?.into();
        out.push(QueueView { name, counts: stats.into(), controls, max_pending: q.max_pending() });
    }
    Ok(Json(out))
}

/// One queue's counts and controls (a queue never used answers zeros and defaults).
#[utoipa::path(get, path = "/queues/{queue}", tag = "queues",
    params(("queue" = String, Path, description = "Queue name")),
    responses((status = 200, body = QueueView), (status = 400, body = ErrorBody)))]
pub async fn get_queue(State(app): State<AppState>, Path(queue): Path<String>) -> ApiResult<Json<QueueView>> {
    Ok(Json(queue_view(&app, &queue).await?))
}

async fn queue_view(app: &AppState, queue: &str) -> ApiResult<QueueView> {
    let q = &app.queue;
    let counts: StatusCounts = q.stats_for_queue(queue).await?.into();
    let controls: QueueControls = q.queue_config(queue).await?.into();
    Ok(QueueView { name: queue.to_string(), counts, controls, max_pending: q.max_pending() })
}

/// Pauses a queue: workers stop claiming from it (running jobs go on).
#[utoipa::path(post, path = "/queues/{queue}/pause", tag = "queues",
    params(("queue" = String, Path, description = "Queue name")),
    responses((status = 200, body = QueueView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn pause_queue(
    State(app): State<AppState>,
    Path(queue): Path<String>,
) -> ApiResult<Json<QueueView>> {
    app.queue.pause(&queue).await?;
    Ok(Json(queue_view(&app, &queue).await?))
}

/// Resumes a paused queue.
#[utoipa::path(post, path = "/queues/{queue}/resume", tag = "queues",
    params(("queue" = String, Path, description = "Queue name")),
    responses((status = 200, body = QueueView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn resume_queue(
    State(app): State<AppState>,
    Path(queue): Path<String>,
) -> ApiResult<Json<QueueView>> {
    app.queue.resume(&queue).await?;
    Ok(Json(queue_view(&app, &queue).await?))
}

/// A new rate limit.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimitBody {
    /// `N/s`, `N/m` or `N/h`; `null` removes the limit.
    pub rate_limit: Option<String>,
}

/// Sets or clears a queue's rate limit.
#[utoipa::path(put, path = "/queues/{queue}/rate-limit", tag = "queues",
    params(("queue" = String, Path, description = "Queue name")), request_body = RateLimitBody,
    responses((status = 200, body = QueueView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn set_rate_limit(
    State(app): State<AppState>,
    Path(queue): Path<String>,
    ApiJson(body): ApiJson<RateLimitBody>,
) -> ApiResult<Json<QueueView>> {
    match body.rate_limit.as_deref() {
        Some(limit) => app.queue.set_queue_rate_limit(&queue, limit).await?,
        None => app.queue.clear_queue_rate_limit(&queue).await?,
    }
    Ok(Json(queue_view(&app, &queue).await?))
}

/// A new concurrency cap.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyBody {
    /// Most jobs running at once across all workers (at least 1); `null` removes the cap.
    pub concurrency: Option<i64>,
}

/// Sets or clears a queue's concurrency cap.
#[utoipa::path(put, path = "/queues/{queue}/concurrency", tag = "queues",
    params(("queue" = String, Path, description = "Queue name")), request_body = ConcurrencyBody,
    responses((status = 200, body = QueueView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn set_concurrency(
    State(app): State<AppState>,
    Path(queue): Path<String>,
    ApiJson(body): ApiJson<ConcurrencyBody>,
) -> ApiResult<Json<QueueView>> {
    match body.concurrency {
        Some(n) => app.queue.set_queue_concurrency(&queue, n).await?,
        None => app.queue.clear_queue_concurrency(&queue).await?,
    }
    Ok(Json(queue_view(&app, &queue).await?))
}

/// The fallback of `/api/v1`: a typed 404 for a route that does not exist.
pub async fn no_route(uri: axum::http::Uri) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no_route", format!("no api route {}", uri.path()))
}
