//! Queue control, dead letters and statistics on `NativeQueue`. Durations are seconds (as
//! the spec's arguments are), timestamps come back in Unix ms.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert;
use crate::queue::NativeQueue;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// Pauses a queue for every worker of the namespace (persisted).
    fn pause(&self, py: Python<'_>, queue_name: &str) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        block_on(py, async move { q.pause(&n).await })
    }

    /// Resumes a paused queue.
    fn resume(&self, py: Python<'_>, queue_name: &str) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        block_on(py, async move { q.resume(&n).await })
    }

    /// Paused queue names, sorted.
    fn paused_queues(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let q = self.inner.clone();
        block_on(py, async move { q.paused_queues().await })
    }

    /// Sets a queue's rate limit (`"N/s"`, `"N/m"`, `"N/h"`).
    fn set_queue_rate_limit(&self, py: Python<'_>, queue_name: &str, rate_limit: &str) -> PyResult<()> {
        let (q, n, r) = (self.inner.clone(), queue_name.to_string(), rate_limit.to_string());
        block_on(py, async move { q.set_queue_rate_limit(&n, &r).await })
    }

    /// Removes a queue's rate limit.
    fn clear_queue_rate_limit(&self, py: Python<'_>, queue_name: &str) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        block_on(py, async move { q.clear_queue_rate_limit(&n).await })
    }

    /// Caps the running jobs of a queue across all workers.
    fn set_queue_concurrency(&self, py: Python<'_>, queue_name: &str, max_concurrent: i64) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        block_on(py, async move { q.set_queue_concurrency(&n, max_concurrent).await })
    }

    /// Removes a queue's concurrency cap.
    fn clear_queue_concurrency(&self, py: Python<'_>, queue_name: &str) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        block_on(py, async move { q.clear_queue_concurrency(&n).await })
    }

    /// A queue's controls: `{"paused", "rate_limit" (str or None), "concurrency" (int or None)}`.
    fn queue_config<'py>(&self, py: Python<'py>, queue_name: &str) -> PyResult<Bound<'py, PyDict>> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        let c = block_on(py, async move { q.queue_config(&n).await })?;
        let d = PyDict::new(py);
        d.set_item("paused", c.paused)?;
        d.set_item("rate_limit", c.rate_limit.map(|r| r.to_string()))?;
        d.set_item("concurrency", c.concurrency)?;
        Ok(d)
    }

    /// Cancels every pending job of a queue; returns how many.
    fn purge(&self, py: Python<'_>, queue_name: &str) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        block_on(py, async move { q.purge(&n).await })
    }

    /// Refuses every future enqueue of a task with `TaskRevoked`; pending jobs still run.
    fn revoke_task(&self, py: Python<'_>, task_name: &str) -> PyResult<()> {
        let (q, n) = (self.inner.clone(), task_name.to_string());
        block_on(py, async move { q.revoke_task(&n).await })
    }

    /// Lifts a revocation; false when the task was not revoked.
    fn unrevoke_task(&self, py: Python<'_>, task_name: &str) -> PyResult<bool> {
        let (q, n) = (self.inner.clone(), task_name.to_string());
        block_on(py, async move { q.unrevoke_task(&n).await })
    }

    /// The revoked task names of the namespace, sorted.
    fn revoked_tasks(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let q = self.inner.clone();
        block_on(py, async move { q.revoked_tasks().await })
    }

    /// Deletes completed jobs older than `older_than` seconds; returns how many.
    fn purge_completed(&self, py: Python<'_>, older_than: i64) -> PyResult<u64> {
        let q = self.inner.clone();
        block_on(py, async move { q.purge_completed(older_than).await })
    }

    /// Dead letters, newest first, offset-paginated.
    fn dead_letters<'py>(&self, py: Python<'py>, limit: i64, offset: i64) -> PyResult<Bound<'py, PyList>> {
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.dead_letters(limit, offset).await })?;
        convert::dead_jobs(py, &rows)
    }

    /// Dead letters of one task.
    fn dead_letters_by_task<'py>(
        &self,
        py: Python<'py>,
        task_name: &str,
        limit: i64,
        offset: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let (q, t) = (self.inner.clone(), task_name.to_string());
        let rows = block_on(py, async move { q.dead_letters_by_task(&t, limit, offset).await })?;
        convert::dead_jobs(py, &rows)
    }

    /// Keyset page of dead letters as `(items, next_cursor)`.
    #[pyo3(signature = (limit, after=None))]
    fn dead_letters_after<'py>(
        &self,
        py: Python<'py>,
        limit: i64,
        after: Option<String>,
    ) -> PyResult<(Bound<'py, PyList>, Option<String>)> {
        let q = self.inner.clone();
        let p = block_on(py, async move { q.dead_letters_after(limit, after.as_deref()).await })?;
        Ok((convert::dead_jobs(py, &p.items)?, p.next_cursor))
    }

    /// Re-enqueues a dead letter's job; returns the new job id.
    fn retry_dead(&self, py: Python<'_>, dead_id: &str) -> PyResult<String> {
        let (q, d) = (self.inner.clone(), dead_id.to_string());
        block_on(py, async move { q.retry_dead(&d).await }).map(|i| i.to_string())
    }

    /// Discards one dead letter; false when no entry has that id.
    fn delete_dead(&self, py: Python<'_>, dead_id: &str) -> PyResult<bool> {
        let (q, d) = (self.inner.clone(), dead_id.to_string());
        block_on(py, async move { q.delete_dead(&d).await })
    }

    /// Deletes dead letters older than `older_than` seconds; returns how many.
    fn purge_dead(&self, py: Python<'_>, older_than: i64) -> PyResult<u64> {
        let q = self.inner.clone();
        block_on(py, async move { q.purge_dead(older_than).await })
    }

    /// Deletes every dead letter of one task; returns how many.
    fn purge_dead_by_task(&self, py: Python<'_>, task_name: &str) -> PyResult<u64> {
        let (q, t) = (self.inner.clone(), task_name.to_string());
        block_on(py, async move { q.purge_dead_by_task(&t).await })
    }

    /// Status counts over the namespace.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = self.inner.clone();
        let s = block_on(py, async move { q.stats().await })?;
        convert::stats(py, &s)
    }

    /// Status counts of one queue.
    fn stats_for_queue<'py>(&self, py: Python<'py>, queue_name: &str) -> PyResult<Bound<'py, PyDict>> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
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
        task_name: Option<String>,
        since: i64,
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
        task_name: Option<String>,
        since: i64,
        bucket: i64,
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
        since_ms: i64,
        task_name: Option<String>,
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
    fn count_pending_by_queue(&self, py: Python<'_>, queue_name: &str) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue_name.to_string());
        block_on(py, async move { q.count_pending_by_queue(&n).await })
    }

    /// Registered workers and their heartbeats (Unix ms).
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
            out.append(d)?;
        }
        Ok(out)
    }
}
