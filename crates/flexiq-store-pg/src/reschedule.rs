//! [`Reschedule`] for [`PgStore`]: a new delay, promotion of delayed jobs, a new priority and
//! LIFO placement of jobs that have not started.
//!
//! Each operation is one transaction: the job's row is locked (`FOR UPDATE`, so a claim of it
//! either commits first and the plan sees it running, or skips the row while it is held), its
//! status and `run_at` are read, core's `plan_*` decides, and the row is written with what it
//! says. Claims read `priority` and `run_at` straight from the row through the claim index, so
//! there is no other structure to keep in step; a change that can make a job due sooner wakes
//! waiting workers, who would otherwise sleep until the job's old `run_at`.
//!
//! `promote_jobs` chooses the queue's delayed jobs soonest first (then by id) without locking,
//! then locks the chosen rows in id order, as acks lock them, re-checking that each is still
//! pending and delayed: a job claimed or moved meanwhile drops out of the batch.

use flexiq_core::store::{
    plan_change_delay, plan_change_priority, plan_promote, ChangeDelayRequest, ChangePriorityRequest,
    PromoteJobsRequest, PromoteRequest, Reschedule,
};
use flexiq_core::{Error, JobId, JobStatus, Result};

use crate::apply::Effects;
use crate::db::uid;
use crate::row::status;
use crate::store::PgStore;

/// Locks job `$2` of namespace `$1` and reads its status and `run_at`.
const LOCK: &str = "SELECT status, run_at FROM {S}.jobs WHERE namespace = $1 AND id = $2 FOR UPDATE";

/// Writes `run_at` `$2` (when not NULL) and priority `$3` (when not NULL) on job `$1`.
const WRITE: &str = "UPDATE {S}.jobs SET run_at = coalesce($2, run_at), priority = coalesce($3, priority) \
    WHERE id = $1";

/// Makes due at `$3` up to `$4` pending jobs of queue `$2` in namespace `$1` delayed past `$3`,
/// soonest first; returns how many.
const PROMOTE_JOBS: &str = "WITH pick AS ( \
      SELECT c.id FROM {S}.jobs c WHERE c.namespace = $1 AND c.queue = $2 AND c.status = 0 AND c.run_at > $3 \
      ORDER BY c.run_at, c.id LIMIT $4), \
    locked AS ( \
      SELECT j.id FROM {S}.jobs j WHERE j.id IN (SELECT id FROM pick) AND j.status = 0 AND j.run_at > $3 \
      ORDER BY j.id FOR UPDATE), \
    moved AS (UPDATE {S}.jobs j SET run_at = $3 FROM locked WHERE j.id = locked.id RETURNING 1) \
    SELECT count(*) FROM moved";

impl PgStore {
    /// Runs `plan` on job `id`'s status and `run_at` under its row lock and writes the
    /// `run_at` and priority it returns, in one transaction. `wake` announces new work after
    /// the commit.
    async fn reschedule_one(
        &self,
        what: &str,
        id: &JobId,
        wake: bool,
        plan: impl FnOnce(JobStatus, i64) -> Result<(Option<i64>, Option<i32>)> + std::marker::Send,
    ) -> Result<()> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let (lock, write) = (self.sql(LOCK), self.sql(WRITE));
        let c = self.conn().await?;
        c.tx(async {
            let r = c.opt(what, &lock, &[&ns, &u]).await?.ok_or_else(|| Error::JobNotFound(id.clone()))?;
            let (run_at, priority) = plan(status(r.get(0))?, r.get(1))?;
            if run_at.is_some() || priority.is_some() {
                c.exec(what, &write, &[&u, &run_at, &priority]).await?;
            }
            Ok(())
        })
        .await?;
        if wake {
            self.announce(&Effects { work: true, jobs: vec![] });
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Reschedule for PgStore {
    async fn change_delay(&self, req: ChangeDelayRequest) -> Result<()> {
        req.validate()?;
        self.reschedule_one("change delay", &req.job_id, true, |st, _| {
            plan_change_delay(&req, st).map(|run_at| (Some(run_at), None))
        })
        .await
    }

    async fn promote(&self, req: PromoteRequest) -> Result<()> {
        self.reschedule_one("promote job", &req.job_id, true, |st, run_at| {
            plan_promote(&req, st, run_at).map(|run_at| (Some(run_at), None))
        })
        .await
    }

    async fn promote_jobs(&self, req: PromoteJobsRequest) -> Result<u64> {
        req.validate()?;
        let ns: &str = &self.ns;
        let count = i64::from(req.count);
        let sql = self.sql(PROMOTE_JOBS);
        let c = self.conn().await?;
        // One statement: its own transaction.
        let n: i64 = c.rows("promote jobs", &sql, &[&ns, &req.queue, &req.now, &count]).await?[0].get(0);
        if n > 0 {
            self.announce(&Effects { work: true, jobs: vec![] });
        }
        Ok(n.max(0) as u64)
    }

    async fn change_priority(&self, req: ChangePriorityRequest) -> Result<()> {
        req.validate()?;
        self.reschedule_one("change priority", &req.job_id, false, |st, run_at| {
            plan_change_priority(&req, st, run_at).map(|run_at| (run_at, Some(req.priority)))
        })
        .await
    }
}
