//! Bulk removal and re-running on `NativeQueue`, as the runtime's `queue/clean.rs`: clean by
//! status and age, drain, obliterate in pages, remove one job (with its children), retry
//! finished jobs, orphan removal, and the two limit probes (`is_maxed`, `rate_limit_ttl`).
//!
//! Counts, limits and `grace_ms` (milliseconds, as the backend contract names it) arrive as
//! `i64` and go to the runtime unchanged, which refuses a negative or out-of-range one with
//! `InvalidArgument` naming the argument; job ids come back as strings.

use flexiq_core::JobId;
use pyo3::prelude::*;

use super::NativeQueue;
use crate::args;
use crate::runtime::block_on;

fn id_strings(ids: Vec<JobId>) -> Vec<String> {
    ids.into_iter().map(|id| id.to_string()).collect()
}

#[pymethods]
impl NativeQueue {
    /// Removes up to `limit` jobs of `status` in `queue` older than `grace_ms` ms; their ids.
    fn clean(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue)] queue: String,
        #[pyo3(from_py_with = args::status)] status: String,
        #[pyo3(from_py_with = args::grace_ms)] grace_ms: i64,
        #[pyo3(from_py_with = args::limit)] limit: i64,
    ) -> PyResult<Vec<String>> {
        let (q, n, s) = (self.inner.clone(), queue, status);
        block_on(py, async move { q.clean(&n, &s, grace_ms, limit).await }).map(id_strings)
    }

    /// Removes the due pending jobs of `queue` (and the delayed ones with `include_delayed`).
    fn drain(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue)] queue: String,
        #[pyo3(from_py_with = args::include_delayed)] include_delayed: bool,
    ) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue);
        block_on(py, async move { q.drain(&n, include_delayed).await })
    }

    /// Removes up to `count` jobs of `queue`; returns how many are left (0: the queue is gone).
    fn obliterate(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue)] queue: String,
        #[pyo3(from_py_with = args::force)] force: bool,
        #[pyo3(from_py_with = args::count)] count: i64,
    ) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue);
        block_on(py, async move { q.obliterate(&n, force, count).await })
    }

    /// Removes history rows and records no job owns any more; returns how many.
    fn remove_orphans(&self, py: Python<'_>) -> PyResult<u64> {
        let q = self.inner.clone();
        block_on(py, async move { q.remove_orphans().await })
    }

    /// Moves up to `count` finished jobs of `status` in `queue` back to pending; how many.
    fn retry_jobs(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue)] queue: String,
        #[pyo3(from_py_with = args::status)] status: String,
        #[pyo3(from_py_with = args::count)] count: i64,
    ) -> PyResult<u64> {
        let (q, n, s) = (self.inner.clone(), queue, status);
        block_on(py, async move { q.retry_jobs(&n, &s, count).await })
    }

    /// Removes a job (and with `remove_children` the jobs it waits on); the ids, the job first.
    fn remove(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::remove_children)] remove_children: bool,
    ) -> PyResult<Vec<String>> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.remove(&id, remove_children).await }).map(id_strings)
    }

    /// Whether `queue` runs as many jobs as its concurrency cap allows.
    fn is_maxed(&self, py: Python<'_>, #[pyo3(from_py_with = args::queue)] queue: String) -> PyResult<bool> {
        let (q, n) = (self.inner.clone(), queue);
        block_on(py, async move { q.is_maxed(&n).await })
    }

    /// Milliseconds until `queue`'s rate limit grants another claim (0: one is free now).
    fn rate_limit_ttl(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue)] queue: String,
    ) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue);
        block_on(py, async move { q.rate_limit_ttl(&n).await })
    }
}
