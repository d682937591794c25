//! Dead letters: triage (listing, by task), retry, delete and purges by task or age.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::jobs::DEFAULT_PAGE;
use super::model::{Affected, DeadLetterPage, DeadLetterView, NewJobId};
use crate::error::{ApiError, ApiJson, ApiQuery, ApiResult, ErrorBody};
use crate::state::AppState;

/// Paging of the dead-letter listing: keyset (`after`) over every task, or offset (`offset`)
/// within one `task`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeadQuery {
    /// Only this task (then `offset` pages).
    pub task: Option<String>,
    /// Rows per page, 1 to 10,000 (default 50).
    pub limit: Option<i64>,
    /// The previous page's `next_cursor` (all tasks).
    pub after: Option<String>,
    /// Rows to skip (with `task`).
    pub offset: Option<i64>,
}

/// Reads one page of dead letters.
pub async fn dead_page(app: &AppState, query: &DeadQuery) -> ApiResult<DeadLetterPage> {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    let task = query.task.as_deref().map(str::trim).filter(|t| !t.is_empty());
    let after = query.after.as_deref().filter(|a| !a.is_empty());
    match task {
        Some(task) => {
            if after.is_some() {
                return Err(ApiError::invalid("after pages every task: with task, page with offset"));
            }
            let offset = query.offset.unwrap_or(0);
            let rows = app.queue.dead_letters_by_task(task, limit, offset).await?;
            Ok(DeadLetterPage { items: rows.iter().map(DeadLetterView::from).collect(), next_cursor: None })
        }
        None => {
            if query.offset.is_some() {
                return Err(ApiError::invalid("offset pages one task: without task, page with after"));
            }
            let page = app.queue.dead_letters_after(limit, after).await?;
            Ok(DeadLetterPage {
                items: page.items.iter().map(DeadLetterView::from).collect(),
                next_cursor: page.next_cursor,
            })
        }
    }
}

/// Dead letters, newest first.
#[utoipa::path(get, path = "/dead-letters", tag = "dead letters", params(DeadQuery),
    responses((status = 200, body = DeadLetterPage), (status = 400, body = ErrorBody)))]
pub async fn list_dead(
    State(app): State<AppState>,
    ApiQuery(query): ApiQuery<DeadQuery>,
) -> ApiResult<Json<DeadLetterPage>> {
    Ok(Json(dead_page(&app, &query).await?))
}

/// Most dead letters read to count them by task.
const TRIAGE_SCAN: i64 = 10_000;

/// Dead letters per task, over the newest 10,000: where to look first.
pub async fn dead_by_task(app: &AppState) -> ApiResult<BTreeMap<String, u64>> {
    let mut counts = BTreeMap::new();
    for d in app.queue.dead_letters(TRIAGE_SCAN, 0).await? {
        *counts.entry(d.task_name).or_insert(0) += 1;
    }
    Ok(counts)
}

/// Dead letters per task (over the newest 10,000).
#[utoipa::path(get, path = "/dead-letters/by-task", tag = "dead letters",
    responses((status = 200, body = BTreeMap<String, u64>)))]
pub async fn count_dead_by_task(State(app): State<AppState>) -> ApiResult<Json<BTreeMap<String, u64>>> {
    Ok(Json(dead_by_task(&app).await?))
}

/// Re-enqueues a dead letter's job as a new job and removes the entry.
#[utoipa::path(post, path = "/dead-letters/{id}/retry", tag = "dead letters",
    params(("id" = String, Path, description = "Dead-letter id (not the job id)")),
    responses((status = 200, body = NewJobId), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn retry_dead(State(app): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<NewJobId>> {
    let job = app.queue.retry_dead(&id).await?;
    Ok(Json(NewJobId { job_id: job.to_string() }))
}

/// Discards one dead letter.
#[utoipa::path(delete, path = "/dead-letters/{id}", tag = "dead letters",
    params(("id" = String, Path, description = "Dead-letter id")),
    responses((status = 204), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete_dead(State(app): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    if app.queue.delete_dead(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("dead letter {id} not found")))
    }
}

/// What to purge: every dead letter of one task, or those older than an age. Exactly one.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeBody {
    /// Every dead letter of this task.
    pub task: Option<String>,
    /// Dead letters that failed more than this many seconds ago.
    pub older_than_secs: Option<i64>,
}

/// Deletes dead letters by task or by age; answers how many went.
#[utoipa::path(post, path = "/dead-letters/purge", tag = "dead letters", request_body = PurgeBody,
    responses((status = 200, body = Affected), (status = 400, body = ErrorBody)))]
pub async fn purge_dead(
    State(app): State<AppState>,
    ApiJson(body): ApiJson<PurgeBody>,
) -> ApiResult<Json<Affected>> {
    let count = match (body.task.as_deref(), body.older_than_secs) {
        (Some(task), None) => app.queue.purge_dead_by_task(task).await?,
        (None, Some(secs)) => app.queue.purge_dead(secs).await?,
        _ => return Err(ApiError::invalid("purge needs exactly one of task and older_than_secs")),
    };
    Ok(Json(Affected { count }))
}
