//! Delay and priority control (`Reschedule`).
//!
//! A single-job change reads the job's status and `run_at` with its row version, lets core's
//! `plan_*` helper decide, and commits through `commit.lua` only if the version still matches
//! ([`crate::transact`]), so a claim or ack in between makes it decide again. The commit moves
//! the job between the queue's ready and delayed sets as its new `run_at` and priority say and
//! leaves a wake-up token when it becomes due. A job whose delayed time moves earlier leaves
//! one too, so idle workers sleeping until the old time re-read the delayed set. Batch
//! promotion is one run of `reschedule.lua`: the soonest delayed jobs are chosen and moved in
//! the same script.

use flexiq_core::store::{
    plan_change_delay, plan_change_priority, plan_promote, ChangeDelayRequest, ChangePriorityRequest,
    PromoteJobsRequest, PromoteRequest, Reschedule,
};
use flexiq_core::{Error, JobId, Result};
use fred::types::Value;

use crate::conn::{n, s};
use crate::row::{int, StateRow};
use crate::store::RedisStore;
use crate::transact::transact;

/// What a plan writes on one job: a new `run_at`, a new priority, or both.
#[derive(Default)]
struct Move {
    run_at: Option<i64>,
    priority: Option<i32>,
}

impl RedisStore {
    /// Commits the [`Move`] `decide` plans for job `id` as read; `JobNotFound` when unknown.
    async fn move_job<F>(&self, id: &JobId, now: i64, decide: F) -> Result<()>
    where
        F: Fn(&StateRow) -> Result<Move> + Send + Sync,
    {
        let ctx = &self.ctx;
        let ids = vec![id.to_string()];
        let found = transact(ctx, &ids, now, |plan, rows| {
            let Some(row) = &rows[0] else { return Ok(false) };
            let mv = decide(row)?;
            let mut set: Vec<(&'static str, Value)> = Vec::new();
            if let Some(r) = mv.run_at {
                set.push(("r", n(r)));
                if r > now && r < row.run_at {
                    let token = &row.id[row.id.len().saturating_sub(3)..];
                    plan.raw(vec![s("ZADD"), s(ctx.keys.k("wake")), n(now), s(token)]);
                }
            }
            if let Some(p) = mv.priority {
                set.push(("pr", n(i64::from(p))));
            }
            plan.write(row, set, vec![]);
            Ok(true)
        })
        .await?;
        if !found {
            return Err(Error::JobNotFound(id.clone()));
        }
        self.changed();
        Ok(())
    }
}

#[async_trait::async_trait]
impl Reschedule for RedisStore {
    async fn change_delay(&self, req: ChangeDelayRequest) -> Result<()> {
        self.ctx.check()?;
        req.validate()?;
        self.move_job(&req.job_id, req.now, |row| {
            Ok(Move { run_at: Some(plan_change_delay(&req, row.status)?), priority: None })
        })
        .await
    }

    async fn promote(&self, req: PromoteRequest) -> Result<()> {
        self.ctx.check()?;
        self.move_job(&req.job_id, req.now, |row| {
            Ok(Move { run_at: Some(plan_promote(&req, row.status, row.run_at)?), priority: None })
        })
        .await
    }

    async fn promote_jobs(&self, req: PromoteJobsRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let PromoteJobsRequest { queue, count, now } = req;
        let args = vec![s(queue), n(i64::from(count)), n(now)];
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.reschedule, &self.ctx.keys.base, args).await?;
        let moved = int(&v).unwrap_or(0).max(0) as u64;
        if moved > 0 {
            self.changed();
        }
        Ok(moved)
    }

    async fn change_priority(&self, req: ChangePriorityRequest) -> Result<()> {
        self.ctx.check()?;
        req.validate()?;
        self.move_job(&req.job_id, req.now, |row| {
            let run_at = plan_change_priority(&req, row.status, row.run_at)?;
            Ok(Move { run_at, priority: Some(req.priority) })
        })
        .await
    }
}
