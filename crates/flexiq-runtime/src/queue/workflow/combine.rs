//! One store call for the hosts that dequeue or ack at the same moment.
//!
//! A process often runs many workflow hosts over one queue, and each host asks for one job at a
//! time, then acks it. Sent one by one, their claims and acks queue up for the store (and, on
//! PostgreSQL, for the fair claim's lock), paying a round trip and a commit per job. Instead, a
//! host's claim or ack joins one line; whoever finds no flush running starts one, and the flush
//! takes everything waiting: the acks and the claims of one shape (queues, served pairs, cap)
//! become one `ack_and_claim_fair` call, the acks applied first so the claim sees the capacity
//! they freed; claims of other shapes get a `claim_fair` each. With 8 hosts the hosts fall out
//! of step (at any moment some wait on claims, others on acks), so a flush that served only one
//! kind would leave the others for a call of their own; one call for both serves everyone
//! waiting. The flush yields once before it takes the line, so hosts woken by the same answer
//! join it first. A lone host pays one spawned task per call; a busy process pays one store
//! call per flush instead of one per job, and the jobs and outcomes are exactly those of the
//! same calls made one after another in some order (a host's own claim and ack are never in
//! one flush: it awaits each).
//!
//! The flush runs in its own task, so a caller that stops waiting (a dropped future) never
//! strands the others: every request it took is answered. A joint call or an ack batch that
//! fails as a whole is retried as separate calls, the acks one at a time, so a bad ack fails
//! alone; a job is acked at most once per store call (a second ack of it waits for the next
//! call, so it sees the first one's effect).
//!
//! An ack may ask for its host's next job (a view with `claim_ahead`, see `ahead.rs`): that
//! claim joins the ack's own store call, after the claims of hosts that are waiting, and the
//! job is held for the host's next dequeue.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use flexiq_core::store::{
    Ack, AckClaimFairRequest, AckKind, AckRequest, ClaimFairRequest, WorkflowServes, MAX_ACKS_BEFORE_CLAIM,
    MAX_FAIR_CLAIMERS,
};
use flexiq_core::{AckOutcome, ClaimedJob, Error, Result, Store};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::ahead::{Ahead, Found, AHEAD_TTL, GIVE_BACK_REASON};
use crate::clock::Clock;

/// Most acks one flush writes in one store call.
const MAX_ACKS_PER_CALL: usize = MAX_ACKS_BEFORE_CLAIM;

/// Most times a flush yields to let callers join before it takes the line.
const GATHER_YIELDS: usize = 4;

/// What makes claims combinable: the same queues, served pairs and group cap.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ClaimShape {
    pub queues: Vec<String>,
    pub serves: Vec<WorkflowServes>,
    pub group_cap: Option<u32>,
}

/// A claimer's worker id and where its answer goes.
type ClaimWaiter = (String, Answer);

/// Where a claimed job goes.
enum Answer {
    /// To a host waiting in `dequeue`.
    Caller(oneshot::Sender<Result<Option<ClaimedJob>>>),
    /// Held for the worker's next dequeue of this shape.
    Ahead(ClaimShape),
}

/// A worker whose next job an ack asks for, and the shape to claim it with.
pub(crate) type Refill = (String, ClaimShape);

/// Waiting acks.
type AckBatch = Vec<AckWaiter>;

/// An ack and where its outcome goes.
struct AckWaiter {
    req: Ack,
    reply: oneshot::Sender<Result<AckOutcome>>,
    refill: Option<Refill>,
}

/// One request on the line.
enum Waiting {
    Claim(ClaimShape, ClaimWaiter),
    Ack(AckWaiter),
}

struct LineState {
    waiting: Vec<Waiting>,
    flushing: bool,
}

/// The claims and acks of one queue handle (and its clock) waiting for a store call.
pub(crate) struct Combiner {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    line: Mutex<LineState>,
    ahead: Ahead,
    /// Whether the sweeper of held jobs runs.
    sweeping: AtomicBool,
}

impl Combiner {
    pub(crate) fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Arc<Self> {
        Arc::new(Combiner {
            store,
            clock,
            line: Mutex::new(LineState { waiting: Vec::new(), flushing: false }),
            ahead: Ahead::default(),
            sweeping: AtomicBool::new(false),
        })
    }

