//! The producer: enqueues the seed's jobs in small batches (some depending on a job sent
//! earlier, so they wait, and are cancelled when it fails) and upserts its workflow stages,
//! once per batch as the runtime's `Queue` does, or (when the scenario says so) re-sending a
//! call once on a retryable error (with the very same ids, or as new jobs under the same
//! unique keys), as a careful client would. What each id's calls amounted to is kept for the
//! end-state check: an id whose every call failed before reaching the store must not exist,
//! one a call committed must, and a re-sent job must not exist twice.

use std::collections::BTreeMap;

use flexiq_core::store::{EnqueueRequest, UpsertStagesRequest, Workflows};
use flexiq_core::{Backoff, EnqueueOptions, Error, JobId, NewJob, Result};
use rand::Rng;

use super::ledger::Sent;
use super::scenario::Resend;
use super::scenario::{PLAIN_QUEUES, STAGE_QUEUE, STAGE_TASK};
use super::world::World;
use crate::fault::{Fault, Op};

/// Calls per batch when re-sending: the first and one retry.
const SEND_TRIES: u32 = 2;

/// What is left to send.
#[derive(Debug, Clone)]
pub(crate) struct Producer {
    jobs_left: usize,
    stages_left: usize,
    jobs_made: usize,
    stages_made: usize,
}

impl Producer {
    pub(crate) fn new(jobs: usize, stages: usize) -> Self {
        Producer { jobs_left: jobs, stages_left: stages, jobs_made: 0, stages_made: 0 }
    }

    /// Whether everything was sent.
    pub(crate) fn done(&self) -> bool {
        self.jobs_left == 0 && self.stages_left == 0
    }
}

/// What one call did, as far as the wrapper's record tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    Replied,
    NotApplied,
    Applied,
    Unknown,
}

impl World {
    /// Sends the next batch: plain jobs or stages, whichever the seed picks among those left.
    pub(crate) async fn produce(&mut self) -> Result<()> {
        self.wake_workers();
        let stages =
            self.producer.stages_left > 0 && (self.producer.jobs_left == 0 || self.rng.random_bool(0.3));
        let n = self.rng.random_range(1..=self.sc.batch_max);
        if stages {
            let n = n.min(self.producer.stages_left);
            self.producer.stages_left -= n;
            let jobs = (0..n).map(|_| self.new_stage()).collect::<Result<Vec<_>>>()?;
            self.send(jobs, true).await
        } else {
            let n = n.min(self.producer.jobs_left);
            self.producer.jobs_left -= n;
            let jobs = (0..n).map(|_| self.new_job()).collect::<Result<Vec<_>>>()?;
            self.send(jobs, false).await
        }
    }

    fn new_job(&mut self) -> Result<NewJob> {
        let now = self.now();
        let label = format!("j{}", self.producer.jobs_made);
        self.producer.jobs_made += 1;
        let parents: Vec<JobId> = self
            .ledger
            .jobs()
            .filter(|(_, j)| j.label.starts_with('j') && matches!(j.sent, Sent::Acked | Sent::Committed))
            .map(|(id, _)| id.clone())
            .collect();
        let depends_on = if !parents.is_empty() && self.rng.random_bool(0.2) {
            vec![parents[self.rng.random_range(0..parents.len())].to_string()]
        } else {
            Vec::new()
        };
        let opts = EnqueueOptions {
            unique_key: (self.sc.resend == Resend::FreshIds).then(|| label.clone()),
            depends_on,
            queue: Some(PLAIN_QUEUES[self.rng.random_range(0..PLAIN_QUEUES.len())].to_string()),
            priority: Some(self.rng.random_range(0..=1)),
            max_retries: Some(self.rng.random_range(0..=3)),
            backoff: Some(if self.rng.random_bool(0.5) {
                Backoff::NONE
            } else {
                Backoff { base_ms: 20, max_ms: 100 }
            }),
            delay_ms: self.rng.random_bool(0.2).then(|| self.rng.random_range(1..=500)),
            ..Default::default()
        };
        let mut job = NewJob::build("t", label.clone().into_bytes(), opts, now)?;
        job.id = self.ids.next(now);
        self.ledger.register(&job.id, label);
        Ok(job)
    }

    fn new_stage(&mut self) -> Result<NewJob> {
        let now = self.now();
        let n = self.producer.stages_made;
        self.producer.stages_made += 1;
        let label = format!("s{n}");
        let opts = EnqueueOptions {
            queue: Some(STAGE_QUEUE.to_string()),
            max_retries: Some(self.rng.random_range(0..=3)),
            backoff: Some(Backoff::NONE),
            group_key: Some(format!("g{}", n % 2)),
            workflow_run_id: Some(format!("run{}", n % 2)),
            workflow_stage_id: Some(label.clone()),
            ..Default::default()
        };
        let mut job = NewJob::build(STAGE_TASK, label.clone().into_bytes(), opts, now)?;
        job.id = self.ids.next(now);
        self.ledger.register(&job.id, label);
        Ok(job)
    }

