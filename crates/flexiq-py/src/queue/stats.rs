//! Counts, metrics and the worker registry on `NativeQueue`, as the runtime's
//! `queue/stats.rs`. Windows (`since`, `bucket`) are seconds; timestamps come back in Unix ms.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::NativeQueue;
use crate::args;
use crate::convert;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// Status counts over the namespace.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = self.inner.clone();
        let s = block_on(py, async move { q.stats().await })?;
        convert::stats(py, &s)
    }

    /// Status counts of one queue.
    fn stats_for_queue<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (q, n) = (self.inner.clone(), queue_name);
        let s = block_on(py, async move { q.stats_for_queue(&n).await })?;
        convert::stats(py, &s)
    }

    /// Status counts per queue that has jobs.
    fn stats_by_queue<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = self.inner.clone();
        let m = block_on(py, async move { q.stats_by_queue().await })?;
        convert::stats_map(py, &m)
    }

    /// Status counts per known queue, including queues with no jobs.
    fn stats_all_queues<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = self.inner.clone();
        let m = block_on(py, async move { q.stats_all_queues().await })?;
        convert::stats_map(py, &m)
    }

    /// Per-task aggregates over the last `since` seconds.
    #[pyo3(signature = (task_name=None, since=3600))]
    fn metrics<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::task_name)] task_name: Option<String>,
        #[pyo3(from_py_with = args::since)] since: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let q = self.inner.clone();
        let m = block_on(py, async move { q.metrics(task_name.as_deref(), since).await })?;
        convert::aggregates(py, &m)
    }

    /// The same rows in `bucket`-second buckets, oldest first.
    #[pyo3(signature = (task_name=None, since=3600, bucket=60))]
    fn metrics_timeseries<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::task_name)] task_name: Option<String>,
        #[pyo3(from_py_with = args::since)] since: i64,
        #[pyo3(from_py_with = args::bucket)] bucket: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let q = self.inner.clone();
        let b = block_on(py, async move { q.metrics_timeseries(task_name.as_deref(), since, bucket).await })?;
        convert::buckets(py, &b)
    }

    /// Raw metric rows recorded at or after `since_ms` (Unix ms), oldest first.
    #[pyo3(signature = (since_ms, task_name=None))]
    fn get_metrics<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::since_ms)] since_ms: i64,
        #[pyo3(from_py_with = args::task_name)] task_name: Option<String>,
    ) -> PyResult<Bound<'py, PyList>> {
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.get_metrics(since_ms, task_name.as_deref()).await })?;
        let out = PyList::empty(py);
        for r in &rows {
            let d = PyDict::new(py);
            d.set_item("job_id", &r.job_id)?;
            d.set_item("task", &r.task)?;
            d.set_item("queue", &r.queue)?;
            d.set_item("attempt", r.attempt)?;
            d.set_item("success", r.success)?;
            d.set_item("duration_ms", r.duration_ms)?;
            d.set_item("recorded_at", r.recorded_at)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Pending jobs on one queue (the number `max_pending` is compared against).
    fn count_pending_by_queue(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue_name)] queue_name: String,
    ) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue_name);
        block_on(py, async move { q.count_pending_by_queue(&n).await })
    }

    /// Registered workers, their heartbeats (Unix ms) and the ids of the jobs each runs now.
    fn list_workers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.list_workers().await })?;
        let out = PyList::empty(py);
        for w in &rows {
            let d = PyDict::new(py);
            d.set_item("id", &w.id)?;
            d.set_item("queues", w.queues.clone())?;
            d.set_item("concurrency", w.concurrency)?;
            d.set_item("host", &w.host)?;
            d.set_item("pid", w.pid)?;
            d.set_item("started_at", w.started_at)?;
            d.set_item("heartbeat_at", w.heartbeat_at)?;
            d.set_item("current_jobs", w.current_jobs.clone())?;
            out.append(d)?;
        }
        Ok(out)
    }
}
