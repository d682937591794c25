//! `NativeJobContext`: one attempt of one job as a Python handler sees it.
//!
//! It wraps the runtime's [`JobContext`]: the job's id, task, attempt and payload, the
//! cancellation and soft-timeout signals, and the partial / log / progress writes (the
//! progress write fenced to this attempt). Writes block with the GIL released.

use flexiq_runtime::JobContext;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::runtime::block_on;

/// The running attempt handed to the Python dispatcher.
#[pyclass(module = "flexiq._flexiq", frozen)]
pub(crate) struct NativeJobContext {
    pub(crate) ctx: JobContext,
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

    /// Publishes a partial result (bytes); returns its sequence number.
    fn publish(&self, py: Python<'_>, data: &[u8]) -> PyResult<u64> {
        let (ctx, data) = (self.ctx.clone(), data.to_vec());
        block_on(py, async move { ctx.publish_partial(data).await })
    }

    /// Appends a log line to the job.
    #[pyo3(signature = (message, level="info"))]
    fn log(&self, py: Python<'_>, message: &str, level: &str) -> PyResult<()> {
        let (ctx, m, l) = (self.ctx.clone(), message.to_string(), level.to_string());
        block_on(py, async move { ctx.log(&l, &m).await })
    }

    /// Records progress (0 to 100) of this attempt; raises `Superseded` once another
    /// attempt owns the job.
    fn set_progress(&self, py: Python<'_>, progress: f64) -> PyResult<()> {
        let ctx = self.ctx.clone();
        block_on(py, async move { ctx.set_progress(progress).await })
    }
}
