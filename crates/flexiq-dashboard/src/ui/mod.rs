//! The web pages: server-rendered HTML (maud) with a small hand-written script for the buttons
//! and for live updates, no build step.
//!
//! Every page reads through the same functions as the API, so a page and its JSON twin show
//! the same numbers. Buttons call the JSON API with the session's CSRF token
//! (`assets/app.js`); counts marked `data-count` refresh every two seconds from
//! `/api/v1/stats` without reloading.

pub mod layout;
pub mod pages;
pub mod svg;

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::html;

use crate::error::ApiError;
use crate::state::AppState;

const APP_JS: &str = include_str!("../../assets/app.js");
const APP_CSS: &str = include_str!("../../assets/app.css");

/// The page routes and their assets.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(pages::overview::overview))
        .route("/login", get(pages::login::login))
        .route("/queues", get(pages::queues::queues))
        .route("/jobs", get(pages::jobs::jobs))
        .route("/jobs/{id}", get(pages::jobs::job))
        .route("/dead-letters", get(pages::dead::dead_letters))
        .route("/retention", get(pages::admin::retention))
        .route("/settings", get(pages::admin::settings))
        .route("/workers", get(pages::admin::workers))
        .route("/webhooks", get(pages::webhooks::webhooks))
        .route("/assets/{name}", get(asset))
}

async fn asset(Path(name): Path<String>) -> Response {
    let (body, mime) = match name.as_str() {
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "app.css" => (APP_CSS, "text/css; charset=utf-8"),
        _ => return not_found(&format!("/assets/{name}")).into_response(),
    };
    ([(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// A page that failed: the API error's status with a short HTML explanation.
#[derive(Debug)]
pub struct PageError(pub ApiError);

impl From<ApiError> for PageError {
    fn from(e: ApiError) -> Self {
        PageError(e)
    }
}

impl From<flexiq::Error> for PageError {
    fn from(e: flexiq::Error) -> Self {
        PageError(e.into())
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let body = html! {
            (maud::DOCTYPE)
            html { head { title { "flexiq: error" } link rel="stylesheet" href="/assets/app.css"; }
            body { main.error {
                h1 { (self.0.status.as_u16()) " " (self.0.status.canonical_reason().unwrap_or("")) }
                p { (self.0.message) }
                p { a href="/" { "Back to the overview" } }
            } } }
        };
        (self.0.status, body).into_response()
    }
}

/// The result of a page handler.
pub type PageResult = Result<maud::Markup, PageError>;

/// The 404 page for `path`.
pub fn not_found(path: &str) -> PageError {
    PageError(ApiError::new(StatusCode::NOT_FOUND, "no_route", format!("no page {path}")))
}
