//! The end state every seed must reach, read from the store after the drain.
//!
//! - Every job a call acknowledged, or committed with its reply lost, is listed; no job whose
//!   every call failed before the store is; nothing is listed twice or that nobody sent, and a
//!   job re-sent under a fresh id and the same unique key is listed once.
//! - Every listed job is terminal, and the events stream (written in the same transaction as
//!   each status change) reports exactly one terminal status for it, its final one, with no
//!   `active` after a `completed`.
//! - A completed job has exactly one success metric row, from the claim whose completion the
//!   ledger saw commit, and no execution of a later claim; other jobs have none.
//! - The status counts add up to the listing, per namespace and summed over queues.

use std::collections::BTreeMap;

use flexiq_core::events::MAX_EVENTS_PER_READ;
use flexiq_core::store::{GetMetricsRequest, ListJobsRequest, ReadEventsRequest};
use flexiq_core::{EventKind, Job, JobFilter, JobId, JobStatus, QueueEvent, Result, Stats, MAX_PAGE};

use super::ledger::Sent;
use super::world::World;

impl World {
    pub(crate) async fn check_end(&mut self) -> Result<()> {
        let truth = self.truth();
        let req = ListJobsRequest { filter: JobFilter::default(), limit: MAX_PAGE, offset: 0 };
        let listed = truth.list_jobs(req).await?;
        let mut by_id: BTreeMap<JobId, Job> = BTreeMap::new();
        let mut counted = Stats::default();
        for j in listed {
            counted.add(j.status, 1);
            if by_id.contains_key(&j.id) {
                self.violation(format!("the listing holds {} twice", self.ledger.name(&j.id)));
            }
            by_id.insert(j.id.clone(), j);
        }
        self.check_presence(&by_id);
        self.check_counts(counted).await?;
        self.check_events(&by_id).await?;
        self.check_completions(&by_id).await?;
        Ok(())
    }

    fn check_presence(&mut self, by_id: &BTreeMap<JobId, Job>) {
        let mut found = Vec::new();
        for (id, j) in by_id {
            if self.ledger.job(id).is_none() {
                found.push(format!("the listing holds {}, which no caller sent", self.ledger.name(id)));
            }
            if !j.status.is_terminal() {
                found.push(format!("{} is still {} after the drain", self.ledger.name(id), j.status));
            }
        }
        let mut copies: BTreeMap<JobId, Vec<String>> = BTreeMap::new();
        let mut absorbed: BTreeMap<JobId, bool> = BTreeMap::new();
        for id in by_id.keys() {
            let Some(info) = self.ledger.job(id) else { continue };
            let first = self.ledger.first_id(id);
            *absorbed.entry(first.clone()).or_default() |= info.deduped;
            copies.entry(first).or_default().push(self.ledger.name(id));
        }
        for (_, names) in copies.iter().filter(|(first, n)| n.len() > 1 && absorbed[*first]) {
            found.push(format!(
                "one job re-sent under its unique key is listed {} times: {}",
                names.len(),
                names.join(", ")
            ));
        }
        for (id, info) in self.ledger.jobs() {
            let listed = by_id.contains_key(id);
            // A committed call of a re-sent job may have been absorbed by the earlier id's
            // unique key: the job must be there under one of its ids.
            let group_listed = copies.contains_key(&self.ledger.first_id(id));
            match info.sent {
                Sent::Acked if !listed => found.push(format!(
                    "{} is missing from the listing though its enqueue was acknowledged",
                    self.ledger.name(id)
                )),
                Sent::Committed if !group_listed => found.push(format!(
                    "{} is missing from the listing though its enqueue committed (reply lost)",
                    self.ledger.name(id)
                )),
                Sent::NotCommitted if listed => found.push(format!(
                    "{} is listed though every enqueue call of it failed before reaching the store",
                    self.ledger.name(id)
                )),
                _ => {}
            }
        }
        for v in found {
            self.violation(v);
        }
    }

    async fn check_counts(&mut self, counted: Stats) -> Result<()> {
        let truth = self.truth();
        let stats = truth.stats(None).await?;
        if stats != counted {
            self.violation(format!("stats {stats:?} do not add up to the listing's {counted:?}"));
        }
        let mut summed = Stats::default();
        for s in truth.stats_by_queue().await?.values() {
            for st in JobStatus::ALL {
                summed.add(st, s.get(st));
            }
        }
        if summed != stats {
            self.violation(format!("stats by queue sum to {summed:?}, not the namespace's {stats:?}"));
        }
        Ok(())
    }