    /// Queues `w`, starting a flush when none runs.
    fn join(self: &Arc<Self>, w: Waiting) {
        let start = {
            let mut st = self.line.lock();
            st.waiting.push(w);
            !std::mem::replace(&mut st.flushing, true)
        };
        if start {
            let me = self.clone();
            tokio::spawn(async move { me.flush().await });
        }
    }

    /// Everything waiting, or `None` (and the flush ends) when nothing is.
    fn take(&self) -> Option<Vec<Waiting>> {
        let mut st = self.line.lock();
        if st.waiting.is_empty() {
            st.flushing = false;
            return None;
        }
        Some(std::mem::take(&mut st.waiting))
    }

    /// Claims at most one job for `worker`, combined with the claims of the same shape that
    /// wait with it.
    pub(crate) async fn claim(
        self: &Arc<Self>,
        shape: ClaimShape,
        worker: String,
    ) -> Result<Option<ClaimedJob>> {
        match self.ahead.take(&worker, &shape) {
            Found::Nothing => {}
            Found::Job(job) => return Ok(Some(job)),
            Found::Other(job) => self.give_back(vec![job]).await,
        }
        let (tx, rx) = oneshot::channel();
        self.join(Waiting::Claim(shape, (worker, Answer::Caller(tx))));
        rx.await.map_err(|_| Error::backend("a combined workflow claim ended without an answer"))?
    }

    /// Writes one ack, combined with the acks that wait with it; with `refill`, the worker's
    /// next job is claimed in the same store call and held for its next dequeue.
    pub(crate) async fn ack(self: &Arc<Self>, ack: Ack, refill: Option<Refill>) -> Result<AckOutcome> {
        let refill = refill.filter(|(worker, _)| !self.ahead.holds(worker));
        let (tx, rx) = oneshot::channel();
        self.join(Waiting::Ack(AckWaiter { req: ack, reply: tx, refill }));
        rx.await.map_err(|_| Error::backend("a combined workflow ack ended without an answer"))?
    }

    /// Gives back every job held ahead (a defer to now that does not count the attempt).
    pub(crate) async fn give_back_all(&self) {
        let held = self.ahead.drain();
        if !held.is_empty() {
            self.give_back(held).await;
        }
    }

    /// Returns jobs claimed ahead to pending, fenced: a job re-claimed meanwhile is left alone.
    async fn give_back(&self, jobs: Vec<ClaimedJob>) {
        let now = self.clock.now_ms();
        let acks = jobs
            .into_iter()
            .map(|c| Ack {
                job_id: c.job.id,
                fence: c.fence,
                kind: AckKind::Defer { until: now, reason: GIVE_BACK_REASON.to_string() },
            })
            .collect::<Vec<_>>();
        let ids = acks.iter().map(|a| a.job_id.to_string()).collect::<Vec<_>>();
        if let Err(e) = self.store.ack(AckRequest { acks, now }).await {
            // The jobs stay running until their lease lapses; the rescuer then releases them.
            tracing::warn!(jobs = ?ids, error = %e, "could not give back workflow jobs claimed ahead");
        }
    }

    async fn flush(self: &Arc<Self>) {
        loop {
            self.gather().await;
            let Some(batch) = self.take() else { break };
            let mut acks = Vec::new();
            let mut refills = Vec::new();
            let mut shapes: Vec<ClaimShape> = Vec::new();
            let mut by_shape: HashMap<ClaimShape, Vec<ClaimWaiter>> = HashMap::new();
            let mut add = |shape: ClaimShape, waiter: ClaimWaiter| {
                let entry = by_shape.entry(shape.clone()).or_default();
                if entry.is_empty() {
                    shapes.push(shape);
                }
                entry.push(waiter);
            };
            for w in batch {
                match w {
                    Waiting::Ack(mut a) => {
                        refills.extend(a.refill.take());
                        acks.push(a);
                    }
                    Waiting::Claim(shape, waiter) => add(shape, waiter),
                }
            }
            // Hosts that wait come first: a refill gets a job only when one is left over.
            let mut seen = HashSet::new();
            for (worker, shape) in refills {
                if seen.insert(worker.clone()) {
                    add(shape.clone(), (worker, Answer::Ahead(shape)));
                }
            }
            for shape in shapes {
                let mut waiters = by_shape.remove(&shape).unwrap_or_default();
                while !waiters.is_empty() {
                    let rest = waiters.split_off(waiters.len().min(MAX_FAIR_CLAIMERS));
                    let now = std::mem::replace(&mut waiters, rest);
                    // The acks waiting go with the first claim: one store call for both.
                    let (call, later) = one_call(std::mem::take(&mut acks));
                    acks = later;
                    if call.is_empty() {
                        self.claim_for(&shape, now).await;
                    } else {
                        self.ack_and_claim(call, &shape, now).await;
                    }
                }
            }
            self.flush_acks(acks).await;
        }
    }

