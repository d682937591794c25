//! flexiq-testkit: fault injection and a deterministic harness for flexiq's stores.
//!
//! Test support only: no shipped crate depends on it. It has three parts.
//!
//! - [`FaultyStore`] wraps any store and, as a seeded [`FaultPlan`] decides, fails chosen
//!   calls before they reach the store, loses their reply after the store applied them, or
//!   delays them. The lost reply is the case that matters: a caller that retries or gives up
//!   after one must still leave every job terminal exactly once.
//! - [`sim`] runs one seed: a small deployment drawn from the seed (producer, workers, rescuer,
//!   operator) doing what the runtime does, one store call at a time from one task, on an
//!   injected clock, so the seed replays exactly. It checks the fence invariants around every
//!   ack and heartbeat, drains the queue with faults off, and holds the end state to the
//!   invariants: each job terminal exactly once, no completed job run again, superseded acks
//!   changing nothing, counts adding up.
//! - [`Campaign`] runs many seeds against a [`Backing`] (SQLite, PostgreSQL or Redis by cargo
//!   feature) and reports the failing ones with what to replay. `FLEXIQ_SEED=<n>` replays one
//!   seed, `FLEXIQ_SEEDS=<count>` (from `FLEXIQ_SEED_START`) sets how many run.

pub mod backing;
pub mod campaign;
pub mod fault;
mod faulty;
pub mod sim;

pub use backing::Backing;
#[cfg(feature = "postgres")]
pub use backing::PgBacking;
#[cfg(feature = "redis")]
pub use backing::RedisBacking;
#[cfg(feature = "sqlite")]
pub use backing::SqliteBacking;
pub use campaign::{Campaign, CampaignReport};
pub use fault::{Fault, FaultPlan, FaultRates, Injection, Op};
pub use faulty::FaultyStore;
