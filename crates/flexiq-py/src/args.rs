//! The one check of every value a native call takes from Python.
//!
//! pyo3's own conversions would let a `bool` through as an integer (it is an `int` subclass),
//! raise a bare `TypeError` or `OverflowError` for a float, a string or a number past 64 bits,
//! and take NaN or an infinity as a float: each would reach the caller as something other than
//! a `flexiq.FlexiqError`, or (the bool) be written as a priority. So every parameter of every
//! native method is read through [`FromArg`], by the converter of the same name in this module
//! (`#[pyo3(from_py_with = args::limit)] limit: i64`), which names the parameter in its errors;
//! and the dict readers of enqueue options, flows, schedulers, retention and workflow stages
//! read their keys with [`item`], which does the same under the name they give.
//!
//! A value of the wrong type is `flexiq.WrongType` (an `InvalidArgument` that is also a
//! `TypeError`, as Python's own wrong types are); an integer no i64 holds, a negative one where
//! none may be, NaN or an infinity is `InvalidArgument`. Ranges beyond that (a limit of 1 to
//! 10,000, a priority within ±2,097,152) are the runtime's, which names the argument as well.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::{invalid, wrong_type};

/// A value read from Python as `Self`, its errors naming it `what`.
pub(crate) trait FromArg<'py>: Sized {
    /// Reads `v`.
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self>;
}

/// The Python type name of `v`, for messages.
pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".to_string())
}

fn wrong(what: &str, kind: &str, v: &Bound<'_, PyAny>) -> PyErr {
    wrong_type(format!("{what} must be {kind}, not {}", type_name(v)))
}

/// Whether `v` is an `int` and not a `bool`.
fn is_int(v: &Bound<'_, PyAny>) -> bool {
    v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>()
}

impl<'py> FromArg<'py> for i64 {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if !is_int(v) {
            return Err(wrong(what, "an integer", v));
        }
        v.extract().map_err(|_| invalid(format!("{what} {v} is out of range")))
    }
}

impl<'py> FromArg<'py> for u64 {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        let n = i64::from_arg(what, v)?;
        u64::try_from(n).map_err(|_| invalid(format!("{what} {n} must not be negative")))
    }
}

impl<'py> FromArg<'py> for f64 {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        let x: f64 = if is_int(v) {
            v.extract().map_err(|_| invalid(format!("{what} {v} is out of range")))?
        } else if v.is_instance_of::<PyFloat>() {
            v.extract()?
        } else {
            return Err(wrong(what, "a number", v));
        };
        if !x.is_finite() {
            return Err(invalid(format!("{what} must be a finite number, not {x}")));
        }
        Ok(x)
    }
}

impl<'py> FromArg<'py> for bool {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if !v.is_instance_of::<PyBool>() {
            return Err(wrong(what, "a bool", v));
        }
        v.extract()
    }
}

impl<'py> FromArg<'py> for String {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if !v.is_instance_of::<PyString>() {
            return Err(wrong(what, "a string", v));
        }
        v.extract().map_err(|_| invalid(format!("{what} is not valid UTF-8 text")))
    }
}

/// A payload or partial: `bytes` only (the Python layer encodes values with the serializer).
pub(crate) struct Bytes(pub(crate) Vec<u8>);

impl<'py> FromArg<'py> for Bytes {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        let b = v.cast::<PyBytes>().map_err(|_| wrong(what, "bytes", v))?;
        Ok(Bytes(b.as_bytes().to_vec()))
    }
}

/// A list or tuple (a bare string, which would read as its letters, is refused); item `i` is
/// named `what[i]`.
impl<'py, T: FromArg<'py>> FromArg<'py> for Vec<T> {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if !v.is_instance_of::<PyList>() && !v.is_instance_of::<PyTuple>() {
            return Err(wrong(what, "a list", v));
        }
        v.try_iter()?.enumerate().map(|(i, x)| T::from_arg(&format!("{what}[{i}]"), &x?)).collect()
    }
}

/// A duration or time in milliseconds: an integer, named with its unit in messages.
pub(crate) struct Millis(pub(crate) i64);

impl<'py> FromArg<'py> for Millis {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if !is_int(v) {
            return Err(wrong(what, "an integer (ms)", v));
        }
        i64::from_arg(what, v).map(Millis)
    }
}

/// Job ids: a list or tuple of strings (the ids themselves are the engine's to check).
pub(crate) struct JobIds(pub(crate) Vec<String>);

