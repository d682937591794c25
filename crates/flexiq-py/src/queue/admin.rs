//! Retention, settings, schema and the contract floor on `NativeQueue`. Retention windows
//! go in as seconds and come back in milliseconds, as the spec says.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{retention_from, NativeQueue};
use crate::args;
use crate::convert;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// What the elected cleaner last applied, or `None` before any sweep.
    fn effective_retention<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let q = self.inner.clone();
        let e = block_on(py, async move { q.effective_retention().await })?;
        e.map(|e| convert::effective_retention(py, &e)).transpose()
    }

    /// Counts what a purge would delete now; `retention` is a dict of windows in seconds.
    #[pyo3(signature = (retention=None))]
    fn dry_run_retention<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::retention)] retention: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let r = retention.as_ref().map(retention_from).transpose()?;
        let q = self.inner.clone();
        let p = block_on(py, async move { q.dry_run_retention(r).await })?;
        convert::retention_preview(py, &p)
    }

    /// A setting's value, `None` when never set.
    fn get_setting(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
    ) -> PyResult<Option<String>> {
        let (q, k) = (self.inner.clone(), key);
        block_on(py, async move { q.get_setting(&k).await })
    }

    /// Writes a setting (last write wins).
    fn set_setting(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
        #[pyo3(from_py_with = args::value)] value: String,
    ) -> PyResult<()> {
        let (q, k, v) = (self.inner.clone(), key, value);
        block_on(py, async move { q.set_setting(&k, &v).await })
    }

    /// Compare-and-set; `expected=None` means the key must be unset.
    fn set_setting_if(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
        #[pyo3(from_py_with = args::expected)] expected: Option<String>,
        #[pyo3(from_py_with = args::value)] value: String,
    ) -> PyResult<bool> {
        let (q, k, v) = (self.inner.clone(), key, value);
        block_on(py, async move { q.set_setting_if(&k, expected.as_deref(), &v).await })
    }

    /// Deletes a setting; false when it did not exist.
    fn delete_setting(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
    ) -> PyResult<bool> {
        let (q, k) = (self.inner.clone(), key);
        block_on(py, async move { q.delete_setting(&k).await })
    }

    /// Every setting.
    fn list_settings(&self, py: Python<'_>) -> PyResult<std::collections::BTreeMap<String, String>> {
        let q = self.inner.clone();
        block_on(py, async move { q.list_settings().await })
    }

    /// Applies pending schema changes and reports what ran.
    fn migrate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = self.inner.clone();
        let m = block_on(py, async move { q.migrate().await })?;
        convert::migration(py, &m)
    }

    /// The storage's contract floor.
    fn min_contract(&self, py: Python<'_>) -> PyResult<u32> {
        let q = self.inner.clone();
        block_on(py, async move { q.min_contract().await })
    }

    /// Moves the contract floor (1 to this build's level).
    fn set_min_contract(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::level)] level: i64,
    ) -> PyResult<()> {
        let q = self.inner.clone();
        block_on(py, async move { q.set_min_contract(level).await })
    }
}
