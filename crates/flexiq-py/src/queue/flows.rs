//! Flows on `NativeQueue`, as the runtime's `queue/flows.rs`: inserting a tree of jobs across
//! queues in one write, a parent's children by outcome one page at a time, and detaching a
//! child from the jobs waiting on it.
//!
//! The tree arrives as nested dicts converted once by `crate::flow`; the page as a dict of
//! four lists of child dicts (results as `bytes`, which the Python layer decodes with the
//! queue's serializer) and `next_after`. Ids, the cursor and the page size (1 to 10,000) are
//! checked by the runtime: a bad one is `InvalidArgument`, an unknown job `NotFound`.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::NativeQueue;
use crate::args;
use crate::convert;
use crate::flow::flow_tree;
use crate::runtime::block_on;

#[pymethods]
impl NativeQueue {
    /// Inserts a flow in one write; the ids in the order the nodes were given (the root, then
    /// each child's subtree in turn).
    fn add_flow(&self, py: Python<'_>, tree: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let root = flow_tree(tree)?;
        let q = self.inner.clone();
        let ids = block_on(py, async move { q.add_flow(root).await })?;
        Ok(ids.into_iter().map(|i| i.to_string()).collect())
    }

    /// One page of a job's dependencies by outcome: `{"processed", "unprocessed", "ignored",
    /// "failed", "next_after"}`.
    fn get_dependencies<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::job_id)] job_id: String,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
        #[pyo3(from_py_with = args::limit)] limit: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (q, id, after) = (self.inner.clone(), job_id, after);
        let deps = block_on(py, async move { q.get_dependencies(&id, after.as_deref(), limit).await })?;
        convert::dependencies(py, &deps)
    }

    /// Detaches an unfinished child from the jobs waiting on it; false when nothing changed.
    fn remove_child_dependency(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::child_id)] child_id: String,
    ) -> PyResult<bool> {
        let (q, id) = (self.inner.clone(), child_id);
        block_on(py, async move { q.remove_child_dependency(&id).await })
    }
}
