//! The one conversion of enqueue options from Python to the engine's [`EnqueueOptions`].
//!
//! The Python layer (`flexiq/_options.py`) turns the public options (seconds, datetimes,
//! dicts, `JobResult`s) into one dict in engine units; `enqueue` and every item of
//! `enqueue_many` hand that dict here, so each option is checked and converted in exactly
//! one place. Keys: `queue`, `priority`, `delay_ms` (ms from now), `run_at` (Unix ms),
//! `max_retries`, `backoff_ms`, `backoff_max_ms`, `timeout_ms` (ms), `unique_key`,
//! `metadata` (JSON object text), `depends_on` (job ids), `group_key`, `lifo` (bool),
//! `dedup` (a dict: `id`, `mode`, `ttl_ms`, `extend`, `replace`). A missing key or `None`
//! leaves the engine's default; an unknown key, a wrong type or a number out of range is
//! `InvalidArgument` naming the key.

use flexiq_core::dedup::{DedupMode, DedupOptions};
use flexiq_core::{Backoff, EnqueueOptions};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};

use crate::errors::{core_message, invalid};

/// Every key an options dict may carry.
pub(crate) const KEYS: [&str; 14] = [
    "queue",
    "priority",
    "delay_ms",
    "run_at",
    "max_retries",
    "backoff_ms",
    "backoff_max_ms",
    "timeout_ms",
    "unique_key",
    "metadata",
    "depends_on",
    "group_key",
    "lifo",
    "dedup",
];

/// Every key a `dedup` dict may carry.
const DEDUP_KEYS: [&str; 5] = ["id", "mode", "ttl_ms", "extend", "replace"];

/// The value of `key`, `None` when absent or `None`; a wrong type names the key.
fn get<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str, what: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v.extract().map(Some).map_err(|_| {
            if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
                invalid(format!("enqueue option {key} {v} is out of range"))
            } else {
                invalid(format!("enqueue option {key} must be {what}, not {}", type_name(&v)))
            }
        }),
        _ => Ok(None),
    }
}

/// A flag, `false` when absent or `None`; only a `bool` is one (not 0 or 1).
fn flag(d: &Bound<'_, PyDict>, key: &str) -> PyResult<bool> {
    match d.get_item(key)? {
        Some(v) if v.is_instance_of::<PyBool>() => v.extract(),
        Some(v) if !v.is_none() => {
            Err(invalid(format!("enqueue option {key} must be a bool, not {}", type_name(&v))))
        }
        _ => Ok(false),
    }
}

/// The `dedup` option, `None` when absent or `None`; checked by core's `validate` as well,
/// so a ttl the mode does not take, or one of 0, is refused here already.
fn dedup(d: &Bound<'_, PyDict>) -> PyResult<Option<DedupOptions>> {
    let v = match d.get_item("dedup")? {
        Some(v) if !v.is_none() => v,
        _ => return Ok(None),
    };
    let spec = v
        .cast::<PyDict>()
        .map_err(|_| invalid(format!("enqueue option dedup must be a dict, not {}", type_name(&v))))?;
    for k in spec.keys() {
        let k = k.extract::<String>().map_err(|_| invalid("dedup keys must be strings"))?;
        if !DEDUP_KEYS.contains(&k.as_str()) {
            return Err(invalid(format!("unknown dedup key {k:?} (expected {})", DEDUP_KEYS.join(", "))));
        }
    }
    let id: String = match spec.get_item("id")? {
        Some(i) if !i.is_none() => {
            i.extract().map_err(|_| invalid(format!("dedup id must be a string, not {}", type_name(&i))))?
        }
        _ => return Err(invalid("dedup needs an id")),
    };
    let what = |key: &str| format!("dedup {id}: {key}");
    let mode = match spec.get_item("mode")? {
        Some(m) if !m.is_none() => {
            let name: String = m
                .extract()
                .map_err(|_| invalid(format!("{} must be a string, not {}", what("mode"), type_name(&m))))?;
            DedupMode::parse(&name).map_err(|e| invalid(format!("dedup {id}: {}", core_message(e))))?
        }
        _ => DedupMode::default(),
    };
    let ttl_ms = match spec.get_item("ttl_ms")? {
        Some(t) if t.is_instance_of::<PyInt>() && !t.is_instance_of::<PyBool>() => {
            let n: i64 =
                t.extract().map_err(|_| invalid(format!("{} {t} is out of range", what("ttl_ms"))))?;
            Some(u64::try_from(n).map_err(|_| invalid(format!("{} {n} must be positive", what("ttl_ms"))))?)
        }
        Some(t) if !t.is_none() => {
            return Err(invalid(format!(
                "{} must be an integer (ms), not {}",
                what("ttl_ms"),
                type_name(&t)
            )));
        }
        _ => None,
    };
    let opts = DedupOptions {
        mode,
        ttl_ms,
        extend: dedup_flag(spec, &id, "extend")?,
        replace: dedup_flag(spec, &id, "replace")?,
        id,
    };
    opts.validate().map_err(|e| invalid(core_message(e)))?;
    Ok(Some(opts))
}

