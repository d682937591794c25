//! Workflow stages as flexiq jobs: the store side of the workflow job contract.
//!
//! A workflow engine hands flexiq the stages of its runs. Each stage is an ordinary job (its
//! task is the workflow id, its queue the view's queue) that also carries its run id, stage id,
//! definition version and fairness group, so listings, stats, metrics and dead letters see it
//! like any other job. What only workflows need lives here: at most one row per (run, stage),
//! replaced in place on re-enqueue; a claim that serves chosen (workflow, version) pairs and caps
//! running jobs per fairness group, serving groups round-robin; and the run-wide cancel, delete
//! and listing, each backed by an index on the run id.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::fence::AckOutcome;
use crate::id::JobId;
use crate::job::{ClaimedJob, Job};
use crate::options::{validate_name, NewJob};
use crate::store::Ack;

/// A (workflow, definition version) pair a host serves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WorkflowServes {
    /// The workflow id (the job's task).
    pub workflow_id: String,
    /// The definition version; `None` serves every version of the workflow.
    pub definition_version: Option<String>,
}

/// Insert or replace the stages of workflow runs, all in one transaction.
#[derive(Debug, Clone)]
pub struct UpsertStagesRequest {
    /// The stages as jobs, each with `workflow_run_id` and `workflow_stage_id` set. A job whose
    /// (run, stage) pair already has a row replaces that row in place: the row keeps its id and
    /// claim sequence, and gets the new task, payload, priority, version, group, `run_at` and
    /// retry budget, with status `pending`, attempt 0, and no worker, lease, start, finish,
    /// result, progress, cancel request or last error.
    pub jobs: Vec<NewJob>,
    /// Unix ms.
    pub now: i64,
}

/// Most workers one fair claim serves.
pub const MAX_FAIR_CLAIMERS: usize = 256;

/// Claim at most one workflow job for each of some workers, in one transaction.
///
/// Several hosts waiting at once share one claim (one lock, one search, one commit) instead of
/// queueing for the store one by one; each still gets its own job stamped with its own id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimFairRequest {
    /// Queues to take from (at least one).
    pub queues: Vec<String>,
    /// Only jobs of these (workflow, version) pairs; empty serves every workflow.
    pub serves: Vec<WorkflowServes>,
    /// The claiming workers (1 to [`MAX_FAIR_CLAIMERS`], repeats allowed): the claim's n-th job
    /// goes to the n-th worker, so fewer jobs than workers leaves the last ones without.
    pub workers: Vec<String>,
    /// Most running jobs per fairness group across every worker (at least 1); `None` turns
    /// fairness off and the claim takes the best job by priority, then `run_at`, then id.
    pub group_cap: Option<u32>,
    /// Unix ms.
    pub now: i64,
}

/// Most acks one [`Workflows::ack_and_claim_fair`] applies.
pub const MAX_ACKS_BEFORE_CLAIM: usize = 1_024;

/// Fenced acks, then a fair claim that sees what they freed, in one store call.
///
/// A host acks its job and asks for the next one; in a process running many hosts, some ack
/// while others dequeue. Sending both in one call saves the claim its own round trip, lock and
/// commit, and the claim counts the running jobs the acks just ended (a group at its cap a
/// moment ago may give a job again).
#[derive(Debug, Clone, PartialEq)]
pub struct AckClaimFairRequest {
    /// The acks, applied first and in order (one job at most once, at most
    /// [`MAX_ACKS_BEFORE_CLAIM`]); their time is `claim.now`.
    pub acks: Vec<Ack>,
    /// The claim made after them.
    pub claim: ClaimFairRequest,
}

/// What [`Workflows::ack_and_claim_fair`] did.
#[derive(Debug, Clone)]
pub struct AckClaimFairReply {
    /// One outcome per ack, in order.
    pub outcomes: Vec<AckOutcome>,
    /// The claimed jobs (the n-th stamped with the claim's n-th worker), or why the claim
    /// failed after the acks were applied and committed.
    pub claimed: Result<Vec<ClaimedJob>>,
}

/// Cancel the jobs of a run that have not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelRunRequest {
    /// The workflow run.
    pub run_id: String,
    /// Unix ms.
    pub now: i64,
}

/// Remove the job rows of some stages of a run, whatever their status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteStagesRequest {
    /// The workflow run.
    pub run_id: String,
    /// The stages; empty removes nothing.
    pub stage_ids: Vec<String>,
}

