//! The bodies of flexiq-core's fuzz targets, written once.
//!
//! Each module's `check(&[u8])` feeds one parser (or one decoder of stored bytes) an input and
//! asserts what must hold for every input: no panic, and the round-trip and re-validation
//! properties of that parser. Three callers share these bodies, so a property is stated once:
//! the cargo-fuzz targets in `fuzz/fuzz_targets/` (nightly, not run in CI), their proptest twins
//! in `tests/fuzz_twins.rs` (stable, run in CI) and the replay of every corpus file kept in
//! `fuzz/corpus/<target>/`, so an input that once crashed stays fixed.

pub(crate) mod cron;
pub(crate) mod cursor;
pub(crate) mod enqueue_options;
pub(crate) mod events;
pub(crate) mod fairness;
pub(crate) mod flow;
pub(crate) mod input;
pub(crate) mod job_id;
pub(crate) mod metadata;
pub(crate) mod metrics;
pub(crate) mod names;
pub(crate) mod rate;
pub(crate) mod scheduler_spec;
pub(crate) mod settings;
pub(crate) mod stored_records;

/// A target's body: panics when the input breaks a property.
pub(crate) type Check = fn(&[u8]);

/// Every fuzz target by name (its file in `fuzz/fuzz_targets/` and its corpus directory).
pub(crate) const TARGETS: [(&str, Check); 14] = [
    ("cron", cron::check),
    ("cursor", cursor::check),
    ("enqueue_options", enqueue_options::check),
    ("events", events::check),
    ("fairness", fairness::check),
    ("flow", flow::check),
    ("job_id", job_id::check),
    ("metadata", metadata::check),
    ("metrics", metrics::check),
    ("names", names::check),
    ("rate", rate::check),
    ("scheduler_spec", scheduler_spec::check),
    ("settings", settings::check),
    ("stored_records", stored_records::check),
];
