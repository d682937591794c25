//! Listings on `NativeQueue`: jobs (plain and filtered, offset and keyset) and the archive.
//! A keyset page comes back as `(items, next_cursor)`; the Python layer wraps it in `Page`.

use flexiq_core::{JobFilter, JobStatus, Page};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::NativeQueue;
use crate::args;
use crate::convert;
use crate::errors::to_py_err;
use crate::runtime::block_on;

/// A page as `(items, next_cursor)`.
type PyPage<'py> = (Bound<'py, PyList>, Option<String>);

#[allow(clippy::too_many_arguments)]
fn filter(
    status: Option<String>,
    queue: Option<String>,
    task: Option<String>,
    metadata_contains: Option<String>,
    error_contains: Option<String>,
    created_after: Option<i64>,
    created_before: Option<i64>,
) -> PyResult<JobFilter> {
    let status = status.map(|s| s.parse::<JobStatus>().map_err(|e| to_py_err(e.into()))).transpose()?;
    Ok(JobFilter { status, queue, task, metadata_contains, error_contains, created_after, created_before })
}

fn page<'py>(py: Python<'py>, p: &Page<flexiq_core::Job>) -> PyResult<PyPage<'py>> {
    Ok((convert::jobs(py, &p.items)?, p.next_cursor.clone()))
}

#[pymethods]
impl NativeQueue {
    /// Jobs by status / queue / task, newest first (`limit` 1 to 10,000, `offset` 0 or more).
    #[pyo3(signature = (status=None, queue=None, task=None, limit=50, offset=0))]
    fn list_jobs<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::status)] status: Option<String>,
        #[pyo3(from_py_with = args::queue)] queue: Option<String>,
        #[pyo3(from_py_with = args::task)] task: Option<String>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::offset)] offset: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let f = filter(status, queue, task, None, None, None, None)?;
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.list_jobs(&f, limit, offset).await })?;
        convert::jobs(py, &rows)
    }

    /// The wider filter: plus metadata / error substrings and a created-at range (Unix ms).
    #[pyo3(signature = (status=None, queue=None, task=None, metadata_contains=None, error_contains=None,
        created_after=None, created_before=None, limit=50, offset=0))]
    #[allow(clippy::too_many_arguments)]
    fn list_jobs_filtered<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::status)] status: Option<String>,
        #[pyo3(from_py_with = args::queue)] queue: Option<String>,
        #[pyo3(from_py_with = args::task)] task: Option<String>,
        #[pyo3(from_py_with = args::metadata_contains)] metadata_contains: Option<String>,
        #[pyo3(from_py_with = args::error_contains)] error_contains: Option<String>,
        #[pyo3(from_py_with = args::created_after)] created_after: Option<i64>,
        #[pyo3(from_py_with = args::created_before)] created_before: Option<i64>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::offset)] offset: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let f =
            filter(status, queue, task, metadata_contains, error_contains, created_after, created_before)?;
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.list_jobs_filtered(&f, limit, offset).await })?;
        convert::jobs(py, &rows)
    }

    /// Keyset twin of `list_jobs`, ordered by created time.
    #[pyo3(signature = (status=None, queue=None, task=None, limit=50, after=None))]
    fn list_jobs_after<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::status)] status: Option<String>,
        #[pyo3(from_py_with = args::queue)] queue: Option<String>,
        #[pyo3(from_py_with = args::task)] task: Option<String>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
    ) -> PyResult<PyPage<'py>> {
        let f = filter(status, queue, task, None, None, None, None)?;
        let q = self.inner.clone();
        let p = block_on(py, async move { q.list_jobs_after(&f, limit, after.as_deref()).await })?;
        page(py, &p)
    }

    /// Keyset twin of `list_jobs_filtered`.
    #[pyo3(signature = (status=None, queue=None, task=None, metadata_contains=None, error_contains=None,
        created_after=None, created_before=None, limit=50, after=None))]
    #[allow(clippy::too_many_arguments)]
    fn list_jobs_filtered_after<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::status)] status: Option<String>,
        #[pyo3(from_py_with = args::queue)] queue: Option<String>,
        #[pyo3(from_py_with = args::task)] task: Option<String>,
        #[pyo3(from_py_with = args::metadata_contains)] metadata_contains: Option<String>,
        #[pyo3(from_py_with = args::error_contains)] error_contains: Option<String>,
        #[pyo3(from_py_with = args::created_after)] created_after: Option<i64>,
        #[pyo3(from_py_with = args::created_before)] created_before: Option<i64>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
    ) -> PyResult<PyPage<'py>> {
        let f =
            filter(status, queue, task, metadata_contains, error_contains, created_after, created_before)?;
        let q = self.inner.clone();
        let p = block_on(py, async move { q.list_jobs_filtered_after(&f, limit, after.as_deref()).await })?;
        page(py, &p)
    }

    /// The archive, newest first, offset-paginated.
    #[pyo3(signature = (limit=50, offset=0))]
    fn list_archived<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::offset)] offset: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.list_archived(limit, offset).await })?;
        convert::jobs(py, &rows)
    }

    /// Keyset twin of `list_archived`, ordered by completed time.
    #[pyo3(signature = (limit=50, after=None))]
    fn list_archived_after<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
    ) -> PyResult<PyPage<'py>> {
        let q = self.inner.clone();
        let p = block_on(py, async move { q.list_archived_after(limit, after.as_deref()).await })?;
        page(py, &p)
    }
}
