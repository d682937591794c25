//! What the simulated callers know: every job they tried to enqueue, every claim and execution,
//! every fence the store called superseded, and every completion that committed.
//!
//! The ledger is the callers' side of the story; the store's side is read back from the store
//! itself. Violations are found where the two disagree, and the ledger's own rules (a claim
//! sequence only grows, a completed job is never handed out again) are checked as entries
//! arrive, so a report names the step where things first went wrong.

use std::collections::{BTreeMap, HashSet};

use flexiq_core::{Fence, JobId};

/// Whether a job's enqueue committed, as far as its callers can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// A call returned its id.
    Acked,
    /// A call's reply was lost after the store applied it.
    Committed,
    /// Every call failed before reaching the store.
    NotCommitted,
    /// A call failed in the store itself (its outcome shows in the listing).
    Unknown,
}

/// A completion the store committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    /// The claim whose attempt completed.
    pub(crate) claim_seq: u64,
    /// Whether the caller saw `Acknowledged` (false: the reply was lost).
    pub(crate) acknowledged: bool,
    /// The step it committed at.
    pub(crate) step: u64,
}

/// One job as its callers know it.
#[derive(Debug, Clone)]
pub(crate) struct JobInfo {
    pub(crate) label: String,
    /// For a job re-sent under a fresh id, the id the first call gave it.
    pub(crate) first: Option<JobId>,
    /// For a job re-sent under a fresh id, whether the earlier copy was live when it was, so
    /// the unique key had to absorb it.
    pub(crate) deduped: bool,
    pub(crate) sent: Sent,
    pub(crate) last_claim_seq: Option<u64>,
    pub(crate) completed: Option<Completion>,
}

/// One run of a handler.
#[derive(Debug, Clone)]
pub(crate) struct Execution {
    pub(crate) job: JobId,
    pub(crate) fence: Fence,
    pub(crate) worker: String,
    pub(crate) step: u64,
}

/// The callers' record of one seed.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    jobs: BTreeMap<JobId, JobInfo>,
    order: Vec<JobId>,
    executions: Vec<Execution>,
    superseded: HashSet<(JobId, Fence)>,
}

impl Ledger {
    /// Registers a job about to be sent; `label` names it in traces.
    pub(crate) fn register(&mut self, id: &JobId, label: String) {
        self.order.push(id.clone());
        self.jobs.insert(
            id.clone(),
            JobInfo {
                label,
                first: None,
                deduped: false,
                sent: Sent::NotCommitted,
                last_claim_seq: None,
                completed: None,
            },
        );
    }

    /// Registers `id` as `earlier` sent again under a fresh id (and the same unique key);
    /// `live`: whether the earlier copy was pending, running or waiting then.
    pub(crate) fn register_resend(&mut self, id: &JobId, earlier: &JobId, live: bool) {
        let (label, first) = match self.jobs.get(earlier) {
            Some(j) => (format!("{}'", j.label), j.first.clone().unwrap_or_else(|| earlier.clone())),
            None => (format!("?{id}"), earlier.clone()),
        };
        self.register(id, label);
        if let Some(j) = self.jobs.get_mut(id) {
            j.first = Some(first);
            j.deduped = live;
        }
    }

    /// The id of the first call that sent `id`'s job (`id` itself unless it was re-sent).
    pub(crate) fn first_id(&self, id: &JobId) -> JobId {
        self.jobs.get(id).and_then(|j| j.first.clone()).unwrap_or_else(|| id.clone())
    }

    /// Records what the enqueue calls of a job amounted to.
    pub(crate) fn set_sent(&mut self, id: &JobId, sent: Sent) {
        if let Some(j) = self.jobs.get_mut(id) {
            j.sent = sent;
        }
    }

    /// Every job registered, in the order it was.
    pub(crate) fn jobs(&self) -> impl Iterator<Item = (&JobId, &JobInfo)> {
        self.order.iter().filter_map(|id| self.jobs.get(id).map(|j| (id, j)))
    }

    /// The job's record.
    pub(crate) fn job(&self, id: &JobId) -> Option<&JobInfo> {
        self.jobs.get(id)
    }

    /// `j3 (0190...)`, or the bare id of a job nobody registered.
    pub(crate) fn name(&self, id: &JobId) -> String {
        match self.jobs.get(id) {
            Some(j) => format!("{} ({id})", j.label),
            None => format!("unregistered job {id}"),
        }
    }

    /// The short label of a job for traces.
    pub(crate) fn label(&self, id: &JobId) -> String {
        self.jobs.get(id).map(|j| j.label.clone()).unwrap_or_else(|| format!("?{id}"))
    }

    /// A claim handed `id` out with `fence`: checks that the claim sequence grew and that the
    /// job had not completed already.
    pub(crate) fn claimed(
        &mut self,
        id: &JobId,
        fence: Fence,
        worker: &str,
        step: u64,
    ) -> Result<(), String> {
        let name = self.name(id);
        let Some(j) = self.jobs.get_mut(id) else {
            return Err(format!("step {step}: worker {worker} claimed {name}, which no caller enqueued"));
        };
        let mut problems = Vec::new();
        if let Some(last) = j.last_claim_seq.filter(|last| fence.claim_seq <= *last) {
            problems.push(format!(
                "step {step}: worker {worker} claimed {name} with claim_seq {} after a claim with claim_seq {last}",
                fence.claim_seq
            ));
        }
        j.last_claim_seq = Some(j.last_claim_seq.unwrap_or(0).max(fence.claim_seq));
        if let Some(c) = j.completed {
            let how = if c.acknowledged { "acknowledged" } else { "committed (reply lost)" };
            problems.push(format!(
                "step {step}: worker {worker} claimed {name} again (claim_seq {}) after its completion by claim_seq {} was {how} at step {}",
                fence.claim_seq, c.claim_seq, c.step
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    /// A handler started on the attempt `fence` of `id`.
    pub(crate) fn executed(&mut self, id: &JobId, fence: Fence, worker: &str, step: u64) {
        self.executions.push(Execution { job: id.clone(), fence, worker: worker.to_string(), step });
    }

    /// Every execution, oldest first.
    pub(crate) fn executions(&self) -> &[Execution] {
        &self.executions
    }

    /// The store called attempt `fence` of `id` superseded.
    pub(crate) fn supersede(&mut self, id: &JobId, fence: Fence) {
        self.superseded.insert((id.clone(), fence));
    }

    /// Whether the store has called attempt `fence` of `id` superseded before.
    pub(crate) fn was_superseded(&self, id: &JobId, fence: Fence) -> bool {
        self.superseded.contains(&(id.clone(), fence))
    }

    /// The attempt with `claim_seq` completed `id`.
    pub(crate) fn complete(&mut self, id: &JobId, claim_seq: u64, acknowledged: bool, step: u64) {
        if let Some(j) = self.jobs.get_mut(id) {
            let c = j.completed.get_or_insert(Completion { claim_seq, acknowledged, step });
            c.acknowledged |= acknowledged && c.claim_seq == claim_seq;
        }
    }
}
