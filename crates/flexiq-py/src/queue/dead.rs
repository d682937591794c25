//! The dead-letter queue on `NativeQueue`, as the runtime's `queue/dead.rs`: listings
//! (offset, by task, keyset), retry, delete and purges. `older_than` is seconds; `failed_at`
//! comes back in Unix ms.

use pyo3::prelude::*;
use pyo3::types::PyList;

use super::NativeQueue;
use crate::args;
use crate::convert;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// Dead letters, newest first, offset-paginated.
    fn dead_letters<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::offset)] offset: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.dead_letters(limit, offset).await })?;
        convert::dead_jobs(py, &rows)
    }

    /// Dead letters of one task.
    fn dead_letters_by_task<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::task_name)] task_name: String,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::offset)] offset: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let (q, t) = (self.inner.clone(), task_name);
        let rows = block_on(py, async move { q.dead_letters_by_task(&t, limit, offset).await })?;
        convert::dead_jobs(py, &rows)
    }

    /// Keyset page of dead letters as `(items, next_cursor)`.
    #[pyo3(signature = (limit, after=None))]
    fn dead_letters_after<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
    ) -> PyResult<(Bound<'py, PyList>, Option<String>)> {
        let q = self.inner.clone();
        let p = block_on(py, async move { q.dead_letters_after(limit, after.as_deref()).await })?;
        Ok((convert::dead_jobs(py, &p.items)?, p.next_cursor))
    }

    /// Re-enqueues a dead letter's job; returns the new job id.
    fn retry_dead(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::dead_id)] dead_id: String,
    ) -> PyResult<String> {
        let (q, d) = (self.inner.clone(), dead_id);
        block_on(py, async move { q.retry_dead(&d).await }).map(|i| i.to_string())
    }

    /// Discards one dead letter; false when no entry has that id.
    fn delete_dead(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::dead_id)] dead_id: String,
    ) -> PyResult<bool> {
        let (q, d) = (self.inner.clone(), dead_id);
        block_on(py, async move { q.delete_dead(&d).await })
    }

    /// Deletes dead letters older than `older_than` seconds; returns how many.
    fn purge_dead(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::older_than)] older_than: i64,
    ) -> PyResult<u64> {
        let q = self.inner.clone();
        block_on(py, async move { q.purge_dead(older_than).await })
    }

    /// Deletes every dead letter of one task; returns how many.
    fn purge_dead_by_task(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::task_name)] task_name: String,
    ) -> PyResult<u64> {
        let (q, t) = (self.inner.clone(), task_name);
        block_on(py, async move { q.purge_dead_by_task(&t).await })
    }
}
