//! The `/metrics` HTTP endpoint a worker serves on its `metrics_bind` address.
//!
//! A worker has no dashboard in front of it, yet it is the only process that knows its handler
//! latencies: so any worker can answer Prometheus itself, with the store-level gauges of its
//! namespace and its own in-process metrics in one document. [`metrics_router`] is the same
//! route for a process that already runs an axum server.

use std::net::SocketAddr;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::prometheus::{render_with, PrometheusOptions, CONTENT_TYPE};
use super::WorkerMetrics;
use crate::error::{Error, Result};
use crate::queue::Queue;

#[derive(Clone)]
struct Scrape {
    queue: Queue,
    worker: Option<WorkerMetrics>,
    opts: PrometheusOptions,
}

async fn scrape(State(s): State<Scrape>) -> Response {
    match render_with(&s.queue, &s.opts, s.worker.as_ref()).await {
        Ok(body) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], body).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, namespace = s.queue.namespace(), "metrics scrape failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("metrics of namespace {} unavailable: {e}\n", s.queue.namespace()),
            )
                .into_response()
        }
    }
}

/// A router answering `GET /metrics` with `queue`'s store-level metrics read with `opts`,
/// plus `worker`'s in-process metrics when given. A failed store read answers 503 with the
/// error as text.
pub fn metrics_router(queue: Queue, worker: Option<WorkerMetrics>, opts: PrometheusOptions) -> Router {
    Router::new().route("/metrics", get(scrape)).with_state(Scrape { queue, worker, opts })
}

/// A running metrics endpoint (see [`serve_metrics`]).
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    stop: CancellationToken,
    join: JoinHandle<()>,
}

impl MetricsServer {
    /// The address it listens on (the port the system chose when bound to port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting scrapes and waits for the server task to end.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.join.await;
    }
}

/// Binds `bind` and serves [`metrics_router`] on it until [`MetricsServer::shutdown`]. A bad
/// window, or an address that cannot be bound, is an error naming the address.
pub async fn serve_metrics(
    bind: SocketAddr,
    queue: Queue,
    worker: Option<WorkerMetrics>,
    opts: PrometheusOptions,
) -> Result<MetricsServer> {
    opts.validate()?;
    let listener = tokio::net::TcpListener::bind(bind).await.map_err(|e| {
        Error::Core(flexiq_core::Error::backend(format!("metrics endpoint could not bind {bind}: {e}")))
    })?;
    let addr = listener.local_addr().map_err(|e| {
        Error::Core(flexiq_core::Error::backend(format!("metrics endpoint on {bind} has no address: {e}")))
    })?;
    let stop = CancellationToken::new();
    let app = metrics_router(queue, worker, opts);
    let until = stop.clone();
    let join = tokio::spawn(async move {
        let served =
            axum::serve(listener, app).with_graceful_shutdown(async move { until.cancelled().await });
        if let Err(e) = served.await {
            tracing::warn!(error = %e, %addr, "metrics endpoint stopped");
        }
    });
    tracing::info!(%addr, "serving metrics");
    Ok(MetricsServer { addr, stop, join })
}