    async fn check_events(&mut self, by_id: &BTreeMap<JobId, Job>) -> Result<()> {
        let truth = self.truth();
        let mut per_job: BTreeMap<String, Vec<QueueEvent>> = BTreeMap::new();
        let mut after = None;
        loop {
            let req = ReadEventsRequest { after: after.clone(), block_ms: 0, limit: MAX_EVENTS_PER_READ };
            let page = truth.read_events(req).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.id.clone());
            for e in page {
                if let Some(job) = e.job_id.clone() {
                    per_job.entry(job).or_default().push(e);
                }
            }
        }
        let mut found = Vec::new();
        for (id, j) in by_id {
            let events = per_job.remove(id.as_str()).unwrap_or_default();
            let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
            let terminal: Vec<JobStatus> = events.iter().filter_map(terminal_event).collect();
            if terminal != [j.status] {
                found.push(format!(
                    "{} ended {} with terminal events {terminal:?} (all events: {kinds:?})",
                    self.ledger.name(id),
                    j.status
                ));
            }
            if let Some(done) = kinds.iter().position(|k| *k == EventKind::Completed) {
                if kinds[done..].contains(&EventKind::Active) {
                    found.push(format!(
                        "{} went active again after its completed event (events: {kinds:?})",
                        self.ledger.name(id)
                    ));
                }
            }
        }
        for v in found {
            self.violation(v);
        }
        Ok(())
    }

    async fn check_completions(&mut self, by_id: &BTreeMap<JobId, Job>) -> Result<()> {
        let truth = self.truth();
        let rows = truth.get_metrics(GetMetricsRequest { since_ms: 0, task: None }).await?;
        let mut successes: BTreeMap<String, u32> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.success) {
            *successes.entry(r.job_id.clone()).or_default() += 1;
        }
        let mut last_exec: BTreeMap<&JobId, (u64, u64, &str)> = BTreeMap::new();
        for e in self.ledger.executions() {
            let slot = last_exec.entry(&e.job).or_insert((0, 0, ""));
            if e.fence.claim_seq >= slot.0 {
                *slot = (e.fence.claim_seq, e.step, &e.worker);
            }
        }
        let mut found = Vec::new();
        for (id, j) in by_id {
            let name = self.ledger.name(id);
            let rows = successes.get(id.as_str()).copied().unwrap_or(0);
            let want = u32::from(j.status == JobStatus::Completed);
            if rows != want {
                found.push(format!("{name} ended {} with {rows} success metric rows", j.status));
            }
            if j.status != JobStatus::Completed {
                continue;
            }
            let Some(c) = self.ledger.job(id).and_then(|i| i.completed) else {
                found.push(format!("{name} is completed, but no ack the callers sent completed it"));
                continue;
            };
            if c.claim_seq != j.claim_seq {
                found.push(format!(
                    "{name} is completed under claim_seq {}, but the callers' completion was claim_seq {}",
                    j.claim_seq, c.claim_seq
                ));
            }
            if let Some((seq, step, worker)) = last_exec.get(id).filter(|(seq, ..)| *seq > c.claim_seq) {
                found.push(format!(
                    "{name} ran again on {worker} at step {step} under claim_seq {seq} after its completion by claim_seq {} at step {}",
                    c.claim_seq, c.step
                ));
            }
        }
        for v in found {
            self.violation(v);
        }
        Ok(())
    }
}

/// The final status an event reports, if it reports one: a terminal status event, or the
/// `enqueued` event of a job inserted already terminal (one whose dependency had failed: the
/// PostgreSQL and Redis stores insert it cancelled and report that in the event's `status`,
/// where SQLite inserts it waiting and cancels it, writing `enqueued` then `cancelled`).
fn terminal_event(e: &QueueEvent) -> Option<JobStatus> {
    match e.kind {
        EventKind::Completed => Some(JobStatus::Completed),
        EventKind::Failed => Some(JobStatus::Failed),
        EventKind::Dead => Some(JobStatus::Dead),
        EventKind::Cancelled => Some(JobStatus::Cancelled),
        EventKind::Enqueued => e
            .data
            .get("status")
            .and_then(|s| s.as_str())
            .and_then(|s| s.parse::<JobStatus>().ok())
            .filter(|s| s.is_terminal()),
        _ => None,
    }
}
