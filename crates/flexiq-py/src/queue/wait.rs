//! Awaiting a job on `NativeQueue`: its result and its partial-result stream, as the
//! runtime's `queue/wait.rs`. Durations arrive in milliseconds (the Python layer converts
//! seconds once, in `flexiq/_units.py`); results and partials come back as `bytes`.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::NativeQueue;
use crate::args;
use crate::convert;
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
    /// Waits for a job to finish (`timeout_ms` and `poll_ms` in ms) and returns its result
    /// bytes; raises `JobFailed`, `JobCancelled` or `FlexiqTimeout`.
    #[pyo3(signature = (job_id, timeout_ms=None, poll_ms=None))]
    fn result<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::timeout_ms)] timeout_ms: Option<u64>,
        #[pyo3(from_py_with = args::poll_ms)] poll_ms: Option<u64>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let (timeout, poll) = (millis(timeout_ms), millis(poll_ms));
        let (q, id) = (self.inner.clone(), job_id);
        let r = block_on(py, async move { q.result(&id, timeout, poll).await })?;
        Ok(r.map(|b| PyBytes::new(py, &b)))
    }

    /// The job's partials in order until it ends (`timeout_ms` and `poll_ms` in ms).
    #[pyo3(signature = (job_id, timeout_ms=None, poll_ms=None))]
    fn stream(
        &self,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::timeout_ms)] timeout_ms: Option<u64>,
        #[pyo3(from_py_with = args::poll_ms)] poll_ms: Option<u64>,
    ) -> PyResult<PartialIter> {
        let (timeout, poll) = (millis(timeout_ms), millis(poll_ms));
        let _rt = crate::runtime::runtime().enter();
        let s = self.inner.stream(&job_id, timeout, poll).map_err(crate::errors::to_py_err)?;
        Ok(PartialIter { stream: Arc::new(tokio::sync::Mutex::new(s)) })
    }
}
