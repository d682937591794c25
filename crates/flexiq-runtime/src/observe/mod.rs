//! Observability: what a queue and its workers expose to monitoring.
//!
//! Operators watch a job queue from Prometheus rather than by calling its API, so the numbers
//! the Queue API answers (counts by status, per-execution metric rows) and the numbers only a
//! running worker knows (handler latencies, claim batch sizes, lost leases) are rendered in the
//! Prometheus / OpenMetrics text format here, in one place, for the dashboard's `/metrics` and
//! for a worker's own `metrics_bind` endpoint alike.
//!
//! - [`prometheus`] renders a [`crate::Queue`]'s store-level gauges, plus a worker's
//!   in-process metrics when given them.
//! - [`WorkerMetrics`] is what a worker records while it runs (counters and histograms that
//!   only grow, so `rate()` works on them).
//! - [`serve_metrics`] serves both over HTTP (axum), as a worker does when its config has a
//!   `metrics_bind` address.
//! - `otel` (cargo feature `otel`) exports the runtime's tracing spans over OTLP and carries a
//!   producer's trace context to the handler in the job's metadata.

#[cfg(feature = "otel")]
pub mod otel;
pub mod prometheus;
mod server;
mod worker;

pub use server::{metrics_router, serve_metrics, MetricsServer};
pub(crate) use worker::Outcome;
pub use worker::WorkerMetrics;

/// `opts` carrying the current trace context in its metadata (feature `otel`; as it is without).
pub(crate) fn carry_trace(opts: flexiq_core::EnqueueOptions) -> flexiq_core::EnqueueOptions {
    #[cfg(feature = "otel")]
    let opts = otel::carry_trace(opts);
    opts
}

/// Makes an attempt's span a child of the trace its job carries (feature `otel`; no-op without).
pub(crate) fn adopt_trace(span: &tracing::Span, job: &flexiq_core::Job) {
    #[cfg(feature = "otel")]
    otel::adopt_trace(span, job);
    #[cfg(not(feature = "otel"))]
    let _ = (span, job);
}
