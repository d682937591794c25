//! How a delayed call waits: the injected kind of time.
//!
//! A delay means different things to different tests. A deterministic campaign must not
//! touch tokio's timers (whether they fire before a store's reply would depend on the
//! machine), so its delays move the [`ManualClock`] every simulated actor reads: the call
//! commits with the `now` it was sent with, and whoever acts next sees the time that passed.
//! A test of the real runtime sleeps instead, and a test of interleavings only yields.

use std::time::Duration;

use flexiq_runtime::ManualClock;

use super::Op;

/// Waits out a [`Fault::Delay`](super::Fault::Delay).
#[async_trait::async_trait]
pub trait Pacer: Send + Sync + std::fmt::Debug {
    /// Holds a call of `op` for `ms` milliseconds of this pacer's time.
    async fn pause(&self, op: Op, ms: u64);
}

/// Yields to the runtime once per millisecond asked for, at most 64 times: other tasks run,
/// no time passes.
#[derive(Debug, Clone, Copy, Default)]
pub struct YieldPacer;

#[async_trait::async_trait]
impl Pacer for YieldPacer {
    async fn pause(&self, _op: Op, ms: u64) {
        for _ in 0..ms.clamp(1, 64) {
            tokio::task::yield_now().await;
        }
    }
}

/// Sleeps on tokio's clock (which a test may pause and auto-advance).
#[derive(Debug, Clone, Copy, Default)]
pub struct SleepPacer;

#[async_trait::async_trait]
impl Pacer for SleepPacer {
    async fn pause(&self, _op: Op, ms: u64) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// Advances a [`ManualClock`] by the delay: deterministic, and visible to every reader of it.
#[derive(Debug, Clone)]
pub struct ClockPacer(pub ManualClock);

#[async_trait::async_trait]
impl Pacer for ClockPacer {
    async fn pause(&self, _op: Op, ms: u64) {
        self.0.advance(i64::try_from(ms).unwrap_or(i64::MAX));
    }
}
