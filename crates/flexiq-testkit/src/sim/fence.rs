//! Acks and heartbeats with the fence invariants checked around them.
//!
//! Each call is bracketed by reads of every job it names, straight from the wrapped store, so
//! the reply can be judged against what the store held just before and holds just after
//! (nothing else runs in between). `Acknowledged` must mean the job was running under that
//! very fence and has now moved as the ack said; `Superseded` must mean it was not, and that
//! nothing changed. A call that failed before reaching the store must have changed nothing;
//! one whose reply was lost is judged by the state it left, which is also how a completion
//! whose acknowledgement never arrived is still known to have committed.

use std::collections::{BTreeMap, BTreeSet};

use flexiq_core::store::{Ack, AckKind, AckRequest, HeartbeatReply, HeartbeatRequest, ListJobsRequest};
use flexiq_core::{AckOutcome, Error, Fence, Job, JobFilter, JobId, JobStatus, Result, MAX_PAGE};

use super::worker::kind_name;
use super::world::World;
use crate::fault::{Fault, Op};

type Snapshot = BTreeMap<JobId, Option<Job>>;

impl World {
    /// The jobs `ids` as the store holds them now: one `get` for one job, else one listing of
    /// the namespace (a seed's namespace holds a few dozen jobs at most), so a batch costs two
    /// round trips whatever its size.
    async fn snapshot(&self, ids: &BTreeSet<JobId>) -> Result<Snapshot> {
        let truth = self.truth();
        if ids.len() == 1 {
            let id = ids.first().expect("one id");
            return Ok(BTreeMap::from([(id.clone(), truth.get(id).await?)]));
        }
        let req = ListJobsRequest { filter: JobFilter::default(), limit: MAX_PAGE, offset: 0 };
        let mut all: BTreeMap<JobId, Job> =
            truth.list_jobs(req).await?.into_iter().map(|j| (j.id.clone(), j)).collect();
        Ok(ids.iter().map(|id| (id.clone(), all.remove(id))).collect())
    }

    /// The fault injected into the call made since `from` injections, if any.
    fn fault_since(&self, from: usize, op: Op) -> Option<(Fault, Option<bool>)> {
        self.store.injections_since(from).into_iter().find(|i| i.op == op).map(|i| (i.fault, i.committed))
    }

    /// Sends `acks` as one batch and checks the fences; the outer error is a failed read of
    /// the truth, the inner one the call's own.
    pub(crate) async fn checked_ack(
        &mut self,
        worker: &str,
        acks: &[Ack],
    ) -> Result<std::result::Result<Vec<AckOutcome>, Error>> {
        let mut seen = BTreeSet::new();
        let twice: BTreeSet<JobId> =
            acks.iter().filter(|a| !seen.insert(a.job_id.clone())).map(|a| a.job_id.clone()).collect();
        let before = self.snapshot(&seen).await?;
        let from = self.store.injection_count();
        let reply = flexiq_core::store::JobStore::ack(
            &*self.store,
            AckRequest { acks: acks.to_vec(), now: self.now() },
        )
        .await;
        let after = self.snapshot(&seen).await?;
        let fault = self.fault_since(from, Op::Ack);
        let labels: Vec<String> = acks
            .iter()
            .map(|a| format!("{}#{} {}", self.ledger.label(&a.job_id), a.fence.claim_seq, kind_name(&a.kind)))
            .collect();
        // A job acked twice in one batch is judged only by where it ended: a completion of it
        // still counts.
        for id in &twice {
            let Some(done) = after[id].as_ref().filter(|j| j.status == JobStatus::Completed) else {
                continue;
            };
            let by = acks.iter().any(|a| {
                a.job_id == *id
                    && a.fence.claim_seq == done.claim_seq
                    && matches!(a.kind, AckKind::Complete { .. })
            });
            if by && before[id].as_ref().map(|j| j.status) != Some(JobStatus::Completed) {
                self.ledger.complete(id, done.claim_seq, reply.is_ok(), self.step);
            }
        }
        match &reply {
            Ok(outcomes) => {
                let shown: Vec<&str> = outcomes.iter().map(|o| o.as_str()).collect();
                self.note(format!("{worker} ack [{}] -> {shown:?}", labels.join(", ")));
                if outcomes.len() != acks.len() {
                    self.violation(format!(
                        "step {}: ack of {} jobs by {worker} returned {} outcomes",
                        self.step,
                        acks.len(),
                        outcomes.len()
                    ));
                }
                for (ack, outcome) in acks.iter().zip(outcomes) {
                    if !twice.contains(&ack.job_id) {
                        self.judge_ack(ack, Some(*outcome), &before[&ack.job_id], &after[&ack.job_id]);
                    }
                }
            }
            Err(e) => {
                self.note(format!("{worker} ack [{}] failed: {e}", labels.join(", ")));
                for ack in acks.iter().filter(|a| !twice.contains(&a.job_id)) {
                    let (b, a) = (&before[&ack.job_id], &after[&ack.job_id]);
                    if matches!(fault, Some((Fault::FailBefore { .. }, _))) {
                        if b != a {
                            self.violation(format!(
                                "step {}: an ack call that failed before reaching the store changed {}: {} -> {}",
                                self.step,
                                self.ledger.name(&ack.job_id),
                                describe(b),
                                describe(a)
                            ));
                        }
                    } else {
                        self.judge_ack(ack, None, b, a);
                    }
                }
            }
        }
        Ok(reply)
    }