    /// The acks, then the claim, in one store call. A call that fails as a whole falls back to
    /// the two calls one after the other.
    async fn ack_and_claim(self: &Arc<Self>, acks: AckBatch, shape: &ClaimShape, waiters: Vec<ClaimWaiter>) {
        let claim = self.claim_request(shape, &waiters);
        let (reqs, replies): (Vec<Ack>, Vec<_>) = acks.into_iter().map(|w| (w.req, w.reply)).unzip();
        let req = AckClaimFairRequest { acks: reqs.clone(), claim };
        match self.store.ack_and_claim_fair(req).await {
            Ok(reply) => {
                if reply.outcomes.len() == replies.len() {
                    for (r, outcome) in replies.into_iter().zip(reply.outcomes) {
                        let _ = r.send(Ok(outcome));
                    }
                } else {
                    let e = Error::backend(format!(
                        "{} acks before a claim returned {} outcomes",
                        replies.len(),
                        reply.outcomes.len()
                    ));
                    for r in replies {
                        let _ = r.send(Err(e.clone()));
                    }
                }
                self.answer(waiters, reply.claimed);
            }
            Err(_) => {
                let back = reqs
                    .into_iter()
                    .zip(replies)
                    .map(|(req, reply)| AckWaiter { req, reply, refill: None })
                    .collect();
                self.ack_all(back).await;
                self.claim_for(shape, waiters).await;
            }
        }
    }

    /// Yields while callers keep joining the line (at most [`GATHER_YIELDS`] times), so the
    /// hosts woken by one answer share the next store call instead of racing it one by one.
    async fn gather(&self) {
        let mut seen = 0;
        for _ in 0..GATHER_YIELDS {
            tokio::task::yield_now().await;
            let now = self.line.lock().waiting.len();
            if now == seen {
                break;
            }
            seen = now;
        }
    }

    fn claim_request(&self, shape: &ClaimShape, waiters: &[ClaimWaiter]) -> ClaimFairRequest {
        ClaimFairRequest {
            queues: shape.queues.clone(),
            serves: shape.serves.clone(),
            workers: waiters.iter().map(|(w, _)| w.clone()).collect(),
            group_cap: shape.group_cap,
            now: self.clock.now_ms(),
        }
    }

    async fn claim_for(self: &Arc<Self>, shape: &ClaimShape, waiters: Vec<ClaimWaiter>) {
        let req = self.claim_request(shape, &waiters);
        let claimed = self.store.claim_fair(req).await;
        self.answer(waiters, claimed);
    }

    /// Starts the sweeper of held jobs unless it runs.
    fn start_sweeper(self: &Arc<Self>) {
        if !self.sweeping.swap(true, Ordering::AcqRel) {
            let me = self.clone();
            tokio::spawn(async move { me.sweep().await });
        }
    }

    /// Gives back each held job at its deadline, while any is held. A put that races the
    /// sweeper's exit finds the flag down and starts another.
    async fn sweep(self: Arc<Self>) {
        loop {
            let Some(due) = self.ahead.next_due() else {
                self.sweeping.store(false, Ordering::Release);
                if self.ahead.next_due().is_some() && !self.sweeping.swap(true, Ordering::AcqRel) {
                    continue;
                }
                return;
            };
            tokio::time::sleep_until(due).await;
            let late = self.ahead.take_due(tokio::time::Instant::now());
            if !late.is_empty() {
                self.give_back(late).await;
            }
        }
    }

