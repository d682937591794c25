//! Deduplicated enqueues on `NativeQueue`, as the runtime's `queue/dedup.rs`: an enqueue that
//! says whether its job was inserted, and the dedup records behind the `dedup` option (which
//! job holds a key, deleting a key).
//!
//! The `dedup` option itself is converted with the other enqueue options in `crate::options`;
//! the modes are decided by core inside the store's enqueue.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::NativeQueue;
use crate::args::{self, Bytes};
use crate::options::enqueue_options;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// Enqueues one job like `enqueue`; `(id, created)`, `created` false when a unique key or
    /// dedup key returned an existing job (whose id it is).
    #[pyo3(signature = (task, payload, options=None))]
    fn enqueue_outcome(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::task)] task: String,
        #[pyo3(from_py_with = args::payload)] payload: Bytes,
        #[pyo3(from_py_with = args::options)] options: Option<Bound<'_, PyDict>>,
    ) -> PyResult<(String, bool)> {
        let opts = enqueue_options(options.as_ref())?;
        let (q, task, payload) = (self.inner.clone(), task, payload.0);
        let out = block_on(py, async move { q.enqueue_outcome(&task, payload, opts).await })?;
        Ok((out.id.to_string(), out.created))
    }

    /// The job holding dedup key `key` now; `None` when the key is free.
    fn dedup_job_id(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
    ) -> PyResult<Option<String>> {
        let (q, key) = (self.inner.clone(), key);
        let id = block_on(py, async move { q.dedup_job_id(&key).await })?;
        Ok(id.map(|i| i.to_string()))
    }

    /// Deletes dedup key `key` (the holding job is left alone); true when it existed.
    fn delete_dedup_key(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
    ) -> PyResult<bool> {
        let (q, key) = (self.inner.clone(), key);
        block_on(py, async move { q.delete_dedup_key(&key).await })
    }
}
