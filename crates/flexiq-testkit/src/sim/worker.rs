//! A simulated worker, doing what the runtime's worker does (`flexiq-runtime/src/worker/`)
//! one store call at a time.
//!
//! It claims into a buffer, starts buffered jobs, finishes them into an ack outbox, writes the
//! outbox as one fenced batch (retried up to [`ACK_TRIES`] times on a retryable error with the
//! same fences, the clock moving `10 * tries` ms between tries, then dropped, exactly as
//! `acker.rs` does), and heartbeats every job it holds until that job's ack is written. A
//! `Superseded` heartbeat is a lost lease: the handler is told, and its ack will be superseded.
//! A cancel request ends the handler with a `Cancel` ack. A claim error is only logged: a
//! claim whose reply was lost leaves its jobs leased to the worker unknowingly, and only the
//! rescuer gets them back.

use std::collections::BTreeMap;

use flexiq_core::store::{Ack, AckKind, ClaimFairRequest, ClaimRequest, Workflows};
use flexiq_core::{AckOutcome, ClaimedJob, Fence, JobId, Result};
use rand::Rng;

use super::scenario::{PLAIN_QUEUES, STAGE_QUEUE};
use super::world::World;

/// Attempts at writing one ack batch before giving up on it (the runtime's `ACK_TRIES`).
pub(crate) const ACK_TRIES: u32 = 5;

/// Where a held job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Claimed, handler not started.
    Buffered,
    /// Handler running for this many more turns.
    Running(u32),
    /// Handler done, ack in the outbox.
    Finished,
}

/// A job the worker holds: in its active set until its ack is written.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub(crate) fence: Fence,
    pub(crate) phase: Phase,
    pub(crate) lease_lost: bool,
    pub(crate) cancel_requested: bool,
}

/// One simulated worker process.
#[derive(Debug, Clone)]
pub(crate) struct SimWorker {
    base: String,
    generation: u32,
    /// Its current worker id.
    pub(crate) id: String,
    /// Whether it claims workflow stages with `claim_fair`.
    pub(crate) fair: bool,
    /// Its active set, by job.
    pub(crate) held: BTreeMap<JobId, Held>,
    /// Finished attempts waiting for the group commit.
    pub(crate) outbox: Vec<Ack>,
    /// Whether its last claim came back short: like the runtime's worker it then waits for a
    /// sign of work (an enqueue, a release, time passing) and only polls now and then.
    pub(crate) idle: bool,
}

impl SimWorker {
    pub(crate) fn new(base: String, fair: bool) -> Self {
        SimWorker {
            id: format!("{base}.0"),
            base,
            generation: 0,
            fair,
            held: BTreeMap::new(),
            outbox: Vec::new(),
            idle: false,
        }
    }

    /// Forgets everything and comes back under a new id; returns how many jobs it held.
    pub(crate) fn crash(&mut self) -> usize {
        let n = self.held.len();
        self.held.clear();
        self.outbox.clear();
        self.generation += 1;
        self.id = format!("{}.{}", self.base, self.generation);
        n
    }

    fn running(&self) -> impl Iterator<Item = &JobId> {
        self.held
            .iter()
            .filter(|(_, h)| matches!(h.phase, Phase::Buffered | Phase::Running(_)))
            .map(|(id, _)| id)
    }
}

impl World {
    /// Something may have made work claimable: every worker claims again soon.
    pub(crate) fn wake_workers(&mut self) {
        for wk in &mut self.workers {
            wk.idle = false;
        }
    }

    /// One move of worker `w`, chosen by weight among what it can do.
    pub(crate) async fn worker_turn(&mut self, w: usize) -> Result<()> {
        let cap = self.sc.worker_capacity;
        let wk = &self.workers[w];
        let free = cap.saturating_sub(wk.held.len() as u32);
        let weights = [
            match (free > 0, wk.idle) {
                (false, _) => 0,
                (true, true) => 1,
                (true, false) => 4,
            },
            if wk.running().next().is_some() { 5 } else { 0 },
            if wk.outbox.is_empty() { 0 } else { 3 },
            if wk.held.is_empty() { 0 } else { 2 },
        ];
        let Some(choice) = self.pick(&weights) else { return Ok(()) };
        match choice {
            0 => self.claim(w, free).await,
            1 => {
                let n = self.workers[w].running().count();
                let i = self.rng.random_range(0..n);
                let id = self.workers[w].running().nth(i).cloned().expect("a running job");
                self.run_handler(w, &id).await
            }
            2 => self.flush_acks(w).await,
            _ => self.heartbeat(w).await,
        }
    }

