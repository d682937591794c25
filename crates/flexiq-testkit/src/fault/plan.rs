//! The seeded plan that decides, call by call, which fault a chosen operation suffers.
//!
//! Everything a plan decides comes from one ChaCha stream seeded by the caller, drawn once per
//! call of a faultable operation in the order the calls arrive, so a harness that makes the
//! same calls in the same order gets the same faults: a failing seed replays exactly. Scripted
//! faults come first, for tests that need one particular call to fail one particular way.

use std::collections::{BTreeMap, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Fault, Injection, Op};

/// How often each fault strikes one operation: probabilities from 0 to 1 whose sum is at most 1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FaultRates {
    /// Share of calls that fail before reaching the store.
    pub fail_before: f64,
    /// Share of calls whose reply is lost after the store applied them.
    pub fail_after: f64,
    /// Share of calls that are delayed.
    pub delay: f64,
}

impl FaultRates {
    /// No faults.
    pub const NONE: FaultRates = FaultRates { fail_before: 0.0, fail_after: 0.0, delay: 0.0 };

    /// Rates that must each be in 0..=1 and sum to at most 1.
    ///
    /// # Panics
    ///
    /// When they are not: a plan that cannot be drawn from is a bug in the test.
    pub fn new(fail_before: f64, fail_after: f64, delay: f64) -> Self {
        let r = FaultRates { fail_before, fail_after, delay };
        let all = [fail_before, fail_after, delay];
        assert!(
            all.iter().all(|p| (0.0..=1.0).contains(p)) && all.iter().sum::<f64>() <= 1.0 + 1e-9,
            "fault rates {r:?} must each be between 0 and 1 and sum to at most 1"
        );
        r
    }
}

/// Decides the fault of every call of a faultable operation, from a seed.
#[derive(Debug, Clone)]
pub struct FaultPlan {
    seed: u64,
    rng: ChaCha8Rng,
    rates: BTreeMap<Op, FaultRates>,
    retryable: f64,
    max_delay_ms: u64,
    enabled: bool,
    scripted: BTreeMap<Op, VecDeque<Fault>>,
    calls: u64,
    log: Vec<Injection>,
}

/// The ChaCha stream a plan draws from, apart from any other stream a harness seeds with the
/// same number.
const PLAN_STREAM: u64 = 0x_fa17;

impl FaultPlan {
    /// A plan on `seed` that injects nothing until rates or scripts are added.
    pub fn new(seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(PLAN_STREAM);
        FaultPlan {
            seed,
            rng,
            rates: BTreeMap::new(),
            retryable: 0.9,
            max_delay_ms: 2_000,
            enabled: true,
            scripted: BTreeMap::new(),
            calls: 0,
            log: Vec::new(),
        }
    }

    /// A plan whose rates are drawn from `seed` too: for each operation, a quarter of seeds
    /// leave it alone and the rest fail it before or after commit up to 15% of the time each
    /// and delay it up to 10% of the time. Seeds so cover both calm runs and stormy ones.
    pub fn random(seed: u64) -> Self {
        let mut plan = FaultPlan::new(seed);
        for op in Op::ALL {
            if plan.rng.random_bool(0.25) {
                continue;
            }
            let fail_before = plan.rng.random_range(0.0..0.15);
            let fail_after = plan.rng.random_range(0.0..0.15);
            let delay = plan.rng.random_range(0.0..0.10);
            plan.rates.insert(op, FaultRates::new(fail_before, fail_after, delay));
        }
        plan
    }

    /// Sets the rates of `op`.
    pub fn rate(mut self, op: Op, rates: FaultRates) -> Self {
        self.rates.insert(op, rates);
        self
    }

    /// Sets the same rates on every operation in `ops`.
    pub fn rate_all(mut self, ops: &[Op], rates: FaultRates) -> Self {
        for op in ops {
            self.rates.insert(*op, rates);
        }
        self
    }

    /// The share (0 to 1) of injected errors that say a retry may help (default 0.9).
    pub fn retryable_share(mut self, share: f64) -> Self {
        assert!((0.0..=1.0).contains(&share), "retryable share {share} must be between 0 and 1");
        self.retryable = share;
        self
    }

