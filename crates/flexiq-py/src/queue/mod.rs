//! `NativeQueue`: the Python handle on a runtime [`flexiq_runtime::Queue`], with opening,
//! closing and enqueueing. The other calls live beside it, one file per area
//! (`queue_jobs`, `queue_listing`, `queue_ops`, `queue_admin`).
//!
//! Arguments arrive as Python values and are handed to the runtime unchanged where it
//! validates them (limits, offsets, durations as `i64`, so a negative number is an
//! `InvalidArgument` rather than an `OverflowError`); nothing here decides job semantics.

use flexiq_core::{Error as CoreError, ErrorKind, NewJob, Retention, RetentionTable};
use flexiq_runtime::{ConnectOptions, Durability, EnqueueItem, Error};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::{invalid, to_py_err};
use crate::options::enqueue_options;
use crate::runtime::{block_on, runtime};

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

/// Retention windows (seconds) from a dict keyed by table name.
pub(crate) fn retention_from(d: &Bound<'_, PyDict>) -> PyResult<Retention> {
    let mut r = Retention::default();
    for (k, v) in d.iter() {
        let key: String = k.extract()?;
        let table = RetentionTable::parse(&key).map_err(|e| crate::errors::to_py_err(e.into()))?;
        if v.is_none() {
            continue;
        }
        let secs: i64 = v.extract()?;
        if secs <= 0 {
            return Err(invalid(format!("retention window for {key} must be 1 s or more, got {secs}")));
        }
        r.set(table, Some(secs as u64));
    }
    Ok(r)
}

fn opt_u64(what: &str, v: Option<i64>) -> PyResult<Option<u64>> {
    v.map(|n| u64::try_from(n).map_err(|_| invalid(format!("{what} {n} must not be negative")))).transpose()
}

#[pymethods]
impl NativeQueue {
    /// Opens the store `url` names (a file path, `sqlite://`, `postgres://`, `redis://`).
    #[new]
    #[pyo3(signature = (url, *, namespace="default", auto_migrate=true, durability="normal", max_pending=None, retention=None))]
    fn new(
        py: Python<'_>,
        url: &str,
        namespace: &str,
        auto_migrate: bool,
        durability: &str,
        max_pending: Option<i64>,
        retention: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let max_pending = match max_pending {
            Some(n) if n <= 0 => return Err(invalid(format!("max_pending {n} must be at least 1"))),
            n => opt_u64("max_pending", n)?,
        };
        let opts = ConnectOptions {
            namespace: namespace.to_string(),
            auto_migrate,
            durability: self::durability(durability)?,
            max_pending,
            retention: retention.map(retention_from).transpose()?,
            ..Default::default()
        };
        let url = url.to_string();
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

    /// Enqueues one job and returns its id (the existing job's id when `unique_key`
    /// deduplicated it). `options` is a dict in engine units (see `options`).
    #[pyo3(signature = (task, payload, options=None))]
    fn enqueue(
        &self,
        py: Python<'_>,
        task: &str,
        payload: &[u8],
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let opts = enqueue_options(options)?;
        let q = self.inner.clone();
        let payload = payload.to_vec();
        let task = task.to_string();
        block_on(py, async move { q.enqueue(&task, payload, opts).await }).map(|id| id.to_string())
    }

    /// Enqueues a batch in one transaction (all or nothing). Each item is a dict with `task`,
    /// `payload` and `options` (as `enqueue` takes them). Returns the ids in order. A bad item
    /// is named by its index; nothing of the batch is written.
    fn enqueue_many(&self, py: Python<'_>, items: &Bound<'_, PyList>) -> PyResult<Vec<String>> {
        let mut batch = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            batch.push(item_at(i, &item)?);
        }
        let q = self.inner.clone();
        match py.detach(|| runtime().block_on(async move { q.enqueue_many(batch).await })) {
            Ok(ids) => Ok(ids.into_iter().map(|i| i.to_string()).collect()),
            Err(e) if e.kind() == Some(ErrorKind::InvalidArgument) => Err(to_py_err(self.locate(items, e)?)),
            Err(e) => Err(to_py_err(e)),
        }
    }
}

impl NativeQueue {
    /// The batch was refused as invalid: names the first item that is invalid on its own
    /// (validation is repeated only on this error path), else keeps the store's error (an
    /// unknown dependency, say, which names its id).
    fn locate(&self, items: &Bound<'_, PyList>, err: Error) -> PyResult<Error> {
        let now = self.inner.now_ms();
        for (i, item) in items.iter().enumerate() {
            let EnqueueItem { task, payload, options } = item_at(i, &item)?;
            if let Err(e) = NewJob::build(&task, payload, options, now) {
                let why = match e {
                    CoreError::InvalidArgument(m) => m,
                    other => other.to_string(),
                };
                return Ok(Error::invalid(format!("enqueue_many item {i} (task {task}): {why}")));
            }
        }
        Ok(err)
    }
}

/// Item `i` of a batch; its errors name the index.
fn item_at(i: usize, item: &Bound<'_, PyAny>) -> PyResult<EnqueueItem> {
    let d = item.cast::<PyDict>().map_err(|_| invalid(format!("enqueue_many item {i} must be a dict")))?;
    // Every error item_from raises is about the input (a missing task, a wrong type, a number
    // out of range): all of them become InvalidArgument naming the item.
    item_from(d).map_err(|e| Python::attach(|py| invalid(format!("enqueue_many item {i}: {}", e.value(py)))))
}

fn item_from(d: &Bound<'_, PyDict>) -> PyResult<EnqueueItem> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !["task", "payload", "options"].contains(&k.as_str()) {
            return Err(invalid(format!("unknown item key {k:?} (expected task, payload, options)")));
        }
    }
    let task: String = match d.get_item("task")? {
        Some(t) if !t.is_none() => t.extract().map_err(|_| invalid("the task name must be a string"))?,
        _ => return Err(invalid("it needs a task name")),
    };
    let payload = match d.get_item("payload")? {
        Some(p) => p.cast::<PyBytes>().map_err(|_| invalid("payload must be bytes"))?.as_bytes().to_vec(),
        None => Vec::new(),
    };
    let options = match d.get_item("options")? {
        Some(o) if !o.is_none() => {
            Some(o.cast_into::<PyDict>().map_err(|_| invalid("options must be a dict"))?)
        }
        _ => None,
    };
    Ok(EnqueueItem { task, payload, options: enqueue_options(options.as_ref())? })
}