    /// Claims up to `limit` jobs into the worker's buffer.
    pub(crate) async fn claim(&mut self, w: usize, limit: u32) -> Result<()> {
        let (id, fair) = (self.workers[w].id.clone(), self.workers[w].fair);
        let now = self.now();
        let reply = if fair {
            let req = ClaimFairRequest {
                queues: vec![STAGE_QUEUE.to_string()],
                serves: Vec::new(),
                workers: vec![id.clone(); limit as usize],
                group_cap: Some(1),
                now,
            };
            self.store.claim_fair(req).await
        } else {
            let req = ClaimRequest {
                queues: PLAIN_QUEUES.iter().map(|q| q.to_string()).collect(),
                limit,
                worker_id: id.clone(),
                now,
            };
            flexiq_core::store::JobStore::claim(&*self.store, req).await
        };
        match reply {
            Ok(jobs) => {
                self.workers[w].idle = (jobs.len() as u32) < limit;
                let labels = self.take_claimed(&id, &jobs);
                for c in jobs {
                    let held = Held {
                        fence: c.fence,
                        phase: Phase::Buffered,
                        lease_lost: false,
                        cancel_requested: false,
                    };
                    self.workers[w].held.insert(c.job.id, held);
                }
                self.note(format!("{id} claim {limit} -> [{labels}]"));
            }
            Err(e) => self.note(format!("{id} claim {limit} failed: {e}")),
        }
        Ok(())
    }

    /// Checks claimed jobs against the ledger; returns their labels for the trace.
    pub(crate) fn take_claimed(&mut self, worker: &str, jobs: &[ClaimedJob]) -> String {
        let mut labels = Vec::new();
        for c in jobs {
            if c.job.fence() != Some(c.fence) {
                self.violation(format!(
                    "step {}: claim by {worker} returned {} with fence {:?} but the job it carries reads {:?} ({})",
                    self.step,
                    self.ledger.name(&c.job.id),
                    c.fence,
                    c.job.fence(),
                    c.job.status
                ));
            }
            if let Err(v) = self.ledger.claimed(&c.job.id, c.fence, worker, self.step) {
                self.violation(v);
            }
            labels.push(format!("{}#{}", self.ledger.label(&c.job.id), c.fence.claim_seq));
        }
        labels.join(" ")
    }

    /// Starts or advances the handler of `id`; a finished one puts its ack in the outbox.
    async fn run_handler(&mut self, w: usize, id: &JobId) -> Result<()> {
        let Some(h) = self.workers[w].held.get(id).cloned() else { return Ok(()) };
        let worker = self.workers[w].id.clone();
        match h.phase {
            Phase::Buffered => {
                self.ledger.executed(id, h.fence, &worker, self.step);
                // Now and then a handler wedges for a long while, heartbeats and all, so the
                // runaway cap has attempts to fail.
                let turns = if self.rng.random_bool(0.1) {
                    self.rng.random_range(8..=30)
                } else {
                    self.rng.random_range(0..=2)
                };
                self.set_phase(w, id, if turns == 0 { None } else { Some(Phase::Running(turns)) });
                self.note(format!("{worker} starts {}#{}", self.ledger.label(id), h.fence.claim_seq));
                if turns == 0 {
                    self.finish(w, id, &h);
                }
            }
            Phase::Running(n) if n > 1 => self.set_phase(w, id, Some(Phase::Running(n - 1))),
            Phase::Running(_) => self.finish(w, id, &h),
            Phase::Finished => {}
        }
        Ok(())
    }

    fn set_phase(&mut self, w: usize, id: &JobId, phase: Option<Phase>) {
        if let (Some(h), Some(p)) = (self.workers[w].held.get_mut(id), phase) {
            h.phase = p;
        }
    }

