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
use pyo3::types::PyDict;

use crate::args::{self, type_name, FromArg, JobIds, Millis};
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

/// The value of `key` read as `T` (see [`FromArg`]), `None` when absent or `None`; its
/// errors name the option.
fn get<'py, T: FromArg<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    args::item(d, key, &format!("enqueue option {key}"))
}

/// A flag, `false` when absent or `None`; only a `bool` is one (not 0 or 1).
fn flag(d: &Bound<'_, PyDict>, key: &str) -> PyResult<bool> {
    Ok(get::<bool>(d, key)?.unwrap_or(false))
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
    let id: String = args::item(spec, "id", "dedup id")?.ok_or_else(|| invalid("dedup needs an id"))?;
    let what = |key: &str| format!("dedup {id}: {key}");
    let mode = match args::item::<String>(spec, "mode", &what("mode"))? {
        Some(name) => {
            DedupMode::parse(&name).map_err(|e| invalid(format!("dedup {id}: {}", core_message(e))))?
        }
        None => DedupMode::default(),
    };
    let ttl_ms = args::item::<Millis>(spec, "ttl_ms", &what("ttl_ms"))?
        .map(|Millis(n)| {
            u64::try_from(n).map_err(|_| invalid(format!("{} {n} must be positive", what("ttl_ms"))))
        })
        .transpose()?;
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
    Ok(args::item::<bool>(spec, key, &format!("dedup {id}: {key}"))?.unwrap_or(false))
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
    let priority = get::<i64>(d, "priority")?
        .map(|p| i32::try_from(p).map_err(|_| invalid(format!("priority {p} is outside the 32-bit range"))))
        .transpose()?;
    let max_retries = get::<i64>(d, "max_retries")?
        .map(|n| u32::try_from(n).map_err(|_| invalid(format!("max_retries {n} must be 0 or more"))))
        .transpose()?;
    let base = non_negative("backoff_ms", get::<Millis>(d, "backoff_ms")?.map(|m| m.0))?;
    let max = non_negative("backoff_max_ms", get::<Millis>(d, "backoff_max_ms")?.map(|m| m.0))?;
    let backoff = match (base, max) {
        (None, None) => None,
        (base, max) => {
            let d = Backoff::default();
            let base_ms = base.unwrap_or(d.base_ms);
            Some(Backoff { base_ms, max_ms: max.unwrap_or(d.max_ms.max(base_ms)) })
        }
    };
    let timeout_ms = match get::<Millis>(d, "timeout_ms")?.map(|m| m.0) {
        Some(t) if t <= 0 => return Err(invalid(format!("timeout {t} ms must be positive"))),
        t => non_negative("timeout_ms", t)?,
    };
    Ok(EnqueueOptions {
        queue: get(d, "queue")?,
        priority,
        delay_ms: non_negative("delay_ms", get::<Millis>(d, "delay_ms")?.map(|m| m.0))?,
        run_at: get::<Millis>(d, "run_at")?.map(|m| m.0),
        max_retries,
        backoff,
        timeout_ms,
        unique_key: get(d, "unique_key")?,
        metadata: get(d, "metadata")?,
        depends_on: get::<JobIds>(d, "depends_on")?.map_or_else(Vec::new, |ids| ids.0),
        group_key: get(d, "group_key")?,
        lifo: flag(d, "lifo")?,
        dedup: dedup(d)?,
        ..Default::default()
    })
}
