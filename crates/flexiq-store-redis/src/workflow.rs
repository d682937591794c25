//! Workflow stages (`flexiq_core::store::Workflows`): the upsert by (run, stage), the fair
//! claim, and the run-wide cancel, delete and listing.
//!
//! Each run has an index of its own, kept by every path that writes or removes a job naming
//! it (`run_add` / `run_drop` in `prelude.lua`): `B:wfs:<run>` maps each stage to its one job,
//! the (run, stage) uniqueness that `enqueue.lua` checks before any write and the upsert
//! replaces through, and `B:wfr:<run>` holds the run's job ids scored by created_at, which
//! `jobs_of_run` reads in order (created_at, then id) and `cancel_run` walks. Jobs written
//! before the index existed are not backfilled: they stay out of it (and read `wv`, the
//! definition version, as `None`).
//!
//! The upsert, the fair claim, the deletion and the in-place retry of a dead stage (`dead.rs`)
//! are single calls of `workflow.lua`, so each is atomic and parallel fair claimers can never
//! take a group past its cap. The fair claim takes its jobs through `take.lua`, the claim step
//! `claim.lua` uses, so a job is indistinguishable from a claimed one (attempt, claim
//! sequence, lease, indexes, counters, rate bucket) and acks, heartbeats and fences work
//! unchanged. One call serves a batch of workers: it reads the running jobs' groups, each
//! queue's allowance and the cursor once, walks each ready set once into per-group candidate
//! lists, and then picks job after job as single claims in a row would, moving the running
//! counts, allowances and cursor in Lua locals. Its cost: there is no per-group index, so a
//! claim with a cap reads the group of every running job of the requested queues and walks
//! their whole ready sets in order (one `HMGET` per ready job) to find each group's best jobs;
//! without a cap it stops at each queue's first jobs the served pairs match, as many as the
//! batch can take from it. So a fair claim costs O(running + ready jobs of its queues) on the
//! server whatever the batch size (each pick after the walk is O(queues), skipping a group
//! that can give no more in amortized constant time), fine for the backlogs a workflow queue
//! holds but worth knowing for very deep ones; a batch of n costs that once where n single
//! claims cost it n times. The round-robin cursor is one key per namespace, `B:wfcur`.
//! Acks followed by a fair claim (`ack_and_claim_fair`) are the store's own ack (whose script
//! depends on the acks: plain completions, or the optimistic general path) and then the fair
//! claim's script, in that order: each is atomic, the claim sees what the acks freed, and the
//! outcomes are those of the two calls one after the other.
//! `cancel_run` goes through the state machine (`Event::Cancel`, dependents cascading) like
//! `cancel` and `purge_queue` do.

use flexiq_core::store::{
    AckClaimFairReply, AckClaimFairRequest, AckRequest, CancelRunRequest, ClaimFairRequest,
    DeleteStagesRequest, JobStore, UpsertStagesRequest, Workflows,
};
use flexiq_core::{transition, ClaimedJob, Event, Job, JobId, JobStatus, NewJob, Result};
use fred::types::Value;

use crate::conn::{b, n, s};
use crate::listing::hgetall_many;
use crate::row::{self, int};
use crate::store::RedisStore;
use crate::transact::transact;

/// Run members read and cancelled per step by `cancel_run`.
const CANCEL_PAGE: i64 = 500;

/// `workflow.lua`'s upsert arguments for `jobs` (validated: each names a run and a stage).
fn upsert_args(jobs: &[NewJob], now: i64) -> Vec<Value> {
    let mut a = Vec::with_capacity(3 + jobs.len() * 16);
    a.extend([s("upsert"), n(now), n(jobs.len() as i64)]);
    for j in jobs {
        a.extend([
            s(j.id.as_str()),
            s(j.queue.as_str()),
            s(j.task.as_str()),
            b(j.payload.clone()),
            n(i64::from(j.priority)),
            n(j.run_at),
            n(i64::from(j.max_retries)),
            n(j.backoff.base_ms as i64),
            n(j.backoff.max_ms as i64),
            s(j.workflow_run_id.as_deref().unwrap_or_default()),
            s(j.workflow_stage_id.as_deref().unwrap_or_default()),
        ]);
        let mut extra: Vec<(&str, String)> = Vec::new();
        if let Some(t) = j.timeout_ms {
            extra.push(("to", t.to_string()));
        }
        for (k, v) in [("m", &j.metadata), ("g", &j.group_key), ("wv", &j.workflow_version)] {
            if let Some(v) = v {
                extra.push((k, v.clone()));
            }
        }
        a.push(n(extra.len() as i64));
        for (k, v) in extra {
            a.extend([s(k), s(v)]);
        }
    }
    a
}

