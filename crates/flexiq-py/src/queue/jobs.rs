//! Job calls on `NativeQueue`: fetch, await, stream, cancel, errors, replay, the graph, and
//! the partial / log writes. Results and partials come back as `bytes`; the Python layer
//! deserialises them with the queue's serializer.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::convert;
use crate::queue::NativeQueue;
use crate::runtime::block_on;

/// Milliseconds from Python (converted from seconds by `flexiq/_units.py`) as a duration.
pub(crate) fn millis(ms: Option<u64>) -> Option<Duration> {
    ms.map(Duration::from_millis)
}

/// The partials a job publishes, as a blocking iterator of dicts (`seq`, `data`,
/// `published_at`). Each `next` waits with the GIL released.
#[pyclass(module = "flexiq._flexiq", frozen)]
pub(crate) struct PartialIter {
    stream: Arc<tokio::sync::Mutex<flexiq_runtime::PartialStream>>,
}

#[pymethods]
impl PartialIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let stream = self.stream.clone();
        let next = block_on(py, async move { stream.lock().await.next().await.transpose() })?;
        next.map(|p| convert::partial(py, &p)).transpose()
    }
}

#[pymethods]
impl NativeQueue {
    /// A job's current state as a dict; `None` for an id no job carries.
    fn get_job<'py>(&self, py: Python<'py>, job_id: &str) -> PyResult<Option<Bound<'py, PyDict>>> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        let job = block_on(py, async move { q.get_job(&id).await })?;
        job.map(|j| convert::job(py, &j)).transpose()
    }

    /// The result bytes of a completed job; `None` while not completed.
    fn get_result<'py>(&self, py: Python<'py>, job_id: &str) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        let r = block_on(py, async move { q.get_result(&id).await })?;
        Ok(r.map(|b| PyBytes::new(py, &b)))
    }

    /// Waits for a job to finish (`timeout_ms` and `poll_ms` in ms) and returns its result
    /// bytes; raises `JobFailed`, `JobCancelled` or `FlexiqTimeout`.
    #[pyo3(signature = (job_id, timeout_ms=None, poll_ms=None))]
    fn result<'py>(
        &self,
        py: Python<'py>,
        job_id: &str,
        timeout_ms: Option<u64>,
        poll_ms: Option<u64>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let (timeout, poll) = (millis(timeout_ms), millis(poll_ms));
        let (q, id) = (self.inner.clone(), job_id.to_string());
        let r = block_on(py, async move { q.result(&id, timeout, poll).await })?;
        Ok(r.map(|b| PyBytes::new(py, &b)))
    }

    /// The job's partials in order until it ends (`timeout_ms` and `poll_ms` in ms).
    #[pyo3(signature = (job_id, timeout_ms=None, poll_ms=None))]
    fn stream(&self, job_id: &str, timeout_ms: Option<u64>, poll_ms: Option<u64>) -> PyResult<PartialIter> {
        let (timeout, poll) = (millis(timeout_ms), millis(poll_ms));
        let _rt = crate::runtime::runtime().enter();
        let s = self.inner.stream(job_id, timeout, poll).map_err(crate::errors::to_py_err)?;
        Ok(PartialIter { stream: Arc::new(tokio::sync::Mutex::new(s)) })
    }

    /// Requests cooperative cancellation; false when the job is already terminal.
    fn request_cancel(&self, py: Python<'_>, job_id: &str) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        block_on(py, async move { q.request_cancel(&id).await })
    }

    /// Whether cancellation was requested.
    fn is_cancel_requested(&self, py: Python<'_>, job_id: &str) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        block_on(py, async move { q.is_cancel_requested(&id).await })
    }

    /// Cancels a pending job (and its dependents); false when running or terminal.
    fn cancel_job(&self, py: Python<'_>, job_id: &str) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        block_on(py, async move { q.cancel_job(&id).await })
    }

    /// Forces a stuck running job back to pending; false when missing or not running.
    fn requeue_job(&self, py: Python<'_>, job_id: &str) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        block_on(py, async move { q.requeue_job(&id).await })
    }

    /// Every failed attempt, oldest first.
    fn get_job_errors<'py>(&self, py: Python<'py>, job_id: &str) -> PyResult<Bound<'py, PyList>> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        let errs = block_on(py, async move { q.get_job_errors(&id).await })?;
        let out = PyList::empty(py);
        for e in &errs {
            out.append(convert::job_error(py, e)?)?;
        }
        Ok(out)
    }

    /// Re-enqueues a copy of a job; returns the new id.
    fn replay(&self, py: Python<'_>, job_id: &str) -> PyResult<String> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        block_on(py, async move { q.replay(&id).await }).map(|i| i.to_string())
    }

    /// Every replay of a job, newest first.
    fn replay_history<'py>(&self, py: Python<'py>, job_id: &str) -> PyResult<Bound<'py, PyList>> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        let rows = block_on(py, async move { q.replay_history(&id).await })?;
        let out = PyList::empty(py);
        for r in &rows {
            out.append(convert::replay_entry(py, r)?)?;
        }
        Ok(out)
    }

    /// The dependency graph reachable from a job.
    fn job_dag<'py>(&self, py: Python<'py>, job_id: &str) -> PyResult<Bound<'py, PyDict>> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        let g = block_on(py, async move { q.job_dag(&id).await })?;
        convert::job_dag(py, &g)
    }

    /// Appends a partial result; returns its sequence number.
    fn publish_partial(&self, py: Python<'_>, job_id: &str, data: &[u8]) -> PyResult<u64> {
        let (q, id, data) = (self.inner.clone(), job_id.to_string(), data.to_vec());
        block_on(py, async move { q.publish_partial(&id, data).await })
    }

    /// Appends a log line to a job.
    #[pyo3(signature = (job_id, message, level="info"))]
    fn log(&self, py: Python<'_>, job_id: &str, message: &str, level: &str) -> PyResult<()> {
        let (q, id, m, l) = (self.inner.clone(), job_id.to_string(), message.to_string(), level.to_string());
        block_on(py, async move { q.log(&id, &l, &m).await })
    }

    /// A job's log lines, oldest first.
    fn job_logs<'py>(&self, py: Python<'py>, job_id: &str) -> PyResult<Bound<'py, PyList>> {
        let (q, id) = (self.inner.clone(), job_id.to_string());
        let rows = block_on(py, async move { q.job_logs(&id).await })?;
        let out = PyList::empty(py);
        for r in &rows {
            out.append(convert::log_entry(py, r)?)?;
        }
        Ok(out)
    }
}
