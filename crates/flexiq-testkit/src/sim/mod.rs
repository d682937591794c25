//! The deterministic harness: one seed, one small deployment, run through the runtime's code
//! paths against a [`FaultyStore`](crate::FaultyStore), then drained and checked.
//!
//! A seed draws its [`Scenario`] (workers, jobs, options, leases), its fault plan and every
//! scheduling choice from one ChaCha seed; all store calls are made one at a time from one
//! task; time is a manual clock. The same seed on the same kind of store therefore makes the
//! same calls in the same order and gets the same faults, so a failing seed replays exactly
//! (`FLEXIQ_SEED=<n>`), and its [`SeedRun`] report lists the faults injected, the invariants
//! broken and the trace of the steps before.
//!
//! The seed's world is in `world`: the producer (`producer`) and workers (`worker`)
//! mirror the runtime's client and worker, the rescuer and operator (`services`) use the
//! runtime's services, `fence` checks every ack and heartbeat against the store's state
//! around it, `drain` finishes the seed without faults, and `check` holds the end state to
//! the invariants.

mod check;
mod drain;
mod fence;
mod ids;
mod ledger;
mod producer;
mod scenario;
mod services;
mod worker;
mod world;

use std::sync::Arc;

use flexiq_core::Store;

pub use scenario::{Resend, Scenario, SimOptions};

use crate::fault::Injection;

/// What one seed did and found.
#[derive(Debug, Clone)]
pub struct SeedRun {
    /// The seed.
    pub seed: u64,
    /// The deployment it drew.
    pub scenario: Scenario,
    /// Every fault injected, oldest first.
    pub injections: Vec<Injection>,
    /// Broken invariants; empty when the seed passed.
    pub violations: Vec<String>,
    /// One line per step: who did what, and what the store said.
    pub trace: Vec<String>,
    /// Jobs the producer sent.
    pub jobs: usize,
    /// Handler runs.
    pub executions: usize,
}

impl SeedRun {
    /// Whether every invariant held.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }

    /// The failure report: the seed, how to replay it, what broke, the faults and the trace.
    pub fn report(&self) -> String {
        let mut out = format!(
            "seed {} broke {} invariant(s); replay it with FLEXIQ_SEED={}\n",
            self.seed,
            self.violations.len(),
            self.seed
        );
        for v in &self.violations {
            out.push_str(&format!("  - {v}\n"));
        }
        out.push_str(&format!("faults injected ({}):\n", self.injections.len()));
        for i in &self.injections {
            out.push_str(&format!("  {i}\n"));
        }
        out.push_str("trace:\n");
        for line in &self.trace {
            out.push_str(&format!("  {line}\n"));
        }
        out
    }
}

/// Runs `seed` under `opts` against `store`, which must be scoped to a namespace no other
/// seed uses; `salt` keeps the seed's job ids apart from other runs of it on the same backing.
/// A store that cannot be read is reported as a violation too, with the trace up to that
/// point.
pub async fn run_seed(store: Arc<dyn Store>, seed: u64, salt: u64, opts: &SimOptions) -> SeedRun {
    let mut world = world::World::new(store, seed, salt, opts);
    if let Err(e) = world.run().await {
        let step = world.step;
        world.violation(format!("step {step}: a store call the harness relies on failed: {e}"));
    }
    SeedRun {
        seed,
        scenario: world.sc.clone(),
        injections: world.store.injections(),
        violations: world.violations.clone(),
        trace: std::mem::take(&mut world.trace),
        jobs: world.ledger.jobs().count(),
        executions: world.ledger.executions().len(),
    }
}
