//! Rate limits: `RateLimit::parse` reads operator text (`"10/s"`), and `TokenBucket::take`
//! runs on a bucket state a store reads back from a row or a hash, so it must hold up on any
//! state, not just the ones `take` itself writes.
//!
//! Input: `rate text \n tokens \n updated_at \n want \n now`.

use flexiq_core::{RateLimit, TokenBucket};

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let text = f.text();
    let tokens = f64::from_bits(f.u64());
    let updated_at = f.i64();
    let want = f.u32();
    let now = f.i64();

    let parsed = RateLimit::parse(&text);
    assert_eq!(parsed.as_ref().ok(), text.parse::<RateLimit>().as_ref().ok(), "FromStr agrees with parse");
    let limit = match parsed {
        Ok(l) => {
            assert!(l.count >= 1, "{text:?} parsed to {l:?}");
            assert!([1_000, 60_000, 3_600_000].contains(&l.per_ms), "{text:?} parsed to {l:?}");
            assert_eq!(RateLimit::parse(&l.to_string()).ok(), Some(l), "{l:?} does not re-parse");
            l
        }
        Err(e) => {
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{text:?}: {e}");
            // A limit as a store may hold it, unvalidated.
            RateLimit { count: want, per_ms: updated_at as u64 }
        }
    };

    // A stored bucket, whatever it holds.
    let mut stored = TokenBucket { tokens, updated_at };
    let granted = stored.take(limit, want, now);
    assert!(granted <= want, "granted {granted} of {want}");
    // A bucket this code wrote never grants more than the limit at once.
    let mut fresh = TokenBucket::full(limit, updated_at);
    let granted = fresh.take(limit, want, now);
    assert!(granted <= want.min(limit.count), "granted {granted} of {want}, limit {limit:?}");
}