impl UpsertStagesRequest {
    /// Checks every job, that each names a run and a stage, has no dependencies or unique key,
    /// and that no (run, stage) pair appears twice.
    pub fn validate(&self) -> Result<()> {
        let mut seen = HashSet::with_capacity(self.jobs.len());
        for j in &self.jobs {
            j.validate()?;
            let run = j.workflow_run_id.as_deref().unwrap_or("");
            let stage = j.workflow_stage_id.as_deref().unwrap_or("");
            validate_name("workflow_run_id", run)?;
            validate_name("stage_id", stage)?;
            if let Some(v) = &j.workflow_version {
                validate_name("definition_version", v)?;
            }
            if j.run_at < 0 {
                return Err(Error::invalid(format!(
                    "run_at {} of stage {stage} of run {run} is before the Unix epoch (stages cannot be LIFO)",
                    j.run_at
                )));
            }
            if !j.depends_on.is_empty() || j.unique_key.is_some() || j.dedup.is_some() {
                return Err(Error::invalid(format!(
                    "stage {stage} of run {run} cannot carry dependencies, a unique key or dedup"
                )));
            }
            if !seen.insert((run, stage)) {
                return Err(Error::invalid(format!("stage {stage} of run {run} appears twice in one call")));
            }
        }
        Ok(())
    }
}

impl ClaimFairRequest {
    /// Checks the queues, the worker id, the served pairs and that a cap is at least 1.
    pub fn validate(&self) -> Result<()> {
        if self.queues.is_empty() {
            return Err(Error::invalid("a workflow claim needs at least one queue"));
        }
        for q in &self.queues {
            validate_name("queue name", q)?;
        }
        if self.workers.is_empty() || self.workers.len() > MAX_FAIR_CLAIMERS {
            return Err(Error::invalid(format!(
                "a workflow claim serves 1 to {MAX_FAIR_CLAIMERS} workers, got {}",
                self.workers.len()
            )));
        }
        for w in &self.workers {
            validate_name("worker id", w)?;
        }
        for s in &self.serves {
            validate_name("workflow_id", &s.workflow_id)?;
            if let Some(v) = &s.definition_version {
                validate_name("definition_version", v)?;
            }
        }
        if self.group_cap == Some(0) {
            return Err(Error::invalid("fairness_cap must be at least 1"));
        }
        Ok(())
    }
}

impl AckClaimFairRequest {
    /// Checks the claim, the number of acks and that no job is acked twice.
    pub fn validate(&self) -> Result<()> {
        self.claim.validate()?;
        if self.acks.len() > MAX_ACKS_BEFORE_CLAIM {
            return Err(Error::invalid(format!(
                "a claim follows at most {MAX_ACKS_BEFORE_CLAIM} acks, got {}",
                self.acks.len()
            )));
        }
        let mut seen = HashSet::with_capacity(self.acks.len());
        for a in &self.acks {
            if !seen.insert(&a.job_id) {
                return Err(Error::invalid(format!("job {} is acked twice before one claim", a.job_id)));
            }
        }
        Ok(())
    }
}

impl CancelRunRequest {
    /// Checks the run id.
    pub fn validate(&self) -> Result<()> {
        validate_name("workflow_run_id", &self.run_id)
    }
}

impl DeleteStagesRequest {
    /// Checks the run id and the stage ids.
    pub fn validate(&self) -> Result<()> {
        validate_name("workflow_run_id", &self.run_id)?;
        for s in &self.stage_ids {
            validate_name("stage_id", s)?;
        }
        Ok(())
    }
}

/// Workflow stages: upsert by (run, stage), the fair claim, and run-wide operations.
#[async_trait::async_trait]
pub trait Workflows: Send + Sync {
    /// Inserts or replaces the stages in one transaction; returns each job's id in order (a
    /// replaced row keeps its id). A replaced running attempt's fence no longer matches, so its
    /// late ack is `Superseded`. A revoked task is `TaskRevoked` and nothing is written.
    async fn upsert_stages(&self, req: UpsertStagesRequest) -> Result<Vec<JobId>>;

    /// Claims up to one claimable workflow job per worker in `workers` (a job with a run id;
    /// pending or suspended, `run_at <= now`, queue not paused, within the queue's rate limit
    /// and concurrency cap) of `queues` matching `serves`, in one transaction; the n-th job
    /// returned is stamped with the n-th worker. Plain jobs in the same queues are left to
    /// plain claims. The jobs are those that that many single claims one after another would
    /// take: with a `group_cap`, groups (the job's `group_key`; `None` is the default group,
    /// which counts as one group) with `group_cap` running jobs in those queues, counting the
    /// jobs this claim already took, are skipped, and each job comes from the first group
    /// after the one the namespace's previous fair claim served, in group-key order, wrapping
    /// around; within a group, by priority, then `run_at`, then id. Without a cap, the best
    /// jobs by priority, then `run_at`, then id. Claimers at once never take a group past its
    /// cap.
    async fn claim_fair(&self, req: ClaimFairRequest) -> Result<Vec<ClaimedJob>>;

