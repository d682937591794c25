//! JSON values as Python values, for the records that carry decoded JSON (an event's `data`):
//! `null`, booleans, strings, arrays and objects become `None`, `bool`, `str`, `list` and
//! `dict`; an integer becomes an `int`, any other number a `float`, as `json.loads` reads them.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

/// `v` as the Python value `json.loads` would give for its text.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let out = PyList::empty(py);
            for item in items {
                out.append(to_py(py, item)?)?;
            }
            out.into_any()
        }
        Value::Object(map) => {
            let out = PyDict::new(py);
            for (k, item) in map {
                out.set_item(k, to_py(py, item)?)?;
            }
            out.into_any()
        }
    })
}
