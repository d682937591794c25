//! `NativeJobContext`: one attempt of one job as a Python handler sees it.
//!
//! It wraps the runtime's [`JobContext`]: the job's id, task, attempt and payload, the
//! cancellation and soft-timeout signals, the partial / log / progress writes (the progress
//! write fenced to this attempt) and the reads of its children's outcomes (a flow's parent,
//! or any job with dependencies). Reads, writes and waits block with the GIL released.
//!
//! The soft timeout reaches a handler three ways: polled (`soft_timeout_exceeded`), waited
//! for (`wait_soft_timeout`, which a sync handler can run on a thread of its own), or as a
//! callback (`_on_soft_timeout`, which the async API builds on). Waits and callbacks also end
//! when the attempt does (`done`, fired by the worker once the dispatcher returns) or is
//! cancelled, so nothing outlives the attempt.

use std::collections::HashMap;
use std::time::Duration;

use flexiq_runtime::{CancellationToken, JobContext};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::args::{self, Bytes};
use crate::queue::millis;
use crate::runtime::{block_on, runtime};

/// The running attempt handed to the Python dispatcher.
#[pyclass(module = "flexiq._flexiq", frozen)]
pub(crate) struct NativeJobContext {
    pub(crate) ctx: JobContext,
    /// Fired when the attempt's dispatcher call has returned.
    pub(crate) done: CancellationToken,
}

/// Resolves `true` when the soft timeout fires, `false` when the attempt ends, is cancelled
/// or `limit` passes first. A soft timeout that already fired wins over everything else.
async fn soft_or_end(
    soft: CancellationToken,
    cancel: CancellationToken,
    done: CancellationToken,
    limit: Option<Duration>,
) -> bool {
    let limit = async {
        match limit {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = soft.cancelled() => true,
        _ = cancel.cancelled() => false,
        _ = done.cancelled() => false,
        _ = limit => false,
    }
}

#[pymethods]
impl NativeJobContext {
    /// The job id.
    #[getter]
    fn id(&self) -> &str {
        self.ctx.id().as_str()
    }

    /// The task name.
    #[getter]
    fn task(&self) -> &str {
        self.ctx.task()
    }

    /// This attempt's number (1-based).
    #[getter]
    fn attempt(&self) -> u32 {
        self.ctx.attempt()
    }

    /// The queue the job came from.
    #[getter]
    fn queue(&self) -> &str {
        &self.ctx.job().queue
    }

    /// Retries allowed after the first attempt.
    #[getter]
    fn max_retries(&self) -> u32 {
        self.ctx.job().max_retries
    }

    /// The payload bytes.
    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.ctx.payload())
    }

    /// The job's metadata (JSON object text), if any.
    #[getter]
    fn metadata(&self) -> Option<&str> {
        self.ctx.job().metadata.as_deref()
    }

    /// Whether the handler should stop: a cancel request, the hard timeout, a lost lease or
    /// a worker shutdown past its deadline.
    fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }

    /// Why the cancellation fired (`"requested"`, `"hard_timeout"`, `"lease_lost"`,
    /// `"shutdown"`), or `None`.
    fn cancel_reason(&self) -> Option<&'static str> {
        use flexiq_runtime::CancelReason::*;
        self.ctx.cancel_reason().map(|r| match r {
            Requested => "requested",
            HardTimeout => "hard_timeout",
            LeaseLost => "lease_lost",
            Shutdown => "shutdown",
        })
    }

    /// Whether the task's soft timeout has passed.
    fn soft_timeout_exceeded(&self) -> bool {
        self.ctx.soft_timeout().is_cancelled()
    }

    /// Blocks (GIL released) until the soft timeout fires (`True`), or the attempt is
    /// cancelled, ends or `timeout_ms` ms pass (`False`). `None` waits without a limit.
    #[pyo3(signature = (timeout_ms=None))]
    fn wait_soft_timeout(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::timeout_ms)] timeout_ms: Option<u64>,
    ) -> PyResult<bool> {
        let limit = millis(timeout_ms);
        let (soft, cancel, done) =
            (self.ctx.soft_timeout().clone(), self.ctx.cancellation().clone(), self.done.clone());
        block_on(py, async move { Ok(soft_or_end(soft, cancel, done, limit).await) })
    }

    /// Calls `callback(fired)` once, on a flexiq thread: `fired` is `True` when the soft
    /// timeout fired, `False` when the attempt was cancelled or ended first. An exception in
    /// the callback is reported as unraisable, never raised into the handler.
    fn _on_soft_timeout(&self, callback: Py<PyAny>) {
        let (soft, cancel, done) =
            (self.ctx.soft_timeout().clone(), self.ctx.cancellation().clone(), self.done.clone());
        runtime().spawn(async move {
            let fired = soft_or_end(soft, cancel, done, None).await;
            // The callback takes the GIL: run it off the runtime's threads.
            let _ = tokio::task::spawn_blocking(move || {
                Python::attach(|py| {
                    if let Err(e) = callback.call1(py, (fired,)) {
                        e.write_unraisable(py, None);
                    }
                })
            })
            .await;
        });
    }

    /// Publishes a partial result (bytes); returns its sequence number.
    fn publish(&self, py: Python<'_>, #[pyo3(from_py_with = args::data)] data: Bytes) -> PyResult<u64> {
        let (ctx, data) = (self.ctx.clone(), data.0);
        block_on(py, async move { ctx.publish_partial(data).await })
    }

    /// Appends a log line to the job.
    #[pyo3(signature = (message, level=String::from("info")), text_signature = "($self, message, level='info')")]
    fn log(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::message)] message: String,
        #[pyo3(from_py_with = args::level)] level: String,
    ) -> PyResult<()> {
        let (ctx, m, l) = (self.ctx.clone(), message, level);
        block_on(py, async move { ctx.log(&l, &m).await })
    }

    /// Records progress (0 to 100) of this attempt; raises `Superseded` once another
    /// attempt owns the job.
    fn set_progress(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::progress)] progress: f64,
    ) -> PyResult<()> {
        let ctx = self.ctx.clone();
        block_on(py, async move { ctx.set_progress(progress).await })
    }

    /// The result bytes of this job's completed children by child id (`None` for a child
    /// that completed without a result).
    fn children_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let ctx = self.ctx.clone();
        let values = block_on(py, async move { ctx.children_values().await })?;
        let d = PyDict::new(py);
        for (id, v) in &values {
            d.set_item(id.as_str(), v.as_deref().map(|b| PyBytes::new(py, b)))?;
        }
        Ok(d)
    }

    /// The last error of each child whose failure was ignored (`ignore_dependency`), by id.
    fn ignored_failures(&self, py: Python<'_>) -> PyResult<HashMap<String, String>> {
        let ctx = self.ctx.clone();
        let failures = block_on(py, async move { ctx.ignored_failures().await })?;
        Ok(failures.into_iter().map(|(id, e)| (id.to_string(), e)).collect())
    }
}
