//! One seed's world and its scheduler: the faulty store, the injected clock, the simulated
//! callers, and the loop that picks, step by step, who acts next.
//!
//! Every store call of a seed is made from this one task, one at a time, in an order drawn
//! from the seed: concurrency is simulated by interleaving whole calls, never by racing them,
//! so no thread timing can change what the store sees. Time is a [`ManualClock`] that only
//! the seed moves (a clock step, an injected delay, a worker's back-off), and no tokio timer
//! is ever awaited.

use std::sync::Arc;
use std::time::Duration;

use flexiq_core::{Result, Store};
use flexiq_runtime::services::{RescueConfig, Rescuer, RunawayConfig, RunawayReaper};
use flexiq_runtime::{Clock, ConnectOptions, ManualClock, Queue};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::ids::IdMinter;
use super::ledger::Ledger;
use super::producer::Producer;
use super::scenario::{Scenario, SimOptions, PLAIN_QUEUES, STAGE_QUEUE};
use super::worker::SimWorker;
use crate::fault::{ClockPacer, FaultPlan};
use crate::faulty::FaultyStore;

/// Where every seed's clock starts (Unix ms).
pub(crate) const T0: i64 = 1_700_000_000_000;

/// One seed's world.
pub(crate) struct World {
    pub(crate) seed: u64,
    pub(crate) sc: Scenario,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) clock: ManualClock,
    pub(crate) store: Arc<FaultyStore>,
    pub(crate) ledger: Ledger,
    pub(crate) workers: Vec<SimWorker>,
    pub(crate) producer: Producer,
    pub(crate) ids: IdMinter,
    pub(crate) rescuer: Rescuer,
    pub(crate) reaper: RunawayReaper,
    pub(crate) step: u64,
    pub(crate) trace: Vec<String>,
    pub(crate) violations: Vec<String>,
}

impl World {
    /// A world for `seed` on `store` (a fresh namespace); `salt` keeps its job ids apart from
    /// other runs of the same seed on the same backing.
    pub(crate) fn new(store: Arc<dyn Store>, seed: u64, salt: u64, opts: &SimOptions) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sc = Scenario::draw(&mut rng, opts);
        let clock = ManualClock::new(T0);
        let plan = FaultPlan::random(seed).max_delay_ms(sc.max_delay_ms);
        let store = Arc::new(FaultyStore::new(store, plan).with_pacer(Arc::new(ClockPacer(clock.clone()))));
        let as_store: Arc<dyn Store> = store.clone();
        let queue = Queue::from_store(as_store, &ConnectOptions::namespace(store.namespace()))
            .with_clock(Arc::new(clock.clone()));
        let stale_after = Duration::from_millis(sc.stale_after_ms);
        let rescuer =
            Rescuer::new(&queue, RescueConfig { stale_after }).expect("a lease window of at least 20 ms");
        let absolute_cap = Some(Duration::from_millis(sc.absolute_cap_ms));
        let reaper =
            RunawayReaper::new(&queue, RunawayConfig { absolute_cap }).expect("a cap of at least 1 s");
        let mut workers: Vec<SimWorker> =
            (0..sc.plain_workers).map(|i| SimWorker::new(format!("w{i}"), false)).collect();
        if sc.fair_worker {
            workers.push(SimWorker::new("host".to_string(), true));
        }
        let producer = Producer::new(sc.jobs, sc.stages);
        World {
            seed,
            sc,
            rng,
            clock,
            store,
            ledger: Ledger::default(),
            workers,
            producer,
            ids: IdMinter::new(salt),
            rescuer,
            reaper,
            step: 0,
            trace: Vec::new(),
            violations: Vec::new(),
        }
    }

    /// Now on the injected clock (Unix ms).
    pub(crate) fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The wrapped store, read without faults to learn the truth.
    pub(crate) fn truth(&self) -> Arc<dyn Store> {
        self.store.inner().clone()
    }

    /// Appends a line to the trace.
    pub(crate) fn note(&mut self, line: String) {
        self.trace.push(format!("{:>4} t+{:<6} {line}", self.step, self.now() - T0));
    }

    /// Records a broken invariant.
    pub(crate) fn violation(&mut self, what: String) {
        self.note(format!("VIOLATION {what}"));
        self.violations.push(what);
    }

    /// Sets the queues up, runs the faulty phase, drains with faults off and checks the end
    /// state.
    pub(crate) async fn run(&mut self) -> Result<()> {
        self.setup().await?;
        self.faulty_phase().await?;
        self.drain().await?;
        self.check_end().await
    }

    async fn setup(&mut self) -> Result<()> {
        if let Some(max) = self.sc.max_stalled {
            let truth = self.truth();
            for q in PLAIN_QUEUES.iter().chain([&STAGE_QUEUE]) {
                let req = flexiq_core::store::SetMaxStalledRequest { queue: q.to_string(), max: Some(max) };
                truth.set_max_stalled(req).await?;
            }
        }
        let sc = self.sc.clone();
        self.note(format!("seed {} scenario {sc:?}", self.seed));
        Ok(())
    }

    async fn faulty_phase(&mut self) -> Result<()> {
        while self.step < self.sc.max_steps {
            self.step += 1;
            self.act().await?;
        }
        Ok(())
    }

    /// Picks one actor by weight and lets it make its move.
    async fn act(&mut self) -> Result<()> {
        let producer = if self.producer.done() { 0 } else { 5 };
        let operator = if self.sc.operator { 2 } else { 0 };
        let crash = if self.sc.crashes { 1 } else { 0 };
        // The producer, the rescuer, the clock, the operator, a crash, then one per worker.
        let mut weights = vec![producer, 3, 4, operator, crash];
        weights.extend(std::iter::repeat_n(10, self.workers.len()));
        match self.pick(&weights) {
            Some(0) => self.produce().await,
            Some(1) => self.rescue().await,
            Some(2) => {
                self.advance_clock();
                Ok(())
            }
            Some(3) => self.operate().await,
            Some(4) => {
                self.crash();
                Ok(())
            }
            Some(w) => self.worker_turn(w - 5).await,
            None => Ok(()),
        }
    }

    /// An index drawn with the given weights; `None` when they are all 0.
    pub(crate) fn pick(&mut self, weights: &[u32]) -> Option<usize> {
        let total: u32 = weights.iter().sum();
        if total == 0 {
            return None;
        }
        let mut x = self.rng.random_range(0..total);
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return Some(i);
            }
            x -= w;
        }
        None
    }

    /// Time passes: mostly a little, sometimes past the lease window.
    fn advance_clock(&mut self) {
        let ms = match self.rng.random_range(0..20) {
            0 => self.rng.random_range(self.sc.stale_after_ms..=3 * self.sc.stale_after_ms),
            1..=5 => self.rng.random_range(100..=800),
            _ => self.rng.random_range(1..=100),
        };
        self.clock.advance(ms as i64);
        self.wake_workers();
        self.note(format!("clock +{ms} ms"));
    }

    /// A worker dies: it forgets what it holds; its leases lapse and the rescuer gives its
    /// jobs back. It comes back under a new id, as a restarted process would.
    fn crash(&mut self) {
        let w = self.rng.random_range(0..self.workers.len());
        let before = self.workers[w].id.clone();
        let held = self.workers[w].crash();
        let after = self.workers[w].id.clone();
        self.note(format!("crash {before} holding {held} jobs, back as {after}"));
    }
}