    /// Applies `acks` exactly as [`JobStore::ack`](crate::store::JobStore::ack) would (a
    /// superseded one changes nothing), then claims as [`Workflows::claim_fair`] would right
    /// after: the result is that of the two calls one after the other (in one transaction on
    /// SQLite, and on PostgreSQL while the requested queues have no limits).
    /// An `Err` means nothing was applied, or, as for any store call that fails, that the store
    /// cannot tell. When the acks committed and the claim then failed (PostgreSQL's claim from
    /// a limited queue, Redis), the reply carries the outcomes and the claim's error.
    async fn ack_and_claim_fair(&self, req: AckClaimFairRequest) -> Result<AckClaimFairReply>;

    /// Cancels the run's pending, waiting and suspended jobs; returns how many.
    async fn cancel_run(&self, req: CancelRunRequest) -> Result<u64>;

    /// Deletes the job rows of the run's listed stages, whatever their status (with their
    /// history: errors, logs, partials); returns how many rows went.
    async fn delete_stages(&self, req: DeleteStagesRequest) -> Result<u64>;

    /// Every job of a run, any status, oldest first (created_at, then id).
    async fn jobs_of_run(&self, run_id: &str) -> Result<Vec<Job>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::EnqueueOptions;

    fn stage(run: &str, stage: &str) -> NewJob {
        let opts = EnqueueOptions {
            workflow_run_id: Some(run.into()),
            workflow_stage_id: Some(stage.into()),
            ..Default::default()
        };
        NewJob::build("wf", b"{}".to_vec(), opts, 0).unwrap()
    }

    fn invalid<T: std::fmt::Debug>(r: Result<T>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        e.to_string()
    }

    #[test]
    fn stages_need_a_run_and_a_stage_once_each() {
        let ok =
            UpsertStagesRequest { jobs: vec![stage("r", "a"), stage("r", "b"), stage("s", "a")], now: 0 };
        ok.validate().unwrap();
        let twice = UpsertStagesRequest { jobs: vec![stage("r", "a"), stage("r", "a")], now: 0 };
        assert!(invalid(twice.validate()).contains("stage a of run r appears twice"));
        let mut no_run = stage("r", "a");
        no_run.workflow_run_id = None;
        assert!(invalid(UpsertStagesRequest { jobs: vec![no_run], now: 0 }.validate())
            .contains("workflow_run_id"));
        let mut empty_stage = stage("r", "a");
        empty_stage.workflow_stage_id = Some(String::new());
        assert!(
            invalid(UpsertStagesRequest { jobs: vec![empty_stage], now: 0 }.validate()).contains("stage_id")
        );
        let mut keyed = stage("r", "a");
        keyed.unique_key = Some("k".into());
        invalid(UpsertStagesRequest { jobs: vec![keyed], now: 0 }.validate());
    }

    #[test]
    fn fair_claims_are_checked() {
        let ok = ClaimFairRequest {
            queues: vec!["workflow".into()],
            serves: vec![WorkflowServes { workflow_id: "wf".into(), definition_version: None }],
            workers: vec!["w".into(), "w".into()],
            group_cap: Some(1),
            now: 0,
        };
        ok.validate().unwrap();
        assert!(
            invalid(ClaimFairRequest { workers: Vec::new(), ..ok.clone() }.validate()).contains("workers")
        );
        let many = vec!["w".to_string(); MAX_FAIR_CLAIMERS + 1];
        assert!(invalid(ClaimFairRequest { workers: many, ..ok.clone() }.validate()).contains("257"));
        let blank = vec!["w".to_string(), String::new()];
        assert!(invalid(ClaimFairRequest { workers: blank, ..ok.clone() }.validate()).contains("worker id"));
        assert!(invalid(ClaimFairRequest { group_cap: Some(0), ..ok.clone() }.validate())
            .contains("fairness_cap"));
        invalid(ClaimFairRequest { queues: Vec::new(), ..ok.clone() }.validate());
        let bad_serve = vec![WorkflowServes { workflow_id: String::new(), definition_version: None }];
        assert!(invalid(ClaimFairRequest { serves: bad_serve, ..ok }.validate()).contains("workflow_id"));
        assert!(invalid(CancelRunRequest { run_id: String::new(), now: 0 }.validate())
            .contains("workflow_run_id"));
        let del = DeleteStagesRequest { run_id: "r".into(), stage_ids: vec![String::new()] };
        assert!(invalid(del.validate()).contains("stage_id"));
    }
}
