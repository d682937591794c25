//! Login attempts, limited per client address so a password cannot be guessed at speed.
//!
//! A token bucket per address (`governor`): the configured number of attempts per minute,
//! refilled evenly, with that number as the burst. Successful and failed attempts both count,
//! so the limit also caps the argon2 work one client can make the server do.

use std::net::IpAddr;
use std::num::NonZeroU32;

use governor::clock::DefaultClock;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

/// Per-address login limiter.
pub struct LoginLimiter {
    limiter: RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, DefaultClock>,
}

impl std::fmt::Debug for LoginLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginLimiter").finish_non_exhaustive()
    }
}

impl LoginLimiter {
    /// A limiter allowing `per_minute` attempts per address (at least 1).
    pub fn new(per_minute: u32) -> Self {
        let n = NonZeroU32::new(per_minute.max(1)).unwrap_or(NonZeroU32::MIN);
        LoginLimiter { limiter: RateLimiter::keyed(Quota::per_minute(n)) }
    }

    /// Takes one attempt for `addr`; false when its budget is spent.
    pub fn allow(&self, addr: IpAddr) -> bool {
        if self.limiter.len() > 100_000 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(&addr).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_per_address() {
        let l = LoginLimiter::new(3);
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        assert!((0..3).all(|_| l.allow(a)));
        assert!(!l.allow(a));
        assert!(l.allow(b));
    }
}
