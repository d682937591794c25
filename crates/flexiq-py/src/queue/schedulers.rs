//! Job schedulers on `NativeQueue`, as the runtime's `queue/schedulers.rs`: create or replace
//! one (a cron pattern in a zone, or every N ms, and the job each slot enqueues), read, list,
//! remove and count them. The elected cleaner of a worker fires them.
//!
//! The rule and template arrive as dicts converted once by `crate::schedule` (the template's
//! payload already encoded and its options in engine units); a scheduler comes back as a dict
//! from `crate::convert::job_scheduler` (payload as `bytes`, which the Python layer decodes
//! with the queue's serializer; times in Unix ms). Ids, the page size (1 to 10,000) and the
//! cursor are checked by the runtime: a bad one is `InvalidArgument`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::NativeQueue;
use crate::args;
use crate::convert;
use crate::runtime::block_on;
use crate::schedule::{job_template, repeat_rule};

#[pymethods]
impl NativeQueue {
    /// Creates scheduler `scheduler_id`, or replaces the rule and template of the existing one
    /// (keeping its count; a slot it fired never fires again); returns the stored scheduler
    /// with its next slot. `repeat` is the rule dict, `template` `{task, payload, options}`.
    fn upsert_job_scheduler<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::scheduler_id)] scheduler_id: String,
        #[pyo3(from_py_with = args::repeat)] repeat: Bound<'py, PyDict>,
        #[pyo3(from_py_with = args::template)] template: Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let rule = repeat_rule(&scheduler_id, &repeat)?;
        let template = job_template(&scheduler_id, &template)?;
        let (q, id) = (self.inner.clone(), scheduler_id);
        let s = block_on(py, async move { q.upsert_job_scheduler(&id, rule, template).await })?;
        convert::job_scheduler(py, &s)
    }

    /// The scheduler `scheduler_id` as a dict; `None` when there is none.
    fn get_job_scheduler<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::scheduler_id)] scheduler_id: String,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let (q, id) = (self.inner.clone(), scheduler_id);
        let s = block_on(py, async move { q.get_job_scheduler(&id).await })?;
        s.map(|s| convert::job_scheduler(py, &s)).transpose()
    }

    /// Keyset page of schedulers by id as `(items, next_cursor)` (`limit` 1 to 10,000).
    #[pyo3(signature = (limit=100, after=None))]
    fn list_job_schedulers<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
    ) -> PyResult<(Bound<'py, PyList>, Option<String>)> {
        let q = self.inner.clone();
        let p = block_on(py, async move { q.list_job_schedulers(limit, after.as_deref()).await })?;
        let items = PyList::empty(py);
        for s in &p.items {
            items.append(convert::job_scheduler(py, s)?)?;
        }
        Ok((items, p.next_cursor))
    }

    /// Removes the scheduler `scheduler_id`; the jobs it already enqueued stay. False when
    /// there was none.
    fn remove_job_scheduler(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::scheduler_id)] scheduler_id: String,
    ) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), scheduler_id);
        block_on(py, async move { q.remove_job_scheduler(&id).await })
    }

    /// How many schedulers the namespace has.
    fn count_job_schedulers(&self, py: Python<'_>) -> PyResult<u64> {
        let q = self.inner.clone();
        block_on(py, async move { q.count_job_schedulers().await })
    }
}
