//! Engine errors as Python exceptions.
//!
//! The exception classes live in pure Python (`flexiq/exceptions.py`) so they can also derive
//! from `KeyError`, `ValueError` or `TimeoutError`; this module picks the class for each error
//! kind and raises an instance carrying the message, the stable `code`, and for job outcomes
//! the job id, status and last error (for a revoked task, the task's name).

use flexiq_core::Error as CoreError;
use flexiq_runtime::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The Python class name for an error.
fn class_name(err: &Error) -> &'static str {
    match err {
        Error::Core(CoreError::JobNotFound(_)) => "JobNotFound",
        Error::JobFailed { .. } => "JobFailed",
        Error::JobCancelled { .. } => "JobCancelled",
        other => match other.code() {
            "NOT_FOUND" => "NotFound",
            "INVALID_ARGUMENT" => "InvalidArgument",
            "QUEUE_FULL" => "QueueFull",
            "TASK_REVOKED" => "TaskRevoked",
            "CONTRACT_TOO_OLD" => "ContractTooOld",
            "SUPERSEDED" => "Superseded",
            "CONFLICT" => "Conflict",
            "UNSUPPORTED" => "Unsupported",
            "CLOSED" => "Closed",
            "TIMEOUT" => "FlexiqTimeout",
            "BACKEND" => "BackendError",
            _ => "FlexiqError",
        },
    }
}

fn build(py: Python<'_>, err: &Error, class: &str) -> PyResult<PyErr> {
    let module = py.import("flexiq.exceptions")?;
    let cls = module.getattr(class)?;
    let kwargs = PyDict::new(py);
    match err {
        Error::Core(CoreError::JobNotFound(id)) | Error::Core(CoreError::Superseded(id)) => {
            kwargs.set_item("job_id", id.as_str())?;
        }
        Error::Core(CoreError::Backend { retryable, .. }) => kwargs.set_item("retryable", *retryable)?,
        Error::Core(CoreError::TaskRevoked { task }) => kwargs.set_item("task", task)?,
        Error::JobFailed { job_id, status, error } => {
            kwargs.set_item("job_id", job_id.as_str())?;
            kwargs.set_item("status", status.as_str())?;
            kwargs.set_item("error", error.as_deref())?;
        }
        Error::JobCancelled { job_id, error } => {
            kwargs.set_item("job_id", job_id.as_str())?;
            kwargs.set_item("error", error.as_deref())?;
        }
        _ => {}
    }
    let value = cls.call((err.to_string(),), Some(&kwargs))?;
    Ok(PyErr::from_value(value))
}

/// The flexiq exception for an engine error.
pub(crate) fn to_py_err(err: Error) -> PyErr {
    let class = class_name(&err);
    raise(err, class)
}

fn raise(err: Error, class: &str) -> PyErr {
    Python::attach(|py| {
        build(py, &err, class).unwrap_or_else(|e| PyRuntimeError::new_err(format!("{err} ({e})")))
    })
}

/// An `InvalidArgument` exception raised by the binding itself (bad Python input).
pub(crate) fn invalid(msg: impl Into<String>) -> PyErr {
    to_py_err(Error::invalid(msg))
}

/// A `WrongType` exception (an `InvalidArgument` that is also a `TypeError`) raised by the
/// binding for a value of the wrong Python type.
pub(crate) fn wrong_type(msg: impl Into<String>) -> PyErr {
    raise(Error::invalid(msg), "WrongType")
}

/// The message of a core `InvalidArgument` without the kind's prefix, for a binding error that
/// adds its own context (which node, which key) in front of it.
pub(crate) fn core_message(e: CoreError) -> String {
    match e {
        CoreError::InvalidArgument(m) => m,
        other => other.to_string(),
    }
}
