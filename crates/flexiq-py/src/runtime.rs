//! The one tokio runtime the extension drives the engine with, and the bridge that runs an
//! engine future from a Python thread with the GIL released.
//!
//! Every blocking Python call goes through [`block_on`]: the calling thread gives up the GIL
//! (`py.detach`) for as long as Rust works, so other Python threads and the worker's handlers
//! keep running. The runtime is created on first use, so importing the module costs nothing.

use std::future::Future;
use std::sync::OnceLock;

use pyo3::prelude::*;

use crate::errors::to_py_err;

static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

/// The shared multi-threaded runtime.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8)))
            .thread_name("flexiq-rt")
            .enable_all()
            .build()
            .expect("the flexiq tokio runtime cannot be built")
    })
}

/// Runs `fut` to completion with the GIL released and maps its error to a flexiq exception.
pub(crate) fn block_on<T, F>(py: Python<'_>, fut: F) -> PyResult<T>
where
    F: Future<Output = flexiq_runtime::Result<T>> + Send,
    T: Send,
{
    py.detach(|| runtime().block_on(fut)).map_err(to_py_err)
}