    /// Gives the n-th claimed job to the n-th waiter, or the claim's error to all; a job
    /// claimed ahead is held for its worker until [`AHEAD_TTL`], then given back by the
    /// sweeper.
    fn answer(self: &Arc<Self>, waiters: Vec<ClaimWaiter>, claimed: Result<Vec<ClaimedJob>>) {
        let mut jobs = match claimed {
            Ok(jobs) => jobs.into_iter(),
            Err(e) => {
                for (_, answer) in waiters {
                    if let Answer::Caller(reply) = answer {
                        let _ = reply.send(Err(e.clone()));
                    }
                }
                return;
            }
        };
        // Every job held by this answer goes back at the same moment.
        let due = tokio::time::Instant::now() + AHEAD_TTL;
        for (worker, answer) in waiters {
            match answer {
                // A caller that stopped waiting lost nothing it could use: its job's lease
                // lapses and the job is released like any abandoned claim.
                Answer::Caller(reply) => {
                    let _ = reply.send(Ok(jobs.next()));
                }
                Answer::Ahead(shape) => {
                    let Some(job) = jobs.next() else { continue };
                    match self.ahead.put(&worker, shape, job, due) {
                        Ok(()) => self.start_sweeper(),
                        Err(job) => {
                            let me = self.clone();
                            tokio::spawn(async move { me.give_back(vec![job]).await });
                        }
                    }
                }
            }
        }
    }

    async fn flush_acks(&self, batch: AckBatch) {
        let mut left = batch;
        while !left.is_empty() {
            let (call, later) = one_call(left);
            self.ack_all(call).await;
            left = later;
        }
    }

    async fn ack_all(&self, call: AckBatch) {
        let (acks, replies): (Vec<Ack>, Vec<_>) = call.into_iter().map(|w| (w.req, w.reply)).unzip();
        let single = acks.len() == 1;
        let req = AckRequest { acks: acks.clone(), now: self.clock.now_ms() };
        match self.store.ack(req).await {
            Ok(outcomes) if outcomes.len() == replies.len() => {
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    let _ = reply.send(Ok(outcome));
                }
            }
            Ok(outcomes) => {
                let e =
                    Error::backend(format!("{} acks returned {} outcomes", replies.len(), outcomes.len()));
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
            Err(e) if single => {
                let _ = replies.into_iter().next().map(|r| r.send(Err(e)));
            }
            Err(_) => {
                for (ack, reply) in acks.into_iter().zip(replies) {
                    let req = AckRequest { acks: vec![ack], now: self.clock.now_ms() };
                    let one = self.store.ack(req).await.and_then(|mut o| {
                        o.pop().ok_or_else(|| Error::backend("an ack returned no outcome"))
                    });
                    let _ = reply.send(one);
                }
            }
        }
    }
}

/// The acks of one store call (each job at most once, at most [`MAX_ACKS_PER_CALL`]) and the
/// rest, in their order.
fn one_call(batch: AckBatch) -> (AckBatch, AckBatch) {
    let mut seen = HashSet::new();
    let mut call = Vec::new();
    let mut later = Vec::new();
    for w in batch {
        if call.len() < MAX_ACKS_PER_CALL && seen.insert(w.req.job_id.clone()) {
            call.push(w);
        } else {
            later.push(w);
        }
    }
    (call, later)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexiq_core::{Fence, JobId};

    fn waiting(id: &JobId) -> AckWaiter {
        let fence = Fence { attempt: 1, started_at: 0, claim_seq: 1 };
        let (reply, _) = oneshot::channel();
        let req = Ack { job_id: id.clone(), fence, kind: AckKind::Complete { result: None } };
        AckWaiter { req, reply, refill: None }
    }

    #[test]
    fn a_job_is_acked_once_per_call_and_order_is_kept() {
        let (a, b, c) = (JobId::at(1), JobId::at(2), JobId::at(3));
        let batch = vec![waiting(&a), waiting(&b), waiting(&a), waiting(&c), waiting(&a)];
        let (call, later) = one_call(batch);
        let ids = |v: &[AckWaiter]| v.iter().map(|w| w.req.job_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&call), vec![a.clone(), b, c]);
        assert_eq!(ids(&later), vec![a.clone(), a.clone()]);
        let (call, later) = one_call(later);
        assert_eq!((ids(&call), ids(&later)), (vec![a.clone()], vec![a]));
    }

    #[test]
    fn a_call_holds_at_most_the_ack_limit() {
        let batch: Vec<_> = (0..MAX_ACKS_PER_CALL as i64 + 5).map(|i| waiting(&JobId::at(i))).collect();
        let (call, later) = one_call(batch);
        assert_eq!((call.len(), later.len()), (MAX_ACKS_PER_CALL, 5));
    }
}
