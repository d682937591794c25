//! Jobs: the keyset listing with its filters, one job with its history, its dependency graph,
//! replay and cancel.

use axum::extract::{Path, State};
use axum::Json;
use flexiq::core::store::PartialsRequest;
use flexiq::{JobFilter, JobId, JobStatus};
use serde::Deserialize;
use utoipa::IntoParams;

use super::model::{
    AttemptError, Bytes, DagEdgeView, DagNodeView, DagView, JobDetail, JobPage, JobSummary, LogLine,
    NewJobId, PartialView,
};
use crate::error::{ApiError, ApiQuery, ApiResult, ErrorBody};
use crate::state::AppState;

/// Rows per page when `limit` is not given.
pub const DEFAULT_PAGE: i64 = 50;
/// Partial results shown with a job.
const PARTIALS_SHOWN: u32 = 100;

/// Filters and paging of the job listing. Empty values count as absent, so an HTML form's
/// blank fields can be sent as they are.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct JobsQuery {
    /// Only this status (`pending`, `running`, `completed`, `failed`, `dead`, `cancelled`,
    /// `suspended`, `waiting`).
    pub status: Option<String>,
    /// Only this queue.
    pub queue: Option<String>,
    /// Only this task.
    pub task: Option<String>,
    /// Metadata text contains this.
    pub metadata: Option<String>,
    /// Last error contains this.
    pub error: Option<String>,
    /// Created at or after (Unix ms).
    pub created_after: Option<i64>,
    /// Created before (Unix ms).
    pub created_before: Option<i64>,
    /// Rows per page, 1 to 10,000 (default 50).
    pub limit: Option<i64>,
    /// The previous page's `next_cursor`.
    pub after: Option<String>,
}

fn present(v: &Option<String>) -> Option<String> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

impl JobsQuery {
    /// The engine filter these parameters describe.
    pub fn filter(&self) -> ApiResult<JobFilter> {
        let status = present(&self.status).map(|s| s.parse::<JobStatus>()).transpose()?;
        Ok(JobFilter {
            status,
            queue: present(&self.queue),
            task: present(&self.task),
            metadata_contains: present(&self.metadata),
            error_contains: present(&self.error),
            created_after: self.created_after,
            created_before: self.created_before,
        })
    }

    /// The cursor, when one was given.
    pub fn cursor(&self) -> Option<String> {
        present(&self.after)
    }
}

/// Reads one page of jobs matching `query`.
pub async fn jobs_page(app: &AppState, query: &JobsQuery) -> ApiResult<JobPage> {
    let filter = query.filter()?;
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    let cursor = query.cursor();
    let page = app.queue.list_jobs_filtered_after(&filter, limit, cursor.as_deref()).await?;
    Ok(JobPage { items: page.items.iter().map(JobSummary::from).collect(), next_cursor: page.next_cursor })
}

/// Jobs, newest first, keyset-paged: pass `next_cursor` back as `after`. A cursor is bound to
/// its filter: reusing it with other filters, or sending garbage, is 400.
#[utoipa::path(get, path = "/jobs", tag = "jobs", params(JobsQuery),
    responses((status = 200, body = JobPage), (status = 400, body = ErrorBody)))]
pub async fn list_jobs(
    State(app): State<AppState>,
    ApiQuery(query): ApiQuery<JobsQuery>,
) -> ApiResult<Json<JobPage>> {
    Ok(Json(jobs_page(&app, &query).await?))
}

fn parse_job_id(id: &str) -> ApiResult<JobId> {
    Ok(JobId::parse(id)?)
}

/// A job with its failed attempts, logs and partial results.
pub async fn job_detail(app: &AppState, id: &str) -> ApiResult<JobDetail> {
    let job_id = parse_job_id(id)?;
    let q = &app.queue;
    let job = q.get_job(id).await?.ok_or_else(|| ApiError::not_found(format!("job {id} not found")))?;
    let errors = q
        .get_job_errors(id)
        .await?
        .into_iter()
        .map(|e| AttemptError { attempt: e.attempt, error: e.error, failed_at: e.failed_at })
        .collect();
    let logs = q
        .job_logs(id)
        .await?
        .into_iter()
        .map(|l| LogLine { level: l.level, message: l.message, logged_at: l.logged_at })
        .collect();
    let partials = q
        .store()
        .partials(PartialsRequest { id: job_id, after_seq: 0, limit: PARTIALS_SHOWN })
        .await
        .map_err(flexiq::Error::from)?
        .into_iter()
        .map(|p| PartialView { seq: p.seq, data: Bytes::of(&p.data), published_at: p.published_at })
        .collect();
    Ok(JobDetail { job: (&job).into(), errors, logs, partials })
}

/// One job with its failed attempts, logs and partial results. 400 for a malformed id, 404
/// for an id no job carries.
#[utoipa::path(get, path = "/jobs/{id}", tag = "jobs",
    params(("id" = String, Path, description = "Job id (UUID)")),
    responses((status = 200, body = JobDetail), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_job(State(app): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<JobDetail>> {
    Ok(Json(job_detail(&app, &id).await?))
}

/// The dependency graph around a job.
pub async fn job_dag(app: &AppState, id: &str) -> ApiResult<DagView> {
    parse_job_id(id)?;
    let dag = app.queue.job_dag(id).await?;
    Ok(DagView {
        nodes: dag
            .nodes
            .into_iter()
            .map(|n| DagNodeView { id: n.id, task: n.task, status: n.status.as_str().to_string() })
            .collect(),
        edges: dag.edges.into_iter().map(|e| DagEdgeView { from: e.from, to: e.to }).collect(),
    })
}

/// The jobs reachable from a job through dependency edges, both ways (edges point
/// dependency -> dependent).
#[utoipa::path(get, path = "/jobs/{id}/dag", tag = "jobs",
    params(("id" = String, Path, description = "Job id (UUID)")),
    responses((status = 200, body = DagView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_job_dag(State(app): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<DagView>> {
    Ok(Json(job_dag(&app, &id).await?))
}

/// Enqueues a copy of a job (fresh id and retry budget) and returns the new id.
#[utoipa::path(post, path = "/jobs/{id}/replay", tag = "jobs",
    params(("id" = String, Path, description = "Job id (UUID)")),
    responses((status = 200, body = NewJobId), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn replay_job(State(app): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<NewJobId>> {
    parse_job_id(&id)?;
    let new_id = app.queue.replay(&id).await?;
    Ok(Json(NewJobId { job_id: new_id.to_string() }))
}

/// Cancels a job: one not yet running is cancelled outright, a running one is asked to stop
/// at its worker's next heartbeat. 409 when the job has already finished.
#[utoipa::path(post, path = "/jobs/{id}/cancel", tag = "jobs",
    params(("id" = String, Path, description = "Job id (UUID)")),
    responses((status = 200, body = JobSummary), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn cancel_job(State(app): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<JobSummary>> {
    parse_job_id(&id)?;
    if !app.queue.request_cancel(&id).await? {
        return Err(ApiError::conflict(format!("job {id} has already finished: nothing to cancel")));
    }
    let job =
        app.queue.get_job(&id).await?.ok_or_else(|| ApiError::not_found(format!("job {id} not found")))?;
    Ok(Json(JobSummary::from(&job)))
}
