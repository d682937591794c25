//! Checks on numbers and strings coming from JavaScript.
//!
//! JS numbers are doubles, so every count, limit, timestamp and duration arrives as an `f64`
//! and is checked here before the runtime sees it: NaN, infinities, fractions where a count is
//! expected and values out of range are `INVALID_ARGUMENT` naming the argument. Durations in
//! seconds may be fractional and are rounded to whole milliseconds.

use crate::error::{invalid, Result};

/// Largest integer a double holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A whole number in `[min, max]`.
pub(crate) fn int(what: &str, v: f64, min: i64, max: i64) -> Result<i64> {
    if !v.is_finite() {
        return Err(invalid(format!("{what} must be a finite number, got {v}")));
    }
    if v.fract() != 0.0 {
        return Err(invalid(format!("{what} must be a whole number, got {v}")));
    }
    if v < min as f64 || v > max as f64 || v.abs() > MAX_SAFE {
        return Err(invalid(format!("{what} {v} must be between {min} and {max}")));
    }
    Ok(v as i64)
}

/// A whole number of zero or more.
pub(crate) fn non_negative(what: &str, v: f64) -> Result<i64> {
    int(what, v, 0, MAX_SAFE as i64)
}

/// A whole number of one or more (a period, a limit), up to the largest a double holds exactly.
pub(crate) fn positive(what: &str, v: f64) -> Result<u64> {
    if v.is_finite() && v.fract() == 0.0 && v < 1.0 {
        return Err(invalid(format!("{what} must be 1 or more, got {v}")));
    }
    Ok(int(what, v, 1, MAX_SAFE as i64)? as u64)
}

/// A page size given by the caller, or `default`; the runtime checks the range (1 to 10,000).
pub(crate) fn limit(v: Option<f64>, default: i64) -> Result<i64> {
    page("limit", v, default)
}

/// A whole number whose range the runtime checks and names (a priority, a stall budget).
pub(crate) fn whole(what: &str, v: f64) -> Result<i64> {
    int(what, v, i64::MIN + 1, i64::MAX)
}

/// A page size named `what` (`limit`, `count`), or `default`: a whole number, whose range
/// (1 to 10,000) the runtime checks and names.
pub(crate) fn page(what: &str, v: Option<f64>, default: i64) -> Result<i64> {
    v.map_or(Ok(default), |v| whole(what, v))
}

/// An offset (zero or more), default 0.
pub(crate) fn offset(v: Option<f64>) -> Result<i64> {
    v.map_or(Ok(0), |v| non_negative("offset", v))
}

/// A Unix-ms timestamp (zero or more).
pub(crate) fn unix_ms(what: &str, v: f64) -> Result<i64> {
    non_negative(what, v)
}

/// A duration in seconds (fractions allowed, zero or more) as whole milliseconds.
pub(crate) fn secs_to_ms(what: &str, secs: f64) -> Result<u64> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(invalid(format!("{what} must be a finite number of seconds, zero or more, got {secs}")));
    }
    let ms = (secs * 1_000.0).round();
    if ms > MAX_SAFE {
        return Err(invalid(format!("{what} {secs} s is too large")));
    }
    Ok(ms as u64)
}

/// Whole milliseconds as seconds: the inverse of [`secs_to_ms`], for an option read back in
/// the unit it is given in (a scheduler template's `timeout` and `backoff`).
pub(crate) fn ms_to_secs(ms: u64) -> f64 {
    ms as f64 / 1_000.0
}

/// A duration in milliseconds (whole, zero or more).
pub(crate) fn millis(what: &str, ms: f64) -> Result<u64> {
    Ok(non_negative(what, ms)? as u64)
}

/// A cursor: absent, or non-empty text.
pub(crate) fn cursor(after: Option<String>) -> Result<Option<String>> {
    match after {
        Some(c) if c.trim().is_empty() => {
            Err(invalid("cursor must not be empty: pass null for the first page"))
        }
        other => Ok(other),
    }
}
