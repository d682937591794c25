//! What one seed runs: how many workers and jobs, which options the jobs carry, and how long
//! leases last. Drawn from the seed, so every seed is its own small deployment.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The plain queues workers claim from.
pub(crate) const PLAIN_QUEUES: [&str; 2] = ["default", "other"];

/// The queue workflow stages live on.
pub(crate) const STAGE_QUEUE: &str = "workflow";

/// The workflow id (the stages' task).
pub(crate) const STAGE_TASK: &str = "wf";

/// What a campaign lets its seeds do, beyond what each seed draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// Whether a producer may re-send a failed enqueue with the same job ids (default true):
    /// see [`Resend::SameIds`].
    pub resend_same_ids: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { resend_same_ids: true }
    }
}

/// What the producer does when an enqueue fails with a retryable error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resend {
    /// Nothing, as the runtime's own `Queue` does: the caller sees the error.
    Never,
    /// Sends the batch again with the same ids, relying on the store refusing an id it holds.
    SameIds,
    /// Sends it again as new jobs (fresh ids, as an SDK call mints) under the same unique
    /// keys, relying on the store deduplicating a key a live job holds.
    FreshIds,
}

/// One seed's deployment.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Workers claiming plain jobs.
    pub plain_workers: usize,
    /// Whether a workflow host claims stages with `claim_fair`.
    pub fair_worker: bool,
    /// Plain jobs to enqueue.
    pub jobs: usize,
    /// Workflow stages to upsert (0 when there is no workflow host).
    pub stages: usize,
    /// Most jobs in one enqueue call.
    pub batch_max: usize,
    /// Most jobs a worker holds (running, buffered or awaiting their ack).
    pub worker_capacity: u32,
    /// The rescuer's heartbeat-loss window (ms).
    pub stale_after_ms: u64,
    /// The runaway reaper's cap on one attempt (ms).
    pub absolute_cap_ms: u64,
    /// The stall budget set on every queue (`None`: the default).
    pub max_stalled: Option<u32>,
    /// Whether the operator requeues and cancels jobs at random.
    pub operator: bool,
    /// Whether workers crash (forgetting what they hold) now and then.
    pub crashes: bool,
    /// What the producer does when an enqueue fails; jobs carry unique keys under
    /// [`Resend::FreshIds`].
    pub resend: Resend,
    /// Steps of the faulty phase before the drain.
    pub max_steps: u64,
    /// Longest injected delay (ms).
    pub max_delay_ms: u64,
}

impl Scenario {
    /// Draws a scenario from the seed's stream.
    pub(crate) fn draw(rng: &mut ChaCha8Rng, opts: &SimOptions) -> Self {
        let fair_worker = rng.random_bool(0.4);
        Scenario {
            plain_workers: rng.random_range(1..=3),
            fair_worker,
            jobs: rng.random_range(3..=12),
            stages: if fair_worker { rng.random_range(1..=4) } else { 0 },
            batch_max: rng.random_range(1..=3),
            worker_capacity: rng.random_range(1..=4),
            stale_after_ms: 1_000,
            absolute_cap_ms: 4_000,
            max_stalled: if rng.random_bool(0.5) { None } else { Some(rng.random_range(0..=3)) },
            operator: rng.random_bool(0.5),
            crashes: rng.random_bool(0.3),
            resend: match rng.random_range(0..4) {
                0 | 1 => Resend::Never,
                2 if opts.resend_same_ids => Resend::SameIds,
                2 => Resend::Never,
                _ => Resend::FreshIds,
            },
            max_steps: rng.random_range(60..=200),
            max_delay_ms: rng.random_range(1..=1_500),
        }
    }
}
