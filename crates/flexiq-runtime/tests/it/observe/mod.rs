//! Metrics export: the Prometheus rendering of a queue's store-level metrics and a worker's
//! `/metrics` endpoint, each parsed back with a Prometheus text-format parser; with feature
//! `otel`, a producer's trace continued by the handler, captured by an in-memory exporter.

#[cfg(feature = "otel")]
mod otel;
mod prom;
mod store;
mod worker_endpoint;
