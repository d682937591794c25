//! Job identifiers: UUIDv7 text, so ids sort by creation time in every store.
//!
//! Ids are minted from the injected clock ([`JobId::at`]), not the system clock, so a job's id
//! carries the same millisecond as its `created_at` even under a manual clock in tests, and ids
//! made within one millisecond still sort in the order they were made (a 42-bit counter,
//! reseeded at random each new millisecond, fills the bits after the timestamp).

use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A job's id: a UUIDv7 in its canonical hyphenated lower-case text form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(String);

impl JobId {
    /// A fresh time-ordered id stamped with the system clock.
    pub fn new() -> Self {
        JobId(uuid::Uuid::now_v7().hyphenated().to_string())
    }

    /// A fresh id stamped with `now_ms` (Unix ms, from the caller's clock): its UUIDv7
    /// timestamp is exactly `now_ms` (clamped to 0 and the 48-bit maximum), and ids made at the
    /// same millisecond sort in the order they were made.
    pub fn at(now_ms: i64) -> Self {
        JobId(v7_at(now_ms).hyphenated().to_string())
    }

    /// The Unix ms timestamp inside a UUIDv7 id (`None` for other UUID versions).
    pub fn unix_ms(&self) -> Option<i64> {
        let u = uuid::Uuid::parse_str(&self.0).ok()?;
        if u.get_version_num() != 7 {
            return None;
        }
        i64::try_from(u.as_u128() >> 80).ok()
    }

    /// Parses caller input; anything but a UUID is `InvalidArgument`.
    pub fn parse(s: &str) -> Result<Self> {
        uuid::Uuid::parse_str(s)
            .map(|u| JobId(u.hyphenated().to_string()))
            .map_err(|_| Error::invalid(format!("job id {s:?} is not a UUID")))
    }

    /// Wraps text already known to be an id (read back from a store).
    pub fn from_trusted(s: impl Into<String>) -> Self {
        JobId(s.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for JobId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for JobId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A fresh UUIDv7 text id for rows other than jobs (dead letters, replays, errors).
pub fn new_row_id() -> String {
    uuid::Uuid::now_v7().hyphenated().to_string()
}

/// A fresh UUIDv7 stamped with `now_ms` (Unix ms); see [`JobId::at`].
pub fn uuid_at(now_ms: i64) -> uuid::Uuid {
    v7_at(now_ms)
}

const MAX_MS: u64 = (1 << 48) - 1;
const COUNTER_BITS: u32 = 42;

/// How many recent milliseconds keep their counters. Several clocks may mint ids in one
/// process at once (tests with manual clocks beside the system clock); each of their
/// milliseconds keeps counting up instead of being reseeded whenever another clock interleaves.
const RECENT: usize = 64;

/// Recent milliseconds and the last counter used in each, most recently used last.
static RECENT_COUNTERS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

fn v7_at(now_ms: i64) -> uuid::Uuid {
    let ms = u64::try_from(now_ms).unwrap_or(0).min(MAX_MS);
    let random = uuid::Uuid::new_v4().as_u128();
    // A new millisecond (or a counter run out within one) starts from a random point in the
    // lower half of the counter's range, leaving room to count up.
    let seed = (random as u64) & ((1 << (COUNTER_BITS - 1)) - 1);
    let counter = {
        let mut recent = RECENT_COUNTERS.lock().unwrap_or_else(|p| p.into_inner());
        let counter = match recent.iter().position(|(m, _)| *m == ms) {
            Some(i) => {
                let (_, last) = recent.remove(i);
                let next = last + 1;
                if next >> COUNTER_BITS == 0 {
                    next
                } else {
                    seed
                }
            }
            None => {
                if recent.len() == RECENT {
                    recent.remove(0);
                }
                seed
            }
        };
        recent.push((ms, counter));
        counter
    };
    let rand_a = (counter >> 30) as u128 & 0xfff;
    let rand_b_high = (counter & ((1 << 30) - 1)) as u128;
    let rand_b_low = (random >> 64) & 0xffff_ffff;
    let v = (u128::from(ms) << 80)
        | (0x7 << 76)
        | (rand_a << 64)
        | (0b10 << 62)
        | (rand_b_high << 32)
        | rand_b_low;
    uuid::Uuid::from_u128(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_time_ordered_and_parse_back() {
        let a = JobId::new();
        let b = JobId::new();
        assert!(a < b);
        assert_eq!(JobId::parse(a.as_str()).unwrap(), a);
        assert!(JobId::parse("nope").is_err());
        assert_eq!(JobId::parse(&a.as_str().to_uppercase()).unwrap(), a);
    }

    #[test]
    fn ids_carry_the_injected_time_and_sort_within_a_millisecond() {
        let t = 1_700_000_000_000;
        let ids: Vec<JobId> = (0..1_000).map(|_| JobId::at(t)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids at one millisecond sort as made");
        assert!(ids.iter().all(|id| id.unix_ms() == Some(t)));
        let u = uuid::Uuid::parse_str(ids[0].as_str()).unwrap();
        assert_eq!(u.get_version_num(), 7);
        assert_eq!(u.get_variant(), uuid::Variant::RFC4122);
        assert!(JobId::at(t - 1) < ids[0], "an earlier clock makes an earlier id");
        assert!(JobId::at(t + 1) > ids[999]);
        assert_eq!(JobId::at(-5).unix_ms(), Some(0));
        assert_eq!(JobId::at(i64::MAX).unix_ms(), Some((1 << 48) - 1));
        assert_eq!(JobId::parse(ids[0].as_str()).unwrap(), ids[0]);
        assert_eq!(JobId::from_trusted(uuid::Uuid::new_v4().to_string()).unix_ms(), None);
    }

    #[test]
    fn interleaved_clocks_keep_each_millisecond_in_order() {
        let (a, b) = (1_600_000_000_000, 1_600_000_000_777);
        let mut at_a = Vec::new();
        for _ in 0..200 {
            at_a.push(JobId::at(a));
            JobId::at(b);
            JobId::new();
        }
        assert!(at_a.windows(2).all(|w| w[0] < w[1]), "another clock in between does not reorder");
    }
}
