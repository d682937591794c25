//! `NativeQueue`: the Python handle on a runtime [`flexiq_runtime::Queue`], with opening,
//! closing and enqueueing. The other calls live beside it, one file per area
//! (`queue_jobs`, `queue_listing`, `queue_ops`, `queue_admin`).
//!
//! Arguments arrive as Python values and are handed to the runtime unchanged where it
//! validates them (limits, offsets, durations as `i64`, so a negative number is an
//! `InvalidArgument` rather than an `OverflowError`); nothing here decides job semantics.

use flexiq_core::{
    Backoff, EnqueueOptions, Error as CoreError, ErrorKind, NewJob, Retention, RetentionTable,
};
use flexiq_runtime::{ConnectOptions, Durability, EnqueueItem, Error};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::{invalid, to_py_err};
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

/// Enqueue options from the keyword arguments the Python layer passes (ms and Unix ms).
#[allow(clippy::too_many_arguments)]
fn options(
    queue: Option<String>,
    priority: Option<i64>,
    delay_ms: Option<i64>,
    run_at: Option<i64>,
    max_retries: Option<i64>,
    backoff_ms: Option<i64>,
    backoff_max_ms: Option<i64>,
    timeout_ms: Option<i64>,
    unique_key: Option<String>,
    metadata: Option<String>,
    depends_on: Option<Vec<String>>,
    group_key: Option<String>,
) -> PyResult<EnqueueOptions> {
    let priority = priority
        .map(|p| i32::try_from(p).map_err(|_| invalid(format!("priority {p} is outside the 32-bit range"))))
        .transpose()?;
    let max_retries = match max_retries {
        None => None,
        Some(n) => Some(u32::try_from(n).map_err(|_| invalid(format!("max_retries {n} must be 0 or more")))?),
    };
    let backoff = match (opt_u64("retry_backoff", backoff_ms)?, opt_u64("retry_backoff max", backoff_max_ms)?)
    {
        (None, None) => None,
        (base, max) => {
            let d = Backoff::default();
            let base_ms = base.unwrap_or(d.base_ms);
            Some(Backoff { base_ms, max_ms: max.unwrap_or(d.max_ms.max(base_ms)) })
        }
    };
    let timeout_ms = match timeout_ms {
        Some(t) if t <= 0 => return Err(invalid(format!("timeout {t} ms must be positive"))),
        t => opt_u64("timeout", t)?,
    };
    Ok(EnqueueOptions {
        queue,
        priority,
        delay_ms: opt_u64("delay", delay_ms)?,
        run_at,
        max_retries,
        backoff,
        timeout_ms,
        unique_key,
        metadata,
        depends_on: depends_on.unwrap_or_default(),
        group_key,
        ..Default::default()
    })
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
    /// deduplicated it). `delay_ms` is ms from now, `run_at` Unix ms, `timeout_ms` ms.
    #[pyo3(signature = (task, payload, *, queue=None, priority=None, delay_ms=None, run_at=None, max_retries=None,
        backoff_ms=None, backoff_max_ms=None, timeout_ms=None, unique_key=None, metadata=None, depends_on=None,
        group_key=None))]
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &self,
        py: Python<'_>,
        task: &str,
        payload: &[u8],
        queue: Option<String>,
        priority: Option<i64>,
        delay_ms: Option<i64>,
        run_at: Option<i64>,
        max_retries: Option<i64>,
        backoff_ms: Option<i64>,
        backoff_max_ms: Option<i64>,
        timeout_ms: Option<i64>,
        unique_key: Option<String>,
        metadata: Option<String>,
        depends_on: Option<Vec<String>>,
        group_key: Option<String>,
    ) -> PyResult<String> {
        let opts = options(
            queue,
            priority,
            delay_ms,
            run_at,
            max_retries,
            backoff_ms,
            backoff_max_ms,
            timeout_ms,
            unique_key,
            metadata,
            depends_on,
            group_key,
        )?;
        let q = self.inner.clone();
        let payload = payload.to_vec();
        let task = task.to_string();
        block_on(py, async move { q.enqueue(&task, payload, opts).await }).map(|id| id.to_string())
    }

    /// Enqueues a batch in one transaction (all or nothing). Each item is a dict with `task`,
    /// `payload` and any of `enqueue`'s keyword options. Returns the ids in order. A bad item
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

fn get<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(v.extract().map_err(Into::into)?)),
        _ => Ok(None),
    }
}

fn item_from(d: &Bound<'_, PyDict>) -> PyResult<EnqueueItem> {
    const KNOWN: [&str; 14] = [
        "task",
        "payload",
        "queue",
        "priority",
        "delay_ms",
        "run_at",
        "max_retries",
        "backoff_ms",
        "backoff_max_ms",
        "timeout_ms",
        "unique_key",
        "metadata",
        "depends_on",
        "group_key",
    ];
    for k in d.keys() {
        let k: String = k.extract()?;
        if !KNOWN.contains(&k.as_str()) {
            return Err(invalid(format!("unknown enqueue option {k:?}")));
        }
    }
    let task: String = get(d, "task")?.ok_or_else(|| invalid("it needs a task name"))?;
    let payload = match d.get_item("payload")? {
        Some(p) => p.cast::<PyBytes>().map_err(|_| invalid("payload must be bytes"))?.as_bytes().to_vec(),
        None => Vec::new(),
    };
    let options = options(
        get(d, "queue")?,
        get(d, "priority")?,
        get(d, "delay_ms")?,
        get(d, "run_at")?,
        get(d, "max_retries")?,
        get(d, "backoff_ms")?,
        get(d, "backoff_max_ms")?,
        get(d, "timeout_ms")?,
        get(d, "unique_key")?,
        get(d, "metadata")?,
        get(d, "depends_on")?,
        get(d, "group_key")?,
    )?;
    Ok(EnqueueItem { task, payload, options })
}
