//! Moving jobs that have not started on `NativeQueue`, as the runtime's `queue/reschedule.rs`:
//! a new delay, promotion of one delayed job or a batch of a queue's, a new priority with or
//! without LIFO placement.
//!
//! Delays (ms), priorities and counts arrive as `i64` and go to the runtime unchanged, which
//! refuses a negative delay, a priority outside the store contract's range or a count outside
//! 1 to 10,000 with `InvalidArgument`, and a job in the wrong status with `Conflict` naming it.

use pyo3::prelude::*;

use super::NativeQueue;
use crate::args;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// Makes a pending job due `delay_ms` ms from now.
    fn change_delay(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::delay_ms)] delay_ms: i64,
    ) -> PyResult<()> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.change_delay(&id, delay_ms).await })
    }

    /// Makes a delayed pending job due now.
    fn promote(&self, py: Python<'_>, #[pyo3(from_py_with = args::job_id)] job_id: String) -> PyResult<()> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.promote(&id).await })
    }

    /// Makes up to `count` delayed jobs of `queue` due now, soonest first; how many.
    fn promote_jobs(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::queue)] queue: String,
        #[pyo3(from_py_with = args::count)] count: i64,
    ) -> PyResult<u64> {
        let (q, n) = (self.inner.clone(), queue);
        block_on(py, async move { q.promote_jobs(&n, count).await })
    }

    /// Gives a job that has not started a new priority (with `lifo`, ahead of its FIFO peers).
    fn change_priority(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::priority)] priority: i64,
        #[pyo3(from_py_with = args::lifo)] lifo: bool,
    ) -> PyResult<()> {
        let (q, id) = (self.inner.clone(), job_id);
        block_on(py, async move { q.change_priority(&id, priority, lifo).await })
    }
}