/// `workflow.lua`'s fair-claim arguments.
fn claim_args(req: &ClaimFairRequest) -> Vec<Value> {
    let mut a = Vec::with_capacity(6 + req.workers.len() + req.queues.len() + req.serves.len() * 3);
    a.extend([
        s("claim"),
        n(req.now),
        s(req.group_cap.map(|c| c.to_string()).unwrap_or_default()),
        n(req.workers.len() as i64),
    ]);
    a.extend(req.workers.iter().map(|w| s(w.as_str())));
    a.push(n(req.queues.len() as i64));
    a.extend(req.queues.iter().map(|q| s(q.as_str())));
    a.push(n(req.serves.len() as i64));
    for sv in &req.serves {
        a.push(s(sv.workflow_id.as_str()));
        match &sv.definition_version {
            Some(v) => a.extend([s("1"), s(v.as_str())]),
            None => a.extend([s("0"), s("")]),
        }
    }
    a
}

impl RedisStore {
    /// Runs one operation of `workflow.lua`.
    pub(crate) async fn workflow_op(&self, args: Vec<Value>) -> Result<Value> {
        self.ctx.conn.script(&self.ctx.conn.scripts.workflow, &self.ctx.keys.base, args).await
    }

    /// Ids of the run's jobs ranked `start` to `stop` (inclusive, -1 the last), oldest first.
    async fn run_members(&self, run_id: &str, start: i64, stop: i64) -> Result<Vec<String>> {
        let key = self.ctx.keys.k(&format!("wfr:{run_id}"));
        let v = self.ctx.conn.cmd("ZRANGE", vec![s(key), n(start), n(stop)]).await?;
        Ok(row::strings(v))
    }
}

#[async_trait::async_trait]
impl Workflows for RedisStore {
    async fn upsert_stages(&self, req: UpsertStagesRequest) -> Result<Vec<JobId>> {
        self.ctx.check()?;
        req.validate()?;
        if req.jobs.is_empty() {
            return Ok(Vec::new());
        }
        let reply = self.workflow_op(upsert_args(&req.jobs, req.now)).await?;
        let ids: Vec<JobId> = row::strings(reply).into_iter().map(JobId::from_trusted).collect();
        if ids.len() != req.jobs.len() {
            return Err(crate::error::shape("upserted stages"));
        }
        self.changed();
        Ok(ids)
    }

    async fn claim_fair(&self, req: ClaimFairRequest) -> Result<Vec<ClaimedJob>> {
        self.ctx.check()?;
        req.validate()?;
        let reply = self.workflow_op(claim_args(&req)).await?;
        let claimed = crate::jobs::claimed(&self.ctx.ns, reply)?;
        if claimed.len() > req.workers.len() {
            return Err(crate::error::shape("fair claim"));
        }
        if !claimed.is_empty() {
            self.ctx.waker.job_changed();
        }
        Ok(claimed)
    }

    async fn ack_and_claim_fair(&self, req: AckClaimFairRequest) -> Result<AckClaimFairReply> {
        self.ctx.check()?;
        req.validate()?;
        let AckClaimFairRequest { acks, claim } = req;
        let outcomes = self.ack(AckRequest { acks, now: claim.now }).await?;
        // The acks are written: a failed claim is reported beside their outcomes.
        let claimed = self.claim_fair(claim).await;
        Ok(AckClaimFairReply { outcomes, claimed })
    }

    async fn cancel_run(&self, req: CancelRunRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let CancelRunRequest { run_id, now } = req;
        let ctx = &self.ctx;
        let mut cancelled = 0u64;
        let mut start = 0i64;
        loop {
            let ids = self.run_members(&run_id, start, start + CANCEL_PAGE - 1).await?;
            if ids.is_empty() {
                break;
            }
            start += ids.len() as i64;
            cancelled += transact(ctx, &ids, now, |plan, rows| {
                let mut c = 0;
                for row in rows.iter().flatten() {
                    let live =
                        matches!(row.status, JobStatus::Pending | JobStatus::Waiting | JobStatus::Suspended);
                    if !live || plan.touches(&row.id) {
                        continue;
                    }
                    if let Ok(next) = transition(&row.state(), &Event::Cancel, now) {
                        plan.apply(ctx, row, &next, vec![]);
                        c += 1;
                    }
                }
                Ok(c)
            })
            .await?;
        }
        self.changed();
        Ok(cancelled)
    }

    async fn delete_stages(&self, req: DeleteStagesRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let DeleteStagesRequest { run_id, stage_ids } = req;
        if stage_ids.is_empty() {
            return Ok(0);
        }
        let mut args = vec![s("delete"), s(run_id)];
        args.extend(stage_ids.into_iter().map(s));
        let gone = int(&self.workflow_op(args).await?).unwrap_or(0).max(0) as u64;
        if gone > 0 {
            self.changed();
        }
        Ok(gone)
    }

    async fn jobs_of_run(&self, run_id: &str) -> Result<Vec<Job>> {
        self.ctx.check()?;
        flexiq_core::options::validate_name("workflow_run_id", run_id)?;
        let ids = self.run_members(run_id, 0, -1).await?;
        let keys = ids.iter().map(|id| self.ctx.keys.job(id)).collect();
        let mut out = Vec::with_capacity(ids.len());
        for (id, v) in ids.iter().zip(hgetall_many(&self.ctx.conn, keys).await?) {
            if let Some(job) = row::job_from_hash(&self.ctx.ns, id, v)? {
                out.push(job);
            }
        }
        Ok(out)
    }
}
