//! Assembling the routes and serving them.
//!
//! One axum [`Router`]: the API and its OpenAPI document, the Prometheus `/metrics`, the pages
//! and their static assets, behind the auth guard and a body-size limit. [`serve`] checks the
//! configuration, refuses an exposed bind with no credential, binds, and returns a handle that
//! stops the server gracefully.

use std::net::SocketAddr;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode, Uri};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use flexiq::observe::prometheus;
use flexiq::Queue;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::api;
use crate::auth::credentials::auth_configured;
use crate::auth::guard::guard;
use crate::config::DashboardConfig;
use crate::error::ApiError;
use crate::state::{AppState, Dashboard};
use crate::ui;

/// The whole application for `app`, ready to serve (with `ConnectInfo<SocketAddr>`).
pub fn app_router(app: AppState) -> Router {
    let (api_routes, doc) = api::router();
    let doc = std::sync::Arc::new(doc);
    let max_body = app.config.max_body_bytes;
    Router::new()
        .merge(api_routes)
        .route("/api/v1/openapi.json", get(move || async move { Json(doc.as_ref().clone()) }))
        .route("/metrics", get(metrics))
        .merge(ui::router())
        .fallback(fallback)
        .layer(from_fn_with_state(app.clone(), guard))
        .layer(DefaultBodyLimit::max(max_body))
        .with_state(app)
}

/// The OpenAPI document of the API (what `/api/v1/openapi.json` serves).
pub fn openapi() -> utoipa::openapi::OpenApi {
    api::router().1
}

async fn metrics(State(app): State<AppState>) -> Response {
    match prometheus::render(&app.queue).await {
        Ok(text) => ([(header::CONTENT_TYPE, prometheus::CONTENT_TYPE)], text).into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

async fn fallback(uri: Uri) -> Response {
    if uri.path().starts_with("/api/") {
        return ApiError::new(StatusCode::NOT_FOUND, "no_route", format!("no api route {}", uri.path()))
            .into_response();
    }
    ui::not_found(uri.path()).into_response()
}

/// A running dashboard server.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
    done: bool,
}

impl ServerHandle {
    /// The address it listens on (the real port when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits until the server ends by itself (only an I/O error ends it; see
    /// [`ServerHandle::shutdown`]). Call it once: after it returns the handle is spent.
    pub async fn wait(&mut self) -> std::io::Result<()> {
        let r = self.join().await;
        self.done = true;
        r
    }

    /// Stops accepting, lets requests in flight finish, and waits.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.join().await
    }

    async fn join(&mut self) -> std::io::Result<()> {
        if self.done {
            return Ok(());
        }
        match (&mut self.task).await {
            Ok(r) => r,
            Err(e) => Err(std::io::Error::other(format!("dashboard server task failed: {e}"))),
        }
    }
}

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The configuration or the store refused.
    #[error("{}", .0.message)]
    Refused(#[from] ApiError),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// Starts serving `queue` as configured; returns once the address is bound.
pub async fn serve(queue: Queue, config: DashboardConfig) -> Result<ServerHandle, ServeError> {
    config.validate()?;
    let auth_required = auth_configured(&queue).await?;
    config.check_exposure(auth_required)?;
    let listener = TcpListener::bind(config.bind)
        .await
        .map_err(|source| ServeError::Bind { addr: config.bind, source })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Bind { addr: config.bind, source })?;
    let app = Dashboard::new(queue, config, auth_required);
    let router = app_router(app);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    tracing::info!(%addr, auth_required, "dashboard listening");
    Ok(ServerHandle { addr, stop: Some(stop), task, done: false })
}