impl<'py> FromArg<'py> for JobIds {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if !v.is_instance_of::<PyList>() && !v.is_instance_of::<PyTuple>() {
            return Err(wrong(what, "a list of job ids", v));
        }
        Vec::from_arg(what, v).map(JobIds)
    }
}

/// A tuple or list of exactly `n` items, for the records the Python layer passes as tuples.
fn items_of<'py>(what: &str, v: &Bound<'py, PyAny>, n: usize) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if !v.is_instance_of::<PyList>() && !v.is_instance_of::<PyTuple>() {
        return Err(wrong(what, &format!("a tuple of {n}"), v));
    }
    let items = v.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    if items.len() != n {
        return Err(invalid(format!("{what} must hold {n} items, not {}", items.len())));
    }
    Ok(items)
}

impl<'py, A: FromArg<'py>, B: FromArg<'py>> FromArg<'py> for (A, B) {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        let i = items_of(what, v, 2)?;
        Ok((A::from_arg(&format!("{what}[0]"), &i[0])?, B::from_arg(&format!("{what}[1]"), &i[1])?))
    }
}

impl<'py, A: FromArg<'py>, B: FromArg<'py>, C: FromArg<'py>, D: FromArg<'py>> FromArg<'py> for (A, B, C, D) {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        let i = items_of(what, v, 4)?;
        Ok((
            A::from_arg(&format!("{what}[0]"), &i[0])?,
            B::from_arg(&format!("{what}[1]"), &i[1])?,
            C::from_arg(&format!("{what}[2]"), &i[2])?,
            D::from_arg(&format!("{what}[3]"), &i[3])?,
        ))
    }
}

impl<'py> FromArg<'py> for Bound<'py, PyDict> {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        v.cast::<PyDict>().cloned().map_err(|_| wrong(what, "a dict", v))
    }
}

impl<'py> FromArg<'py> for Bound<'py, PyList> {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        v.cast::<PyList>().cloned().map_err(|_| wrong(what, "a list", v))
    }
}

/// `None` is absent; anything else is read as `T`.
impl<'py, T: FromArg<'py>> FromArg<'py> for Option<T> {
    fn from_arg(what: &str, v: &Bound<'py, PyAny>) -> PyResult<Self> {
        if v.is_none() {
            return Ok(None);
        }
        T::from_arg(what, v).map(Some)
    }
}

/// The value under `key` of `d` read as `T` and named `what`; `None` when the key is absent or
/// holds `None`.
pub(crate) fn item<'py, T: FromArg<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    what: &str,
) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) => Option::<T>::from_arg(what, &v),
        None => Ok(None),
    }
}

/// One converter per native parameter name, for `#[pyo3(from_py_with = args::<name>)]`: each
/// reads its parameter as the method's type through [`FromArg`] under its own name.
macro_rules! named {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("Reads the parameter `", stringify!($name), "`.")]
        pub(crate) fn $name<'py, T: FromArg<'py>>(v: &Bound<'py, PyAny>) -> PyResult<T> {
            T::from_arg(stringify!($name), v)
        }
    )*};
}

named!(
    absolute_ms,
    after,
    auto_migrate,
    batch,
    block_ms,
    bucket,
    child_id,
    claim_ahead,
    concurrency,
    count,
    created_after,
    created_before,
    data,
    data_json,
    dead_id,
    delay_ms,
    durability,
    enabled,
    error,
    error_contains,
    events_max_age_ms,
    events_max_len,
    expected,
    fence,
    fairness_cap,
    fairness_group_by,
    force,
    from_start,
    grace_ms,
    include_delayed,
    items,
    job_id,
    jobs,
    key,
    kinds,
    lease_ms,
    level,
    lifo,
    limit,
    maintenance,
    max_age_ms,
    max_concurrent,
    max_len,
    max_pending,
    max_stalled_count,
    message,
    metadata_contains,
    metrics_bind,
    name,
    namespace,
    next_poll_at_ms,
    offset,
    older_than,
    options,
    payload,
    poll_ms,
    prefetch,
    priority,
    progress,
    queue,
    queue_name,
    queues,
    rate_limit,
    reason,
    remove_children,
    repeat,
    retention,
    run_id,
    scheduler_id,
    serves,
    should_retry,
    shutdown_timeout_ms,
    since,
    since_ms,
    stage_ids,
    status,
    task,
    task_name,
    template,
    threshold_ms,
    timeout_ms,
    url,
    value,
    worker_id,
);