    async fn send(&mut self, mut jobs: Vec<NewJob>, stages: bool) -> Result<()> {
        let op = if stages { Op::UpsertStages } else { Op::Enqueue };
        let resend =
            if stages && self.sc.resend == Resend::FreshIds { Resend::SameIds } else { self.sc.resend };
        let tries_allowed = if resend == Resend::Never { 1 } else { SEND_TRIES };
        let mut fate: BTreeMap<JobId, Vec<Attempt>> = BTreeMap::new();
        for tries in 1..=tries_allowed {
            let now = self.now();
            if tries > 1 && resend == Resend::FreshIds {
                for j in &mut jobs {
                    // Unique keys dedupe against live jobs only: an earlier copy that is
                    // already terminal (cancelled with a failed parent) lets a new one in.
                    let was = self.truth().job_status(&j.id).await?;
                    let earlier = std::mem::replace(&mut j.id, self.ids.next(now));
                    let live = was.is_some_and(|st| !st.is_terminal());
                    self.ledger.register_resend(&j.id, &earlier, live);
                    let shown = was.map_or("absent".to_string(), |st| st.to_string());
                    self.note(format!(
                        "{} is {shown}: re-sent as {}",
                        self.ledger.label(&earlier),
                        self.ledger.label(&j.id)
                    ));
                }
            }
            let ids: Vec<JobId> = jobs.iter().map(|j| j.id.clone()).collect();
            let labels: Vec<String> = ids.iter().map(|id| self.ledger.label(id)).collect();
            let from = self.store.injection_count();
            let reply: std::result::Result<Vec<JobId>, Error> = if stages {
                self.store.upsert_stages(UpsertStagesRequest { jobs: jobs.clone(), now }).await
            } else {
                let req = EnqueueRequest { jobs: jobs.clone(), max_pending: None, now };
                flexiq_core::store::JobStore::enqueue(&*self.store, req)
                    .await
                    .map(|out| out.into_iter().map(|e| e.id).collect())
            };
            let fault = self.store.injections_since(from).into_iter().find(|i| i.op == op);
            match reply {
                Ok(got) => {
                    self.note(format!("{op} [{}] -> ok", labels.join(" ")));
                    self.take_reply(op, &ids, &got, &mut fate);
                    break;
                }
                Err(e) => {
                    self.note(format!("{op} [{}] failed: {e}", labels.join(" ")));
                    let attempt = match fault.map(|i| (i.fault, i.committed)) {
                        Some((Fault::FailBefore { .. }, _)) => Attempt::NotApplied,
                        Some((Fault::FailAfter { .. }, Some(true))) => Attempt::Applied,
                        _ => Attempt::Unknown,
                    };
                    for id in ids {
                        fate.entry(id).or_default().push(attempt);
                    }
                    if !e.is_retryable() || tries == tries_allowed {
                        break;
                    }
                }
            }
        }
        for (id, attempts) in fate {
            let sent = if attempts.contains(&Attempt::Replied) {
                Sent::Acked
            } else if attempts.contains(&Attempt::Applied) {
                Sent::Committed
            } else if attempts.iter().all(|a| *a == Attempt::NotApplied) {
                Sent::NotCommitted
            } else {
                Sent::Unknown
            };
            self.ledger.set_sent(&id, sent);
        }
        Ok(())
    }

    /// Records a successful reply: each job's id, or (for a job re-sent under a fresh id) the
    /// id of the earlier call that the store kept under the unique key.
    fn take_reply(&mut self, op: Op, ids: &[JobId], got: &[JobId], fate: &mut BTreeMap<JobId, Vec<Attempt>>) {
        if got.len() != ids.len() {
            self.violation(format!(
                "step {}: {op} of {} jobs returned {} ids",
                self.step,
                ids.len(),
                got.len()
            ));
        }
        for (sent, holder) in ids.iter().zip(got) {
            if holder == sent {
                fate.entry(sent.clone()).or_default().push(Attempt::Replied);
            } else if self.ledger.job(holder).is_some()
                && self.ledger.first_id(holder) == self.ledger.first_id(sent)
            {
                fate.entry(holder.clone()).or_default().push(Attempt::Replied);
                fate.entry(sent.clone()).or_default().push(Attempt::NotApplied);
            } else {
                self.violation(format!(
                    "step {}: {op} of {} returned {}",
                    self.step,
                    self.ledger.name(sent),
                    self.ledger.name(holder)
                ));
            }
        }
    }
}
