//! Queue rate limits ("N/s", "N/m", "N/h") and the token bucket that enforces them.
//!
//! The bucket is pure arithmetic over (tokens, last refill) so a store can keep its state in a
//! row or a hash and apply it inside the claiming transaction or script.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// At most `count` claims per `per_ms` milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateLimit {
    /// Claims allowed per window.
    pub count: u32,
    /// Window length (ms): 1,000, 60,000 or 3,600,000.
    pub per_ms: u64,
}

impl RateLimit {
    /// Parses `"N/s"`, `"N/m"` or `"N/h"` with `N` a positive integer.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || Error::invalid(format!("rate limit {s:?} is not of the form N/s, N/m or N/h"));
        let (n, unit) = s.trim().split_once('/').ok_or_else(bad)?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 {
            return Err(Error::invalid(format!("rate limit {s:?} must allow at least one job")));
        }
        let per_ms = match unit.trim() {
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        Ok(RateLimit { count, per_ms })
    }

    /// Tokens (fractional) refilled per millisecond.
    pub fn tokens_per_ms(&self) -> f64 {
        f64::from(self.count) / self.per_ms as f64
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.per_ms {
            1_000 => "s",
            60_000 => "m",
            _ => "h",
        };
        write!(f, "{}/{}", self.count, unit)
    }
}

impl FromStr for RateLimit {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        RateLimit::parse(s)
    }
}

/// A token bucket's persisted state: a full bucket holds `limit.count` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenBucket {
    /// Tokens available at `updated_at`.
    pub tokens: f64,
    /// When `tokens` was last computed (Unix ms).
    pub updated_at: i64,
}

impl TokenBucket {
    /// A full bucket at `now`.
    pub fn full(limit: RateLimit, now: i64) -> Self {
        TokenBucket { tokens: f64::from(limit.count), updated_at: now }
    }

    /// Refills to `now`, grants up to `want` whole tokens and returns how many were granted.
    /// The state may be anything a store read back: a clock gap past `i64` saturates.
    pub fn take(&mut self, limit: RateLimit, want: u32, now: i64) -> u32 {
        let elapsed = now.saturating_sub(self.updated_at).max(0) as f64;
        let cap = f64::from(limit.count);
        self.tokens = (self.tokens + elapsed * limit.tokens_per_ms()).min(cap);
        self.updated_at = self.updated_at.max(now);
        let granted = (self.tokens.floor() as u32).min(want);
        self.tokens -= f64::from(granted);
        granted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_three_units_only() {
        assert_eq!(RateLimit::parse("10/s").unwrap(), RateLimit { count: 10, per_ms: 1_000 });
        assert_eq!(RateLimit::parse("5/m").unwrap().per_ms, 60_000);
        assert_eq!(RateLimit::parse("7/h").unwrap().to_string(), "7/h");
        for bad in ["", "10", "10/d", "x/s", "-1/s", "0/s", "1.5/s", "10/ s/", "/s"] {
            assert_eq!(RateLimit::parse(bad).unwrap_err().code(), "INVALID_ARGUMENT", "{bad}");
        }
    }

    #[test]
    fn bucket_refills_over_time() {
        let l = RateLimit::parse("2/s").unwrap();
        let mut b = TokenBucket::full(l, 0);
        assert_eq!(b.take(l, 5, 0), 2);
        assert_eq!(b.take(l, 5, 100), 0);
        assert_eq!(b.take(l, 5, 600), 1);
    }

    #[test]
    fn a_bucket_from_the_far_past_refills_without_overflow() {
        let l = RateLimit::parse("3/s").unwrap();
        let mut b = TokenBucket { tokens: 0.0, updated_at: i64::MIN };
        assert_eq!(b.take(l, 5, i64::MAX), 3);
        assert_eq!(b.updated_at, i64::MAX);
    }

    proptest! {
        #[test]
        fn never_grants_more_than_the_rate(count in 1u32..50, steps in prop::collection::vec((0i64..500, 0u32..20), 1..40)) {
            let l = RateLimit { count, per_ms: 1_000 };
            let mut b = TokenBucket::full(l, 0);
            let (mut now, mut granted) = (0i64, 0u64);
            for (dt, want) in steps {
                now += dt;
                granted += u64::from(b.take(l, want, now));
            }
            let allowed = u64::from(count) + (now as u64 * u64::from(count)) / 1_000 + 1;
            prop_assert!(granted <= allowed, "granted {} allowed {}", granted, allowed);
        }
    }
}
