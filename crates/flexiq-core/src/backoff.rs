//! Retry backoff: exponential, capped, with deterministic jitter.
//!
//! The jitter is derived from the job id and attempt rather than a random source, so the
//! transition function stays pure and every store computes the same retry time.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How long to wait before retry `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backoff {
    /// Delay before the first retry (ms).
    pub base_ms: u64,
    /// Upper bound of any delay (ms).
    pub max_ms: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { base_ms: 1_000, max_ms: 3_600_000 }
    }
}

impl Backoff {
    /// A backoff that retries immediately (tests, idempotent work).
    pub const NONE: Backoff = Backoff { base_ms: 0, max_ms: 0 };

    /// Checks the bounds.
    pub fn validate(&self) -> Result<()> {
        if self.max_ms < self.base_ms {
            return Err(Error::invalid(format!(
                "backoff max {} ms is below its base {} ms",
                self.max_ms, self.base_ms
            )));
        }
        Ok(())
    }

    /// Delay (ms) before the retry that follows failed attempt `attempt` (1-based):
    /// `base * 2^(attempt-1)`, capped at `max`, then jittered down by up to 25%.
    pub fn delay_ms(&self, job_key: &str, attempt: u32) -> u64 {
        if self.base_ms == 0 {
            return 0;
        }
        let exp = attempt.saturating_sub(1).min(40);
        let raw = self.base_ms.saturating_mul(1u64 << exp).min(self.max_ms);
        let quarter = raw / 4;
        if quarter == 0 {
            return raw;
        }
        raw - fnv1a(job_key, attempt) % (quarter + 1)
    }
}

fn fnv1a(key: &str, attempt: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes().chain(attempt.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn grows_and_caps() {
        let b = Backoff { base_ms: 100, max_ms: 1_000 };
        let d1 = b.delay_ms("j", 1);
        let d3 = b.delay_ms("j", 3);
        assert!((75..=100).contains(&d1), "{d1}");
        assert!((300..=400).contains(&d3), "{d3}");
        assert!(b.delay_ms("j", 30) <= 1_000);
        assert_eq!(Backoff::NONE.delay_ms("j", 5), 0);
        assert!(Backoff { base_ms: 10, max_ms: 1 }.validate().is_err());
    }

    proptest! {
        #[test]
        fn never_exceeds_cap(base in 0u64..10_000, extra in 0u64..100_000, attempt in 0u32..100, key in "[a-z0-9-]{1,36}") {
            let b = Backoff { base_ms: base, max_ms: base + extra };
            let d = b.delay_ms(&key, attempt);
            prop_assert!(d <= b.max_ms);
            prop_assert_eq!(d, b.delay_ms(&key, attempt));
        }
    }
}
