//! OpenTelemetry (feature `otel`): a handler's `run` span continues the trace of the code that
//! enqueued its job, captured by an in-memory exporter.
//!
//! A binary of its own: the test installs the process-wide tracing subscriber, which no other
//! test may share.

use std::time::Duration;

use flexiq_runtime::observe::otel::{layer, TRACE_KEYS};
use flexiq_runtime::{connect, ConnectOptions, EnqueueOptions, Worker, WorkerConfig};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

#[tokio::test]
async fn a_handler_span_has_the_producer_trace_id() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    // The process-wide subscriber: the worker's spans are recorded on whichever thread runs them.
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer(&provider))).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("q.db").display());
    let q = connect(&url, ConnectOptions::default()).await.unwrap();
    let producer = tracing::info_span!("produce");
    let trace_id = producer.context().span().span_context().trace_id();
    let id = q
        .enqueue("traced", b"".to_vec(), EnqueueOptions::default())
        .instrument(producer.clone())
        .await
        .unwrap();
    let untraced = q.enqueue("traced", b"".to_vec(), EnqueueOptions::default()).await.unwrap();
    drop(producer);

    let meta = q.get_job(id.as_str()).await.unwrap().unwrap().metadata.unwrap();
    assert!(meta.contains(TRACE_KEYS[0]) && meta.contains(&trace_id.to_string()), "{meta}");
    assert!(q.get_job(untraced.as_str()).await.unwrap().unwrap().metadata.is_none(), "no trace, no metadata");

    let mut worker =
        Worker::new(q.clone(), WorkerConfig { maintenance: None, ..Default::default() }).unwrap();
    worker.register("traced", |_| async { Ok(None) }).unwrap();
    let running = worker.start();
    for job in [&id, &untraced] {
        q.result(job.as_str(), Some(Duration::from_secs(10)), None).await.unwrap();
    }
    running.shutdown().await.unwrap();
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let runs: Vec<_> = spans.iter().filter(|s| s.name == "run").collect();
    assert_eq!(
        runs.len(),
        2,
        "one run span per attempt: {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let continued: Vec<_> = runs.iter().filter(|s| s.span_context.trace_id() == trace_id).collect();
    assert_eq!(continued.len(), 1, "exactly the traced job's attempt joins the producer's trace");
    let produce = spans.iter().find(|s| s.name == "produce").expect("the producer span was exported");
    assert_eq!(continued[0].parent_span_id, produce.span_context.span_id());
}
