//! Job calls on `NativeQueue`, as the runtime's `queue/jobs.rs`: enqueue (one job, or a batch
//! in one transaction), fetch, cancel, errors, replay, the graph, and the partial / log
//! writes. Enqueue options arrive as one dict converted by `crate::options`; results come
//! back as `bytes`, which the Python layer deserialises with the queue's serializer.

use flexiq_core::{Error as CoreError, ErrorKind, NewJob};
use flexiq_runtime::{EnqueueItem, Error};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use super::NativeQueue;
use crate::args::{self, Bytes, FromArg};
use crate::convert;
use crate::errors::{invalid, to_py_err};
use crate::options::enqueue_options;
use crate::runtime::{block_on, runtime};

#[pymethods]
impl NativeQueue {
    /// Enqueues one job and returns its id (the existing job's id when `unique_key`
    /// deduplicated it). `options` is a dict in engine units (see `options`).
    #[pyo3(signature = (task, payload, options=None))]
    fn enqueue(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::task)] task: String,
        #[pyo3(from_py_with = args::payload)] payload: Bytes,
        #[pyo3(from_py_with = args::options)] options: Option<Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let opts = enqueue_options(options.as_ref())?;
        let (q, payload) = (self.inner.clone(), payload.0);
        block_on(py, async move { q.enqueue(&task, payload, opts).await }).map(|id| id.to_string())
    }

    /// Enqueues a batch in one transaction (all or nothing). Each item is a dict with `task`,
    /// `payload` and `options` (as `enqueue` takes them). Returns the ids in order. A bad item
    /// is named by its index; nothing of the batch is written.
    fn enqueue_many(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::items)] items: Bound<'_, PyList>,
    ) -> PyResult<Vec<String>> {
        let mut batch = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            batch.push(item_at(i, &item)?);
        }
        let q = self.inner.clone();
        match py.detach(|| runtime().block_on(async move { q.enqueue_many(batch).await })) {
            Ok(ids) => Ok(ids.into_iter().map(|i| i.to_string()).collect()),
            Err(e) if e.kind() == Some(ErrorKind::InvalidArgument) => Err(to_py_err(self.locate(&items, e)?)),
            Err(e) => Err(to_py_err(e)),
        }
    }

    /// A job's current state as a dict; `None` for an id no job carries.
    fn get_job<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let (q, id) = (self.inner.clone(), job_id);
        let job = block_on(py, async move { q.get_job(&id).await })?;
        job.map(|j| convert::job(py, &j)).transpose()
    }

    /// The result bytes of a completed job; `None` while not completed.
    fn get_result<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let (q, id) = (self.inner.clone(), job_id);
        let r = block_on(py, async move { q.get_result(&id).await })?;
        Ok(r.map(|b| PyBytes::new(py, &b)))
    }

    /// Requests cooperative cancellation; false when the job is already terminal.
    fn request_cancel(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.request_cancel(&id).await })
    }

    /// Whether cancellation was requested.
    fn is_cancel_requested(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.is_cancel_requested(&id).await })
    }

    /// Whether the job is in ``status`` now (``"pending"``, ``"running"``, ``"completed"``,
    /// ``"failed"``, ``"dead"``, ``"cancelled"``, ``"suspended"`` or ``"waiting"``): one field
    /// read, cheaper than ``get_job``. False for an unknown or archived job; ``InvalidArgument``
    /// for a malformed id or an unknown status.
    fn is_job_in_state(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::status)] status: String,
    ) -> PyResult<bool> {
        let (q, id, status) = (self.inner.clone(), job_id, status);
        block_on(py, async move { q.is_job_in_state(&id, &status).await })
    }

    /// Cancels a pending job (and its dependents); false when running or terminal.
    fn cancel_job(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.cancel_job(&id).await })
    }

    /// Every failed attempt, oldest first.
    fn get_job_errors<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<Bound<'py, PyList>> {
        let (q, id) = (self.inner.clone(), job_id);
        let errs = block_on(py, async move { q.get_job_errors(&id).await })?;
        let out = PyList::empty(py);
        for e in &errs {
            out.append(convert::job_error(py, e)?)?;
        }
        Ok(out)
    }

    /// Re-enqueues a copy of a job; returns the new id.
    fn replay(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<String> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.replay(&id).await }).map(|i| i.to_string())
    }

    /// Every replay of a job, newest first.
    fn replay_history<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<Bound<'py, PyList>> {
        let (q, id) = (self.inner.clone(), job_id);
        let rows = block_on(py, async move { q.replay_history(&id).await })?;
        let out = PyList::empty(py);
        for r in &rows {
            out.append(convert::replay_entry(py, r)?)?;
        }
        Ok(out)
    }

    /// The dependency graph reachable from a job.
    fn job_dag<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (q, id) = (self.inner.clone(), job_id);
        let g = block_on(py, async move { q.job_dag(&id).await })?;
        convert::job_dag(py, &g)
    }

    /// Appends a partial result; returns its sequence number.
    fn publish_partial(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::data)] data: Bytes,
    ) -> PyResult<u64> {
        let (q, id, data) = (self.inner.clone(), job_id, data.0);
        block_on(py, async move { q.publish_partial(&id, data).await })
    }

    /// Appends a log line to a job.
    #[pyo3(signature = (job_id, message, level=String::from("info")), text_signature = "($self, job_id, message, level='info')")]
    fn log(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::message)] message: String,
        #[pyo3(from_py_with = args::level)] level: String,
    ) -> PyResult<()> {
        let (q, id, m, l) = (self.inner.clone(), job_id, message, level);
        block_on(py, async move { q.log(&id, &l, &m).await })
    }

    /// A job's log lines, oldest first.
    fn job_logs<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<Bound<'py, PyList>> {
        let (q, id) = (self.inner.clone(), job_id);
        let rows = block_on(py, async move { q.job_logs(&id).await })?;
        let out = PyList::empty(py);
        for r in &rows {
            out.append(convert::log_entry(py, r)?)?;
        }
        Ok(out)
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
        let k = String::from_arg("an item key", &k)?;
        if !["task", "payload", "options"].contains(&k.as_str()) {
            return Err(invalid(format!("unknown item key {k:?} (expected task, payload, options)")));
        }
    }
    let task: String =
        args::item(d, "task", "the task name")?.ok_or_else(|| invalid("it needs a task name"))?;
    let payload = args::item::<Bytes>(d, "payload", "payload")?.map_or_else(Vec::new, |b| b.0);
    let options = args::item::<Bound<'_, PyDict>>(d, "options", "options")?;
    Ok(EnqueueItem { task, payload, options: enqueue_options(options.as_ref())? })
}