    /// The handler returns: an outcome drawn from the seed, shaped by what it was told.
    pub(crate) fn finish(&mut self, w: usize, id: &JobId, h: &Held) {
        let now = self.now();
        let kind = if h.cancel_requested && self.rng.random_bool(0.7) {
            AckKind::Cancel { reason: "cancellation requested (handler stopped)".to_string() }
        } else if h.lease_lost && self.rng.random_bool(0.5) {
            AckKind::Fail { error: "lease lost: handler stopped".to_string(), retryable: true }
        } else {
            match self.rng.random_range(0..100) {
                0..=69 => AckKind::Complete { result: Some(id.as_str().as_bytes().to_vec()) },
                70..=81 => AckKind::Fail { error: "handler failed".to_string(), retryable: true },
                82..=85 => AckKind::Fail { error: "handler failed for good".to_string(), retryable: false },
                86..=92 => {
                    AckKind::Defer { until: now + self.rng.random_range(0..300), reason: "busy".to_string() }
                }
                _ => AckKind::Suspend { until: now + self.rng.random_range(0..500) },
            }
        };
        let worker = self.workers[w].id.clone();
        self.note(format!(
            "{worker} finishes {}#{}: {}",
            self.ledger.label(id),
            h.fence.claim_seq,
            kind_name(&kind)
        ));
        self.set_phase(w, id, Some(Phase::Finished));
        self.workers[w].outbox.push(Ack { job_id: id.clone(), fence: h.fence, kind });
    }

    /// Writes the outbox as one batch, retrying like the runtime's acker; then every job in
    /// the batch leaves the active set, whatever happened.
    pub(crate) async fn flush_acks(&mut self, w: usize) -> Result<()> {
        let batch = std::mem::take(&mut self.workers[w].outbox);
        if batch.is_empty() {
            return Ok(());
        }
        let worker = self.workers[w].id.clone();
        let mut tries = 0;
        loop {
            tries += 1;
            match self.checked_ack(&worker, &batch).await? {
                Ok(_) => break,
                Err(e) if e.is_retryable() && tries < ACK_TRIES => {
                    self.clock.advance(10 * i64::from(tries));
                }
                Err(_) => {
                    self.note(format!(
                        "{worker} drops an ack batch of {}: its jobs re-run once their leases lapse",
                        batch.len()
                    ));
                    break;
                }
            }
        }
        if batch.iter().any(|a| !matches!(a.kind, AckKind::Complete { .. } | AckKind::Cancel { .. })) {
            self.wake_workers();
        }
        let held = &mut self.workers[w].held;
        for ack in &batch {
            if held.get(&ack.job_id).is_some_and(|h| h.fence == ack.fence) {
                held.remove(&ack.job_id);
            }
        }
        Ok(())
    }

    /// Renews the lease of every job the worker holds.
    async fn heartbeat(&mut self, w: usize) -> Result<()> {
        let worker = self.workers[w].id.clone();
        let jobs: Vec<(JobId, Fence)> =
            self.workers[w].held.iter().map(|(id, h)| (id.clone(), h.fence)).collect();
        let Ok(replies) = self.checked_heartbeat(&worker, &jobs).await? else { return Ok(()) };
        for ((id, fence), reply) in jobs.iter().zip(replies) {
            let Some(h) = self.workers[w].held.get_mut(id).filter(|h| h.fence == *fence) else { continue };
            if reply.outcome == AckOutcome::Superseded {
                h.lease_lost = true;
            } else if reply.cancel_requested {
                h.cancel_requested = true;
            }
        }
        Ok(())
    }
}

/// A short name of an ack's kind for traces.
pub(crate) fn kind_name(kind: &AckKind) -> &'static str {
    match kind {
        AckKind::Complete { .. } => "complete",
        AckKind::Fail { retryable: true, .. } => "fail",
        AckKind::Fail { retryable: false, .. } => "fail for good",
        AckKind::Suspend { .. } => "suspend",
        AckKind::Defer { .. } => "defer",
        AckKind::Cancel { .. } => "cancel",
    }
}