    /// The longest delay, in ms (default 2,000).
    pub fn max_delay_ms(mut self, ms: u64) -> Self {
        self.max_delay_ms = ms.max(1);
        self
    }

    /// Queues faults for the next calls of `op`, in order; they are used before any rate.
    pub fn script(mut self, op: Op, faults: impl IntoIterator<Item = Fault>) -> Self {
        self.scripted.entry(op).or_default().extend(faults);
        self
    }

    /// Turns injection on or off (on by default). Calls decided while off pass, draw nothing
    /// from the seed and leave scripts in place.
    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
    }

    /// Whether injection is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The seed the plan was made from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The rates of `op` (none when unset).
    pub fn rates(&self, op: Op) -> FaultRates {
        self.rates.get(&op).copied().unwrap_or_default()
    }

    /// Calls decided so far.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Every fault injected so far, oldest first (passes are not kept).
    pub fn injections(&self) -> &[Injection] {
        &self.log
    }

    /// Decides the next call of `op`: its number and its fault.
    pub fn decide(&mut self, op: Op) -> (u64, Fault) {
        self.calls += 1;
        if !self.enabled {
            return (self.calls, Fault::Pass);
        }
        if let Some(f) = self.scripted.get_mut(&op).and_then(VecDeque::pop_front) {
            return (self.calls, f);
        }
        let Some(r) = self.rates.get(&op).copied() else {
            return (self.calls, Fault::Pass);
        };
        let x: f64 = self.rng.random();
        let fault = if x < r.fail_before {
            Fault::FailBefore { retryable: self.rng.random_bool(self.retryable) }
        } else if x < r.fail_before + r.fail_after {
            Fault::FailAfter { retryable: self.rng.random_bool(self.retryable) }
        } else if x < r.fail_before + r.fail_after + r.delay {
            Fault::Delay { ms: self.rng.random_range(1..=self.max_delay_ms) }
        } else {
            Fault::Pass
        };
        (self.calls, fault)
    }

    /// Keeps an injected fault; returns its index for [`FaultPlan::mark_committed`].
    pub(crate) fn record(&mut self, call: u64, op: Op, fault: Fault, subject: String) -> usize {
        self.log.push(Injection { call, op, fault, subject, committed: None });
        self.log.len() - 1
    }

    /// Notes whether the store applied a call whose reply was then dropped.
    pub(crate) fn mark_committed(&mut self, index: usize, committed: bool) {
        if let Some(i) = self.log.get_mut(index) {
            i.committed = Some(committed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(plan: &mut FaultPlan, n: usize) -> Vec<Fault> {
        (0..n).map(|i| plan.decide(Op::ALL[i % Op::ALL.len()]).1).collect()
    }

    #[test]
    fn one_seed_draws_one_sequence() {
        let a = draws(&mut FaultPlan::random(42), 500);
        let b = draws(&mut FaultPlan::random(42), 500);
        assert_eq!(a, b);
        let c = draws(&mut FaultPlan::random(43), 500);
        assert_ne!(a, c, "seeds 42 and 43 drew the same 500 faults");
    }

    #[test]
    fn rates_of_one_give_that_fault_every_time() {
        let mut plan = FaultPlan::new(7).rate(Op::Ack, FaultRates::new(0.0, 1.0, 0.0)).retryable_share(1.0);
        for _ in 0..50 {
            assert_eq!(plan.decide(Op::Ack).1, Fault::FailAfter { retryable: true });
            assert_eq!(plan.decide(Op::Claim).1, Fault::Pass);
        }
    }

    #[test]
    fn scripts_come_first_and_a_disabled_plan_passes() {
        let mut plan = FaultPlan::new(1)
            .rate(Op::Claim, FaultRates::new(1.0, 0.0, 0.0))
            .script(Op::Claim, [Fault::Delay { ms: 5 }]);
        assert_eq!(plan.decide(Op::Claim), (1, Fault::Delay { ms: 5 }));
        assert!(matches!(plan.decide(Op::Claim).1, Fault::FailBefore { .. }));
        plan.set_enabled(false);
        assert_eq!(plan.decide(Op::Claim), (3, Fault::Pass));
    }

    #[test]
    #[should_panic(expected = "sum to at most 1")]
    fn rates_over_one_are_refused() {
        let _ = FaultRates::new(0.5, 0.5, 0.5);
    }
}
