//! `NativeQueue`: the Python handle on a runtime [`flexiq_runtime::Queue`], with opening and
//! closing. Its calls live beside it, one file per area with the runtime's `queue/` names
//! (`jobs`, `listing`, `control`, `dead`, `stats`, `admin`, `clean`, `reschedule`, `flows`,
//! `dedup`, `schedulers`, `events`, `wait`, `workflow`), so an operation sits in the file of the
//! same name on both sides. `workflow` also holds the handle class of the workflow view,
//! `NativeWorkflowJobs`; `events` the open events stream, `EventIter`.
//!
//! Every parameter is read through `crate::args` (named for it, so a wrong type, a `bool` for a
//! count or a number no i64 holds is refused naming it) and handed to the runtime, which checks
//! the values (limits, offsets, durations as `i64`, so a negative number is an
//! `InvalidArgument`); nothing here decides job semantics.

mod admin;
mod clean;
mod control;
mod dead;
mod dedup;
mod events;
mod flows;
mod jobs;
mod listing;
mod reschedule;
mod schedulers;
mod stats;
mod wait;
mod workflow;

use flexiq_core::{Retention, RetentionTable};
use flexiq_runtime::{ConnectOptions, Durability};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args::{self, FromArg};
use crate::errors::invalid;
use crate::runtime::block_on;

pub(crate) use events::EventIter;
pub(crate) use wait::{millis, PartialIter};
pub(crate) use workflow::NativeWorkflowJobs;

/// A queue handle on one namespace of one store. Thread-safe; cheap to share.
#[pyclass(module = "flexiq._flexiq", frozen)]
pub(crate) struct NativeQueue {
    pub(crate) inner: flexiq_runtime::Queue,
}

fn durability(s: &str) -> PyResult<Durability> {
    match s {
        "normal" => Ok(Durability::Normal),
        "full" => Ok(Durability::Full),
        other => Err(invalid(format!("durability {other:?} must be \"normal\" or \"full\""))),
    }
}

/// Retention windows (seconds) from a dict keyed by table name; `None` keeps a table forever.
pub(crate) fn retention_from(d: &Bound<'_, PyDict>) -> PyResult<Retention> {
    let mut r = Retention::default();
    for (k, v) in d.iter() {
        let key = String::from_arg("a retention table", &k)?;
        let table = RetentionTable::parse(&key).map_err(|e| crate::errors::to_py_err(e.into()))?;
        let Some(secs) = Option::<i64>::from_arg(&format!("retention window {key}"), &v)? else {
            continue;
        };
        if secs <= 0 {
            return Err(invalid(format!("retention window for {key} must be 1 s or more, got {secs}")));
        }
        r.set(table, Some(secs as u64));
    }
    Ok(r)
}

#[pymethods]
impl NativeQueue {
    /// Opens the store `url` names (a file path, `sqlite://`, `postgres://`, `redis://`).
    #[new]
    #[pyo3(
        signature = (url, *, namespace=String::from("default"), auto_migrate=true, durability=String::from("normal"), max_pending=None, retention=None),
        text_signature = "(url, *, namespace='default', auto_migrate=True, durability='normal', max_pending=None, retention=None)"
    )]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = args::url)] url: String,
        #[pyo3(from_py_with = args::namespace)] namespace: String,
        #[pyo3(from_py_with = args::auto_migrate)] auto_migrate: bool,
        #[pyo3(from_py_with = args::durability)] durability: String,
        #[pyo3(from_py_with = args::max_pending)] max_pending: Option<i64>,
        #[pyo3(from_py_with = args::retention)] retention: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let max_pending = match max_pending {
            Some(n) if n <= 0 => return Err(invalid(format!("max_pending {n} must be at least 1"))),
            n => n.map(|n| n as u64),
        };
        let opts = ConnectOptions {
            namespace,
            auto_migrate,
            durability: self::durability(&durability)?,
            max_pending,
            retention: retention.as_ref().map(retention_from).transpose()?,
            ..Default::default()
        };
        let inner = block_on(py, async move { flexiq_runtime::connect(&url, opts).await })?;
        Ok(NativeQueue { inner })
    }

    /// The namespace every call is scoped to.
    #[getter]
    fn namespace(&self) -> String {
        self.inner.namespace().to_string()
    }

    /// `"sqlite"`, `"postgres"` or `"redis"`.
    #[getter]
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }

    /// Releases the store's connections; later calls raise `Closed`.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let q = self.inner.clone();
        block_on(py, async move { q.close().await })
    }
}
