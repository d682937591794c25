//! Retention (effective windows and a dry-run preview), settings (runtime-owned prefixes hidden
//! and refused), workers, task metrics and the events stream.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use flexiq::core::{is_reserved_setting, reserved_setting_prefixes, RetentionTable};
use flexiq::{Retention, RetentionWindows};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::{ApiError, ApiJson, ApiQuery, ApiResult, ErrorBody};
use crate::state::AppState;

/// Retention windows per table (ms; `null`: kept forever).
pub type WindowsMs = BTreeMap<String, Option<u64>>;

fn windows(w: &RetentionWindows) -> WindowsMs {
    RetentionTable::ALL.iter().map(|t| (t.key().to_string(), w.get(*t))).collect()
}

/// What retention does in this namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RetentionView {
    /// Windows the elected cleaner last applied (ms); `null` when no worker has swept yet.
    pub effective: Option<WindowsMs>,
    /// When the cleaner reported them (Unix ms).
    pub reported_at: Option<i64>,
    /// The windows the preview used (ms).
    pub preview_windows: WindowsMs,
    /// Whether the preview used the recommended defaults.
    pub preview_defaulted: bool,
    /// Rows a purge with those windows would delete now, per table.
    pub would_delete: BTreeMap<String, u64>,
    /// Their sum.
    pub total: u64,
}

/// Windows (seconds) to preview; absent ones take the recommended defaults when none is given.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PreviewQuery {
    /// Archived jobs window (s).
    pub archived_jobs: Option<u64>,
    /// Dead letters window (s).
    pub dead_letter: Option<u64>,
    /// Task logs window (s).
    pub task_logs: Option<u64>,
    /// Task metrics window (s).
    pub task_metrics: Option<u64>,
    /// Job errors window (s).
    pub job_errors: Option<u64>,
}

/// The effective retention and what a purge would delete now.
pub async fn retention_view(app: &AppState, q: &PreviewQuery) -> ApiResult<RetentionView> {
    let given = Retention {
        archived_jobs: q.archived_jobs,
        dead_letter: q.dead_letter,
        task_logs: q.task_logs,
        task_metrics: q.task_metrics,
        job_errors: q.job_errors,
    };
    let chosen = (given != Retention::default()).then_some(given);
    let effective = app.queue.effective_retention().await?;
    let preview = app.queue.dry_run_retention(chosen).await?;
    Ok(RetentionView {
        effective: effective.as_ref().map(|e| windows(&e.windows)),
        reported_at: effective.map(|e| e.reported_at),
        preview_windows: windows(&preview.windows),
        preview_defaulted: preview.defaulted,
        would_delete: preview.counts.iter().map(|(t, n)| (t.key().to_string(), *n)).collect(),
        total: preview.total,
    })
}

/// The effective retention windows and a dry-run preview (deletes nothing).
#[utoipa::path(get, path = "/retention", tag = "retention", params(PreviewQuery),
    responses((status = 200, body = RetentionView), (status = 400, body = ErrorBody)))]
pub async fn get_retention(
    State(app): State<AppState>,
    ApiQuery(q): ApiQuery<PreviewQuery>,
) -> ApiResult<Json<RetentionView>> {
    Ok(Json(retention_view(&app, &q).await?))
}

/// One setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SettingView {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

fn refuse_reserved(key: &str) -> ApiResult<()> {
    if is_reserved_setting(key) {
        return Err(ApiError::forbidden(format!(
            "setting {key} is owned by the runtime (reserved prefixes: {})",
            reserved_setting_prefixes().join(" ")
        )));
    }
    Ok(())
}

/// Settings outside the runtime's reserved prefixes.
pub async fn visible_settings(app: &AppState) -> ApiResult<Vec<SettingView>> {
    Ok(app
        .queue
        .list_settings()
        .await?
        .into_iter()
        .filter(|(k, _)| !is_reserved_setting(k))
        .map(|(key, value)| SettingView { key, value })
        .collect())
}

/// Every setting except those under the runtime's reserved prefixes.
#[utoipa::path(get, path = "/settings", tag = "settings", responses((status = 200, body = Vec<SettingView>)))]
pub async fn list_settings(State(app): State<AppState>) -> ApiResult<Json<Vec<SettingView>>> {
    Ok(Json(visible_settings(&app).await?))
}

/// One setting; 403 under a reserved prefix, 404 when never set.
#[utoipa::path(get, path = "/settings/{key}", tag = "settings",
    params(("key" = String, Path, description = "Setting key")),
    responses((status = 200, body = SettingView), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_setting(
    State(app): State<AppState>,
    Path(key): Path<String>,
) -> ApiResult<Json<SettingView>> {
    refuse_reserved(&key)?;
    let value = app
        .queue
        .get_setting(&key)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("setting {key} not found")))?;
    Ok(Json(SettingView { key, value }))
}

/// A setting's new value.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingBody {
    /// The value (opaque text, at most 1 MiB).
    pub value: String,
}

/// Inserts or overwrites a setting; 403 under a reserved prefix.
#[utoipa::path(put, path = "/settings/{key}", tag = "settings",
    params(("key" = String, Path, description = "Setting key")), request_body = SettingBody,
    responses((status = 200, body = SettingView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn put_setting(
    State(app): State<AppState>,
    Path(key): Path<String>,
    ApiJson(body): ApiJson<SettingBody>,
) -> ApiResult<Json<SettingView>> {
    refuse_reserved(&key)?;
    app.queue.set_setting(&key, &body.value).await?;
    Ok(Json(SettingView { key, value: body.value }))
}

/// Removes a setting; 403 under a reserved prefix, 404 when it did not exist.
#[utoipa::path(delete, path = "/settings/{key}", tag = "settings",
    params(("key" = String, Path, description = "Setting key")),
    responses((status = 204), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_setting(State(app): State<AppState>, Path(key): Path<String>) -> ApiResult<StatusCode> {
    refuse_reserved(&key)?;
    if app.queue.delete_setting(&key).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("setting {key} not found")))
    }
}

/// A worker process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WorkerView {
    /// Worker id.
    pub id: String,
    /// Queues it serves (empty: all).
    pub queues: Vec<String>,
    /// Its concurrency.
    pub concurrency: u32,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// Started (Unix ms).
    pub started_at: i64,
    /// Last heartbeat (Unix ms).
    pub heartbeat_at: i64,
    /// Jobs it runs now.
    pub current_jobs: Vec<String>,
}

/// Live workers with their heartbeats and current jobs.
pub async fn workers(app: &AppState) -> ApiResult<Vec<WorkerView>> {
    Ok(app
        .queue
        .list_workers()
        .await?
        .into_iter()
        .map(|w| WorkerView {
            id: w.id,
            queues: w.queues,
            concurrency: w.concurrency,
            host: w.host,
            pid: w.pid,
            started_at: w.started_at,
            heartbeat_at: w.heartbeat_at,
            current_jobs: w.current_jobs,
        })
        .collect())
}

/// Workers registered in the namespace.
#[utoipa::path(get, path = "/workers", tag = "workers", responses((status = 200, body = Vec<WorkerView>)))]
pub async fn list_workers(State(app): State<AppState>) -> ApiResult<Json<Vec<WorkerView>>> {
    Ok(Json(workers(&app).await?))
}
