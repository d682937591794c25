//! Queue control on `NativeQueue`, as the runtime's `queue/control.rs`: pause / resume, rate
//! limits, concurrency caps, stall budgets, purges, task revocation and the operator's
//! requeue of a stuck job. `older_than` is seconds, as the spec's argument is.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::NativeQueue;
use crate::args;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// Pauses a queue for every worker of the namespace (persisted).
    fn pause(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.pause(&n).await })
    }

    /// Resumes a paused queue.
    fn resume(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.resume(&n).await })
    }

    /// Paused queue names, sorted.
    fn paused_queues(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let q = self.inner.clone();
        block_on(py, async move { q.paused_queues().await })
    }

    /// Sets a queue's rate limit (`"N/s"`, `"N/m"`, `"N/h"`).
    fn set_queue_rate_limit(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
        #[pyo3(from_py_with = args::rate_limit)] rate_limit: String,
    ) -> PyResult<()> {
        let (q, n, r) = (self.inner.clone(), queue_name, rate_limit);
        block_on(py, async move { q.set_queue_rate_limit(&n, &r).await })
    }

    /// Removes a queue's rate limit.
    fn clear_queue_rate_limit(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.clear_queue_rate_limit(&n).await })
    }

    /// Caps the running jobs of a queue across all workers.
    fn set_queue_concurrency(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
        #[pyo3(from_py_with = args::max_concurrent)] max_concurrent: i64,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.set_queue_concurrency(&n, max_concurrent).await })
    }

    /// Removes a queue's concurrency cap.
    fn clear_queue_concurrency(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.clear_queue_concurrency(&n).await })
    }

    /// Sets how many stalls (lapsed leases) a job of a queue recovers from (0 to 10,000).
    fn set_queue_max_stalled(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
        #[pyo3(from_py_with = args::max_stalled_count)] max_stalled_count: i64,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.set_queue_max_stalled(&n, max_stalled_count).await })
    }

    /// Restores a queue's stall budget to the default.
    fn clear_queue_max_stalled(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.clear_queue_max_stalled(&n).await })
    }

    /// A queue's controls: `{"paused", "rate_limit" (str or None), "concurrency" (int or None),
    /// "max_stalled_count" (int or None: the default)}`.
    fn queue_config<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (q, n) = (self.inner.clone(), queue_name);
        let c = block_on(py, async move { q.queue_config(&n).await })?;
        let d = PyDict::new(py);
        d.set_item("paused", c.paused)?;
        d.set_item("rate_limit", c.rate_limit.map(|r| r.to_string()))?;
        d.set_item("concurrency", c.concurrency)?;
        d.set_item("max_stalled_count", c.max_stalled_count)?;
        Ok(d)
    }

    /// Cancels every pending job of a queue; returns how many.
    fn purge(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.purge(&n).await })
    }

    /// Refuses every future enqueue of a task with `TaskRevoked`; pending jobs still run.
    fn revoke_task(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::task_name)] task_name: String,
    ) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), task_name);
        block_on(py, async move { q.revoke_task(&n).await })
    }

    /// Lifts a revocation; false when the task was not revoked.
    fn unrevoke_task(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::task_name)] task_name: String,
    ) -> PyResult<bool> {
        let (q, n) = (self.inner.clone(), task_name);
        block_on(py, async move { q.unrevoke_task(&n).await })
    }

    /// The revoked task names of the namespace, sorted.
    fn revoked_tasks(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let q = self.inner.clone();
        block_on(py, async move { q.revoked_tasks().await })
    }

    /// Deletes completed jobs older than `older_than` seconds; returns how many.
    fn purge_completed(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::older_than)] older_than: i64,
    ) -> PyResult<u64> {
        let q = self.inner.clone();
        block_on(py, async move { q.purge_completed(older_than).await })
    }

    /// Forces a stuck running job back to pending; false when missing or not running.
    fn requeue_job(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
    ) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.requeue_job(&id).await })
    }
}