    /// Checks one ack against the job before and after; `outcome` is `None` when the reply
    /// was lost (then whether it applied is read from the job).
    fn judge_ack(
        &mut self,
        ack: &Ack,
        outcome: Option<AckOutcome>,
        before: &Option<Job>,
        after: &Option<Job>,
    ) {
        let name = self.ledger.name(&ack.job_id);
        let step = self.step;
        let held = before.as_ref().and_then(Job::fence) == Some(ack.fence);
        let applied = match outcome {
            Some(o) => o == AckOutcome::Acknowledged,
            None => held && before != after,
        };
        if !applied {
            if outcome.is_some() && held {
                self.violation(format!(
                    "step {step}: ack of {name} with fence {:?} was superseded while the job was running under that fence",
                    ack.fence
                ));
            }
            if before != after {
                self.violation(format!(
                    "step {step}: superseded ack of {name} with fence {:?} changed the job: {} -> {}",
                    ack.fence,
                    describe(before),
                    describe(after)
                ));
            }
            if outcome.is_some() {
                self.ledger.supersede(&ack.job_id, ack.fence);
            }
            return;
        }
        if !held {
            self.violation(format!(
                "step {step}: ack of {name} with fence {:?} was acknowledged but the job was {}",
                ack.fence,
                describe(before)
            ));
        }
        if self.ledger.was_superseded(&ack.job_id, ack.fence) {
            self.violation(format!(
                "step {step}: ack of {name} with fence {:?} was acknowledged after the store had called that attempt superseded",
                ack.fence
            ));
        }
        let status = after.as_ref().map(|j| j.status);
        let fits = match &ack.kind {
            AckKind::Complete { .. } => status == Some(JobStatus::Completed),
            AckKind::Fail { .. } => {
                matches!(status, Some(JobStatus::Pending | JobStatus::Failed | JobStatus::Dead))
            }
            AckKind::Defer { .. } => status == Some(JobStatus::Pending),
            AckKind::Suspend { .. } => status == Some(JobStatus::Suspended),
            AckKind::Cancel { .. } => status == Some(JobStatus::Cancelled),
        };
        if !fits || after.as_ref().and_then(Job::fence) == Some(ack.fence) {
            self.violation(format!(
                "step {step}: {} ack of {name} with fence {:?} was applied but left the job {}",
                kind_name(&ack.kind),
                ack.fence,
                describe(after)
            ));
        }
        if matches!(ack.kind, AckKind::Complete { .. }) && status == Some(JobStatus::Completed) {
            self.ledger.complete(&ack.job_id, ack.fence.claim_seq, outcome.is_some(), step);
        }
    }

