//! One store call for the hosts that dequeue or ack at the same moment.
//!
//! A process often runs many workflow hosts over one queue, and each host asks for one job at a
//! time. Sent one by one, their claims queue up for the store (and, on PostgreSQL, for the fair
//! claim's lock), paying a round trip and a commit per job. Instead, a host's claim or ack joins
//! a line; whoever finds no flush running starts one, and the flush takes everything waiting:
//! claims of the same shape (queues, served pairs, cap) become one `claim_fair` for all their
//! workers, acks one `ack` call. A lone host pays one spawned task per call; a busy process pays
//! one store call per batch instead of one per job, and the jobs and outcomes are exactly those
//! of the same calls made one after another.
//!
//! The flush runs in its own task, so a caller that stops waiting (a dropped future) never
//! strands the others: every request it took is answered. An ack batch that fails as a whole is
//! retried one ack at a time, so a bad ack fails alone; a job is acked at most once per store
//! call (a second ack of it waits for the next call, so it sees the first one's effect).

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::Arc;

use flexiq_core::store::{Ack, AckRequest, ClaimFairRequest, WorkflowServes, MAX_FAIR_CLAIMERS};
use flexiq_core::{AckOutcome, ClaimedJob, Error, Result, Store};
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::clock::Clock;

/// Most acks one flush writes in one store call.
const MAX_ACKS_PER_CALL: usize = 1_024;

/// What makes claims combinable: the same queues, served pairs and group cap.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ClaimShape {
    pub queues: Vec<String>,
    pub serves: Vec<WorkflowServes>,
    pub group_cap: Option<u32>,
}

/// A claimer's worker id and where its answer goes.
type ClaimWaiter = (String, oneshot::Sender<Result<Option<ClaimedJob>>>);

/// Waiting acks.
type AckBatch<O> = Vec<Waiting<Ack, O>>;

struct Waiting<R, O> {
    req: R,
    reply: oneshot::Sender<Result<O>>,
}

struct Line<R, O> {
    state: Mutex<LineState<R, O>>,
}

struct LineState<R, O> {
    waiting: Vec<Waiting<R, O>>,
    flushing: bool,
}

impl<R, O> Line<R, O> {
    fn new() -> Self {
        Line { state: Mutex::new(LineState { waiting: Vec::new(), flushing: false }) }
    }

    /// Queues `req`; returns whether the caller must start a flush.
    fn join(&self, req: R, reply: oneshot::Sender<Result<O>>) -> bool {
        let mut st = self.state.lock();
        st.waiting.push(Waiting { req, reply });
        !std::mem::replace(&mut st.flushing, true)
    }

    /// Everything waiting, or `None` (and the flush ends) when nothing is.
    fn take(&self) -> Option<Vec<Waiting<R, O>>> {
        let mut st = self.state.lock();
        if st.waiting.is_empty() {
            st.flushing = false;
            return None;
        }
        Some(std::mem::take(&mut st.waiting))
    }
}

/// The claim and ack lines of one queue handle (and its clock).
pub(crate) struct Combiner {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    claims: Line<(ClaimShape, String), Option<ClaimedJob>>,
    acks: Line<Ack, AckOutcome>,
}

impl Combiner {
    pub(crate) fn new(store: Arc<dyn Store>, clock: Arc<dyn Clock>) -> Arc<Self> {
        Arc::new(Combiner { store, clock, claims: Line::new(), acks: Line::new() })
    }

    /// Claims at most one job for `worker`, combined with the claims of the same shape that
    /// wait with it.
    pub(crate) async fn claim(
        self: &Arc<Self>,
        shape: ClaimShape,
        worker: String,
    ) -> Result<Option<ClaimedJob>> {
        let (tx, rx) = oneshot::channel();
        if self.claims.join((shape, worker), tx) {
            let me = self.clone();
            tokio::spawn(async move { me.flush_claims().await });
        }
        rx.await.map_err(|_| Error::backend("a combined workflow claim ended without an answer"))?
    }

    /// Writes one ack, combined with the acks that wait with it.
    pub(crate) async fn ack(self: &Arc<Self>, ack: Ack) -> Result<AckOutcome> {
        let (tx, rx) = oneshot::channel();
        if self.acks.join(ack, tx) {
            let me = self.clone();
            tokio::spawn(async move { me.flush_acks().await });
        }
        rx.await.map_err(|_| Error::backend("a combined workflow ack ended without an answer"))?
    }

    async fn flush_claims(&self) {
        while let Some(batch) = self.claims.take() {
            let mut shapes: Vec<ClaimShape> = Vec::new();
            let mut by_shape: HashMap<ClaimShape, Vec<ClaimWaiter>> = HashMap::new();
            for Waiting { req: (shape, worker), reply } in batch {
                let entry = by_shape.entry(shape.clone()).or_default();
                if entry.is_empty() {
                    shapes.push(shape);
                }
                entry.push((worker, reply));
            }
            for shape in shapes {
                let mut waiters = by_shape.remove(&shape).unwrap_or_default();
                while !waiters.is_empty() {
                    let rest = waiters.split_off(waiters.len().min(MAX_FAIR_CLAIMERS));
                    self.claim_for(&shape, std::mem::replace(&mut waiters, rest)).await;
                }
            }
        }
    }

    async fn claim_for(&self, shape: &ClaimShape, waiters: Vec<ClaimWaiter>) {
        let req = ClaimFairRequest {
            queues: shape.queues.clone(),
            serves: shape.serves.clone(),
            workers: waiters.iter().map(|(w, _)| w.clone()).collect(),
            group_cap: shape.group_cap,
            now: self.clock.now_ms(),
        };
        match self.store.claim_fair(req).await {
            Ok(jobs) => {
                let mut jobs = jobs.into_iter();
                for (_, reply) in waiters {
                    // A caller that stopped waiting lost nothing it could use: its job's lease
                    // lapses and the job is released like any abandoned claim.
                    let _ = reply.send(Ok(jobs.next()));
                }
            }
            Err(e) => {
                for (_, reply) in waiters {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }

    async fn flush_acks(&self) {
        while let Some(batch) = self.acks.take() {
            let mut left = batch;
            while !left.is_empty() {
                let (call, later) = one_call(left);
                self.ack_all(call).await;
                left = later;
            }
        }
    }

    async fn ack_all(&self, call: Vec<Waiting<Ack, AckOutcome>>) {
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
fn one_call<O>(batch: AckBatch<O>) -> (AckBatch<O>, AckBatch<O>) {
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
    use flexiq_core::store::AckKind;
    use flexiq_core::{Fence, JobId};

    fn waiting(id: &JobId) -> Waiting<Ack, AckOutcome> {
        let fence = Fence { attempt: 1, started_at: 0, claim_seq: 1 };
        let (reply, _) = oneshot::channel();
        Waiting { req: Ack { job_id: id.clone(), fence, kind: AckKind::Complete { result: None } }, reply }
    }

    #[test]
    fn a_job_is_acked_once_per_call_and_order_is_kept() {
        let (a, b, c) = (JobId::at(1), JobId::at(2), JobId::at(3));
        let batch = vec![waiting(&a), waiting(&b), waiting(&a), waiting(&c), waiting(&a)];
        let (call, later) = one_call(batch);
        let ids = |v: &[Waiting<Ack, AckOutcome>]| v.iter().map(|w| w.req.job_id.clone()).collect::<Vec<_>>();
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
