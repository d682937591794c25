//! OpenTelemetry: spans exported over OTLP/HTTP to a collector on loopback. (The trace carried
//! from producer to handler is tested in its own binary, `tests/otel.rs`.)

use tracing_subscriber::layer::SubscriberExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_are_exported_over_otlp_http() {
    use axum::body::Bytes;
    use axum::http::HeaderMap;
    use std::sync::Arc;

    let got: Arc<parking_lot::Mutex<Vec<(String, Bytes)>>> = Default::default();
    let sink = got.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let sink = sink.clone();
            async move {
                let ct =
                    headers.get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
                sink.lock().push((ct, body));
                ""
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let endpoint = format!("http://{addr}/v1/traces");
    let (otel, provider) = flexiq_runtime::observe::otel::otlp_layer(&endpoint, "flexiq-otlp-test").unwrap();
    {
        let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(otel));
        tracing::info_span!("exported-span").in_scope(|| tracing::info!("inside"));
    }
    // The batch exporter's HTTP client blocks: flush off the async threads.
    tokio::task::spawn_blocking(move || provider.force_flush()).await.unwrap().unwrap();

    let got = got.lock().clone();
    assert_eq!(got.len(), 1, "one OTLP export request");
    let (ct, body) = &got[0];
    assert_eq!(ct, "application/x-protobuf");
    let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    assert!(
        has(b"exported-span") && has(b"flexiq-otlp-test"),
        "the span and the service name are in the export"
    );
}
