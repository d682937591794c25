//! The JSON API under `/api/v1` and its OpenAPI document.
//!
//! Routes are registered through `utoipa-axum`'s [`OpenApiRouter`], which takes each handler's
//! `#[utoipa::path]` description along with it: the document served at
//! `/api/v1/openapi.json` is built from the same list that mounts the routes, so the two cannot
//! drift apart.

pub mod admin;
pub mod dead;
pub mod jobs;
pub mod metrics;
pub mod model;
pub mod queues;
pub mod session;
pub mod webhooks;

use axum::Router;
use utoipa::openapi::OpenApi as OpenApiDoc;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ErrorBody;
use crate::state::AppState;

/// Where the API is mounted.
pub const API_PREFIX: &str = "/api/v1";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "flexiq dashboard API",
        description = "Operate a flexiq namespace over HTTP. Authenticate with `Authorization: Bearer fqd_...` \
            or a session cookie from `POST /api/v1/auth/login`; cookie-authenticated writes must send the \
            session's CSRF token in `x-csrf-token`. Errors are `{\"error\": {\"code\", \"message\"}}`. \
            Timestamps are Unix ms."
    ),
    components(schemas(ErrorBody)),
    tags(
        (name = "queues", description = "Counts and queue controls"),
        (name = "jobs", description = "Listing, detail, graph, replay and cancel"),
        (name = "dead letters", description = "Triage, retry, delete, purge"),
        (name = "retention", description = "Effective windows and dry-run"),
        (name = "settings", description = "Deployment settings (runtime-owned prefixes hidden)"),
        (name = "workers", description = "Live workers"),
        (name = "metrics", description = "Task metrics"),
        (name = "events", description = "The events stream"),
        (name = "webhooks", description = "Hooks (secrets never returned) and their delivery logs"),
        (name = "auth", description = "Sessions")
    )
)]
struct ApiDoc;

/// The API routes (already under `/api/v1`) and the OpenAPI document describing them.
pub fn router() -> (Router<AppState>, OpenApiDoc) {
    let api = OpenApiRouter::new()
        .routes(routes!(queues::get_stats))
        .routes(routes!(queues::list_queues))
        .routes(routes!(queues::get_queue))
        .routes(routes!(queues::pause_queue))
        .routes(routes!(queues::resume_queue))
        .routes(routes!(queues::set_rate_limit))
        .routes(routes!(queues::set_concurrency))
        .routes(routes!(jobs::list_jobs))
        .routes(routes!(jobs::get_job))
        .routes(routes!(jobs::get_job_dag))
        .routes(routes!(jobs::replay_job))
        .routes(routes!(jobs::cancel_job))
        .routes(routes!(dead::list_dead))
        .routes(routes!(dead::count_dead_by_task))
        .routes(routes!(dead::retry_dead))
        .routes(routes!(dead::delete_dead))
        .routes(routes!(dead::purge_dead))
        .routes(routes!(admin::get_retention))
        .routes(routes!(admin::list_settings))
        .routes(routes!(admin::get_setting, admin::put_setting, admin::delete_setting))
        .routes(routes!(admin::list_workers))
        .routes(routes!(metrics::get_task_metrics))
        .routes(routes!(metrics::get_timeseries))
        .routes(routes!(metrics::list_events))
        .routes(routes!(webhooks::list_webhooks))
        .routes(routes!(webhooks::get_webhook, webhooks::put_webhook, webhooks::delete_webhook))
        .routes(routes!(webhooks::list_deliveries))
        .routes(routes!(session::get_session))
        .routes(routes!(session::login))
        .routes(routes!(session::logout));
    // The document (title, description, tags) is the outer router's: nesting keeps the outer
    // document's info and adds the nested routes' paths and schemas to it.
    OpenApiRouter::with_openapi(ApiDoc::openapi()).nest(API_PREFIX, api).split_for_parts()
}
