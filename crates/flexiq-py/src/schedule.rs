//! The one conversion of a job scheduler's rule and template from Python to the engine's
//! [`RepeatRule`] and [`JobTemplate`].
//!
//! `Queue.upsert_job_scheduler` (`flexiq/_queue/schedulers.py`) hands the public `repeat` dict
//! here as it is, and the template with its payload encoded by the queue's serializer and its
//! options converted by `native_options`:
//!
//! - `repeat`: `cron` (a pattern) with an optional `tz` (an IANA zone; UTC when absent), or
//!   `every_ms` (ms); then `limit` (jobs in all, 1 or more), `start_at_ms` / `end_at_ms` (Unix
//!   ms), `immediately` (a bool), `catch_up` (`"latest"`, the default, `"none"` or `"all"`) and
//!   `catch_up_max` (with `"all"` only: most slots a round fires, default 100).
//! - `template`: `task`, `payload` (bytes) and `options` (an enqueue options dict, converted by
//!   `crate::options`).
//!
//! A missing key or `None` leaves the default. An unknown key, a wrong type (a `bool` is not an
//! integer here), a number no i64 holds, both or neither of `cron` and `every_ms`, or a key that
//! does not apply (`tz` without `cron`, `catch_up_max` without `"all"`) is `InvalidArgument`
//! naming the scheduler and the key. The rules on the values are core's
//! (`flexiq_core::schedule`), so they hold for every binding alike: the rule's (a cron pattern
//! that parses, a known zone, a period or limit of 1 or more, a window that ends after it
//! starts) are checked here as well, so their errors name the scheduler; what a template may
//! set is checked when the runtime validates the upsert.

use flexiq_core::schedule::MAX_CATCH_UP;
use flexiq_core::{CatchUp, JobTemplate, Repeat, RepeatRule};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args::{self, Bytes};
use crate::errors::{core_message, invalid};
use crate::options::enqueue_options;

/// Every key a `repeat` dict may carry.
pub(crate) const REPEAT_KEYS: [&str; 9] = [
    "cron",
    "tz",
    "every_ms",
    "limit",
    "start_at_ms",
    "end_at_ms",
    "immediately",
    "catch_up",
    "catch_up_max",
];

/// Every key a native template dict may carry.
const TEMPLATE_KEYS: [&str; 3] = ["task", "payload", "options"];

/// The `catch_up` names, in the engine's order.
pub(crate) const CATCH_UP_NAMES: [&str; 3] = ["latest", "none", "all"];

/// The cap of `catch_up = "all"` when `catch_up_max` is not given.
pub(crate) const DEFAULT_CATCH_UP_MAX: u32 = 100;

/// An integer value (a `bool` is refused rather than read as 0 or 1).
fn int(d: &Bound<'_, PyDict>, key: &str, at: &str) -> PyResult<Option<i64>> {
    args::item(d, key, &format!("{at}: {key}"))
}

/// A string value.
fn text(d: &Bound<'_, PyDict>, key: &str, at: &str) -> PyResult<Option<String>> {
    args::item(d, key, &format!("{at}: {key}"))
}

/// Refuses a key that is not in `allowed`, or not a string.
fn check_keys(d: &Bound<'_, PyDict>, allowed: &[&str], what: &str, at: &str) -> PyResult<()> {
    for k in d.keys() {
        let k: String = k.extract().map_err(|_| invalid(format!("{at}: {what} keys must be strings")))?;
        if !allowed.contains(&k.as_str()) {
            return Err(invalid(format!("{at}: unknown {what} key {k:?} (expected {})", allowed.join(", "))));
        }
    }
    Ok(())
}

/// The engine's rule from a `repeat` dict of scheduler `id`.
pub(crate) fn repeat_rule(id: &str, d: &Bound<'_, PyDict>) -> PyResult<RepeatRule> {
    let at = format!("scheduler {id}: repeat");
    check_keys(d, &REPEAT_KEYS, "repeat", &at)?;
    let tz = text(d, "tz", &at)?;
    let repeat = match (text(d, "cron", &at)?, int(d, "every_ms", &at)?) {
        (Some(_), Some(_)) => return Err(invalid(format!("{at}: give cron or every_ms, not both"))),
        (None, None) => {
            return Err(invalid(format!("{at}: give cron (a pattern) or every_ms (a period in ms)")))
        }
        (Some(pattern), None) => Repeat::Cron { pattern, tz },
        (None, Some(every_ms)) => {
            if tz.is_some() {
                return Err(invalid(format!("{at}: tz applies to a cron pattern, not to every_ms")));
            }
            let every_ms = u64::try_from(every_ms)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| invalid(format!("{at}: every_ms {every_ms} must be 1 or more")))?;
            Repeat::Every { every_ms }
        }
    };
    let limit = int(d, "limit", &at)?
        .map(|n| {
            u64::try_from(n)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| invalid(format!("{at}: limit {n} must be 1 or more")))
        })
        .transpose()?;
    let immediately = args::item::<bool>(d, "immediately", &format!("{at}: immediately"))?.unwrap_or(false);
    let max = int(d, "catch_up_max", &at)?;
    let catch_up = match text(d, "catch_up", &at)?.as_deref().unwrap_or("latest") {
        "all" => {
            let max = max.unwrap_or(i64::from(DEFAULT_CATCH_UP_MAX));
            let max =
                u32::try_from(max).ok().filter(|m| (1..=MAX_CATCH_UP).contains(m)).ok_or_else(|| {
                    invalid(format!("{at}: catch_up_max {max} must be between 1 and {MAX_CATCH_UP}"))
                })?;
            CatchUp::All { max }
        }
        other if max.is_some() && CATCH_UP_NAMES.contains(&other) => {
            return Err(invalid(format!("{at}: catch_up_max applies to catch_up \"all\", not {other:?}")));
        }
        "latest" => CatchUp::Latest,
        "none" => CatchUp::None,
        other => {
            return Err(invalid(format!(
                "{at}: unknown catch_up {other:?} (expected {})",
                CATCH_UP_NAMES.join(", ")
            )));
        }
    };
    let rule = RepeatRule {
        repeat,
        limit,
        start_at_ms: int(d, "start_at_ms", &at)?,
        end_at_ms: int(d, "end_at_ms", &at)?,
        immediately,
        catch_up,
    };
    // Core's check, here too so its message names the scheduler (the runtime repeats it).
    rule.validate().map_err(|e| invalid(format!("{at}: {}", core_message(e))))?;
    Ok(rule)
}

/// The engine's template from a native template dict (`task`, `payload`, `options`) of
/// scheduler `id`.
pub(crate) fn job_template(id: &str, d: &Bound<'_, PyDict>) -> PyResult<JobTemplate> {
    let at = format!("scheduler {id}: template");
    check_keys(d, &TEMPLATE_KEYS, "template", &at)?;
    let task = text(d, "task", &at)?.ok_or_else(|| invalid(format!("{at} needs a task name")))?;
    let payload =
        args::item::<Bytes>(d, "payload", &format!("{at}: payload"))?.map_or_else(Vec::new, |b| b.0);
    let options = args::item::<Bound<'_, PyDict>>(d, "options", &format!("{at}: options"))?;
    // Every error of the options is about the input: it becomes InvalidArgument naming the
    // scheduler.
    let options = enqueue_options(options.as_ref()).map_err(|e| {
        Python::attach(|py| {
            let m = e.value(py).to_string();
            invalid(format!("{at}: {}", m.strip_prefix("invalid argument: ").unwrap_or(&m)))
        })
    })?;
    Ok(JobTemplate { task, payload, options })
}
