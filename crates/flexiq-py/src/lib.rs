//! `flexiq._flexiq`: the native half of flexiq's Python SDK.
//!
//! A thin pyo3 layer over `flexiq-runtime`: it parses Python arguments, calls the runtime
//! with the GIL released and maps engine errors to the exception classes of
//! `flexiq.exceptions`. It holds no SQL, no retry logic and no state-machine logic; the
//! Python-facing API (tasks, serialization, async twins, the worker CLI) lives in the pure
//! Python package beside it (`python/flexiq`).

mod args;
mod context;
mod convert;
mod errors;
mod flow;
mod handler_threads;
mod json;
mod options;
mod queue;
mod runtime;
mod schedule;
mod worker;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The contract level this build speaks (the storage floor may not exceed it).
#[pyfunction]
fn contract_level() -> u32 {
    flexiq_core::CONTRACT_LEVEL
}

/// The setting prefixes the runtime owns.
#[pyfunction]
fn reserved_setting_prefixes() -> Vec<&'static str> {
    flexiq_core::reserved_setting_prefixes().to_vec()
}

/// Checks a rate limit (`"N/s"`, `"N/m"`, `"N/h"`) and returns it normalised.
#[pyfunction]
fn parse_rate_limit(rate_limit: &str) -> PyResult<String> {
    flexiq_core::RateLimit::parse(rate_limit).map(|r| r.to_string()).map_err(|e| errors::to_py_err(e.into()))
}

/// Runs the `flexiq` command line with `args` (the first is the program name) in this
/// process, with the GIL released; returns its exit code.
#[pyfunction]
fn cli_main(py: Python<'_>, args: Vec<String>) -> i32 {
    py.detach(|| flexiq_cli::run_cli(args))
}

/// The native module.
#[pymodule]
fn _flexiq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<queue::NativeQueue>()?;
    m.add_class::<queue::PartialIter>()?;
    m.add_class::<queue::EventIter>()?;
    m.add_class::<queue::NativeWorkflowJobs>()?;
    m.add_class::<context::NativeJobContext>()?;
    m.add_class::<worker::NativeWorker>()?;
    m.add_function(wrap_pyfunction!(contract_level, m)?)?;
    m.add_function(wrap_pyfunction!(reserved_setting_prefixes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_limit, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add("MAX_EVENTS_BLOCK_MS", flexiq_core::events::MAX_EVENTS_BLOCK_MS)?;
    let kinds: Vec<&str> = flexiq_core::EventKind::BUILT_IN.iter().map(|k| k.as_str()).collect();
    m.add("EVENT_KINDS", PyTuple::new(m.py(), kinds)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