fn dedup_flag(spec: &Bound<'_, PyDict>, id: &str, key: &str) -> PyResult<bool> {
    match spec.get_item(key)? {
        Some(v) if v.is_instance_of::<PyBool>() => v.extract(),
        Some(v) if !v.is_none() => {
            Err(invalid(format!("dedup {id}: {key} must be a bool, not {}", type_name(&v))))
        }
        _ => Ok(false),
    }
}

pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".to_string())
}

fn non_negative(key: &str, v: Option<i64>) -> PyResult<Option<u64>> {
    v.map(|n| u64::try_from(n).map_err(|_| invalid(format!("enqueue option {key} {n} must not be negative"))))
        .transpose()
}

/// Engine options from an options dict (`None`: every default).
pub(crate) fn enqueue_options(d: Option<&Bound<'_, PyDict>>) -> PyResult<EnqueueOptions> {
    let Some(d) = d else { return Ok(EnqueueOptions::default()) };
    for k in d.keys() {
        let k = k.extract::<String>().map_err(|_| invalid("enqueue option names must be strings"))?;
        if !KEYS.contains(&k.as_str()) {
            return Err(invalid(format!("unknown enqueue option {k:?}")));
        }
    }
    let priority = get::<i64>(d, "priority", "an integer")?
        .map(|p| i32::try_from(p).map_err(|_| invalid(format!("priority {p} is outside the 32-bit range"))))
        .transpose()?;
    let max_retries = get::<i64>(d, "max_retries", "an integer")?
        .map(|n| u32::try_from(n).map_err(|_| invalid(format!("max_retries {n} must be 0 or more"))))
        .transpose()?;
    let base = non_negative("backoff_ms", get(d, "backoff_ms", "an integer (ms)")?)?;
    let max = non_negative("backoff_max_ms", get(d, "backoff_max_ms", "an integer (ms)")?)?;
    let backoff = match (base, max) {
        (None, None) => None,
        (base, max) => {
            let d = Backoff::default();
            let base_ms = base.unwrap_or(d.base_ms);
            Some(Backoff { base_ms, max_ms: max.unwrap_or(d.max_ms.max(base_ms)) })
        }
    };
    let timeout_ms = match get::<i64>(d, "timeout_ms", "an integer (ms)")? {
        Some(t) if t <= 0 => return Err(invalid(format!("timeout {t} ms must be positive"))),
        t => non_negative("timeout_ms", t)?,
    };
    Ok(EnqueueOptions {
        queue: get(d, "queue", "a string")?,
        priority,
        delay_ms: non_negative("delay_ms", get(d, "delay_ms", "an integer (ms)")?)?,
        run_at: get(d, "run_at", "an integer (Unix ms)")?,
        max_retries,
        backoff,
        timeout_ms,
        unique_key: get(d, "unique_key", "a string")?,
        metadata: get(d, "metadata", "JSON object text")?,
        depends_on: get::<Vec<String>>(d, "depends_on", "a list of job ids")?.unwrap_or_default(),
        group_key: get(d, "group_key", "a string")?,
        lifo: flag(d, "lifo")?,
        dedup: dedup(d)?,
        ..Default::default()
    })
}
