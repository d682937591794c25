//! OpenTelemetry (cargo feature `otel`): the runtime's tracing spans exported over OTLP, and
//! the trace of the code that enqueued a job continued by the handler that runs it.
//!
//! The runtime already describes its work with `tracing` spans (a worker's `run` span per
//! attempt, `ack` per batch); [`otlp_layer`] turns those into OpenTelemetry spans sent to an
//! OTLP/HTTP collector. A job crosses processes through the store, so the trace context goes
//! with it: at enqueue time the current span's context is written into the job's metadata as a
//! W3C `traceparent` (and `tracestate` when set), and the worker makes the attempt's `run` span
//! a child of it. A trace viewer then shows the request that enqueued the job and every attempt
//! that ran it as one trace. Metadata that already holds a `traceparent` keeps it (a producer
//! may set its own), and nothing is added when there is no active trace.

use std::collections::HashMap;

use flexiq_core::{EnqueueOptions, Job};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::{OpenTelemetryLayer, OpenTelemetrySpanExt};

use crate::error::{Error, Result};

/// The metadata keys the trace context travels under (W3C Trace Context header names).
pub const TRACE_KEYS: [&str; 2] = ["traceparent", "tracestate"];

/// A `tracing` layer that records spans into `provider`'s tracer (named `flexiq`).
pub fn layer<S>(provider: &SdkTracerProvider) -> OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_opentelemetry::layer().with_tracer(provider.tracer("flexiq"))
}

/// A tracer provider exporting in batches over OTLP/HTTP (protobuf) to `endpoint` (for
/// example `http://localhost:4318/v1/traces`) as service `service_name`, and a layer
/// recording into it. Keep the provider and call its `shutdown()` before exiting, so the last
/// batch is sent.
pub fn otlp_layer<S>(
    endpoint: &str,
    service_name: &str,
) -> Result<(OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>, SdkTracerProvider)>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use opentelemetry_otlp::WithExportConfig;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint)
        .build()
        .map_err(|e| Error::invalid(format!("otlp exporter for {endpoint} cannot be built: {e}")))?;
    let resource = opentelemetry_sdk::Resource::builder().with_service_name(service_name.to_string()).build();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
    Ok((layer(&provider), provider))
}

/// `opts` with the current span's trace context added to its metadata (see the module docs).
pub(crate) fn carry_trace(mut opts: EnqueueOptions) -> EnqueueOptions {
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return opts;
    }
    let mut meta = match opts.metadata.as_deref().map(serde_json::from_str::<serde_json::Value>) {
        None => serde_json::Map::new(),
        Some(Ok(serde_json::Value::Object(m))) => m,
        // Not an object: left for the enqueue's own validation to refuse.
        Some(_) => return opts,
    };
    if meta.contains_key(TRACE_KEYS[0]) {
        return opts;
    }
    let mut carrier = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    for (k, v) in carrier {
        meta.insert(k, serde_json::Value::String(v));
    }
    opts.metadata = Some(serde_json::Value::Object(meta).to_string());
    opts
}

/// Makes `span` a child of the trace context `job`'s metadata carries, if any.
pub(crate) fn adopt_trace(span: &tracing::Span, job: &Job) {
    let Some(meta) = job.metadata.as_deref() else { return };
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(meta) else { return };
    let carrier: HashMap<String, String> = TRACE_KEYS
        .iter()
        .filter_map(|k| m.get(*k).and_then(|v| v.as_str()).map(|v| (k.to_string(), v.to_string())))
        .collect();
    if carrier.is_empty() {
        return;
    }
    let cx = TraceContextPropagator::new().extract(&carrier);
    if cx.span().span_context().is_valid() {
        // Fails only when the span is disabled or has no OpenTelemetry layer: nothing to adopt.
        let _ = span.set_parent(cx);
    }
}