    /// Sends one heartbeat for `jobs` and checks the fences.
    pub(crate) async fn checked_heartbeat(
        &mut self,
        worker: &str,
        jobs: &[(JobId, Fence)],
    ) -> Result<std::result::Result<Vec<HeartbeatReply>, Error>> {
        let ids: BTreeSet<JobId> = jobs.iter().map(|(id, _)| id.clone()).collect();
        let before = self.snapshot(&ids).await?;
        let from = self.store.injection_count();
        let req = HeartbeatRequest { jobs: jobs.to_vec(), now: self.now() };
        let reply = flexiq_core::store::JobStore::heartbeat(&*self.store, req).await;
        let after = self.snapshot(&ids).await?;
        let fault = self.fault_since(from, Op::Heartbeat);
        let labels: Vec<String> =
            jobs.iter().map(|(id, f)| format!("{}#{}", self.ledger.label(id), f.claim_seq)).collect();
        match &reply {
            Ok(replies) => {
                let shown: Vec<&str> = replies.iter().map(|r| r.outcome.as_str()).collect();
                self.note(format!("{worker} heartbeat [{}] -> {shown:?}", labels.join(", ")));
                if replies.len() != jobs.len() {
                    self.violation(format!(
                        "step {}: heartbeat of {} jobs by {worker} returned {} replies",
                        self.step,
                        jobs.len(),
                        replies.len()
                    ));
                }
                for ((id, fence), r) in jobs.iter().zip(replies) {
                    self.judge_heartbeat(id, *fence, r, &before[id], &after[id]);
                }
            }
            Err(e) => {
                self.note(format!("{worker} heartbeat [{}] failed: {e}", labels.join(", ")));
                if matches!(fault, Some((Fault::FailBefore { .. }, _))) {
                    for id in &ids {
                        if before[id] != after[id] {
                            self.violation(format!(
                                "step {}: a heartbeat that failed before reaching the store changed {}",
                                self.step,
                                self.ledger.name(id)
                            ));
                        }
                    }
                }
            }
        }
        Ok(reply)
    }

    fn judge_heartbeat(
        &mut self,
        id: &JobId,
        fence: Fence,
        r: &HeartbeatReply,
        before: &Option<Job>,
        after: &Option<Job>,
    ) {
        let name = self.ledger.name(id);
        let step = self.step;
        let held = before.as_ref().and_then(Job::fence) == Some(fence);
        match r.outcome {
            AckOutcome::Acknowledged => {
                if !held || self.ledger.was_superseded(id, fence) {
                    self.violation(format!(
                        "step {step}: heartbeat of {name} with fence {fence:?} renewed a lease the attempt did not hold (job was {})",
                        describe(before)
                    ));
                }
            }
            AckOutcome::Superseded => {
                if held {
                    self.violation(format!(
                        "step {step}: heartbeat of {name} with fence {fence:?} was superseded while the job was running under that fence"
                    ));
                }
                if before != after {
                    self.violation(format!(
                        "step {step}: superseded heartbeat of {name} changed the job: {} -> {}",
                        describe(before),
                        describe(after)
                    ));
                }
                self.ledger.supersede(id, fence);
            }
        }
    }
}

/// A job's state in one line: status, fence and the fields an ack writes.
pub(crate) fn describe(job: &Option<Job>) -> String {
    match job {
        None => "gone".to_string(),
        Some(j) => format!(
            "{} (attempt {}, claim_seq {}, started {:?}, heartbeat {:?}, finished {:?}, run_at {}, worker {:?}, error {:?})",
            j.status, j.attempt, j.claim_seq, j.started_at, j.heartbeat_at, j.finished_at, j.run_at, j.worker_id, j.last_error
        ),
    }
}
