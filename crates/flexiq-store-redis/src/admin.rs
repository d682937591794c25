//! Queue administration (`Admin`): every operation is one run of `admin.lua` over the
//! namespace's keys, so no half-removed job or half-retried page is ever visible.
//!
//! A removal takes the job hash with all it owns (the prelude's `drop_job`, shared with the
//! workflow stage deletion) and its dead-letter entry, and settles the jobs that named it as a
//! dependency in the same script. Obliterate is the exception in shape, not in atomicity: each
//! call removes one page of live jobs in one script, and the call that leaves none then walks
//! the archive and the dead-letter index in bounded steps (archived copies and entries carry
//! their queue only inside each record, so no index finds them by queue), each step its own
//! script. `remove_orphans` lives in [`crate::orphans`].

use flexiq_core::store::{
    Admin, CleanRequest, DrainRequest, ObliterateRequest, RateLimitTtlRequest, RemoveJobRequest, Removed,
    RetryJobsRequest,
};
use flexiq_core::{Error, JobId, Result};
use fred::types::Value;

use crate::conn::{n, s};
use crate::error::shape;
use crate::row::{self, int, text};
use crate::store::RedisStore;

/// What an obliterate sweeps once a queue has no live job left: the archive's copies
/// (`B:aix`) and the dead-letter entries (`B:dlix`).
const SWEPT: [&str; 2] = ["archived", "dead"];

fn flag(on: bool) -> Value {
    s(if on { "1" } else { "0" })
}

fn count(v: &Value) -> u64 {
    int(v).unwrap_or(0).max(0) as u64
}

impl RedisStore {
    /// Runs one operation of `admin.lua`.
    pub(crate) async fn admin_op(&self, args: Vec<Value>) -> Result<Value> {
        self.ctx.conn.script(&self.ctx.conn.scripts.admin, &self.ctx.keys.base, args).await
    }

    /// Removes queue `queue`'s archived copies and dead-letter entries, a step at a time.
    async fn sweep_queue(&self, queue: &str, now: i64) -> Result<()> {
        for kind in SWEPT {
            let mut after = String::new();
            loop {
                let args = vec![s("sweep"), s(queue), s(kind), s(after.as_str()), n(now)];
                let reply = self.admin_op(args).await?.into_array();
                after = reply.get(1).and_then(text).ok_or_else(|| shape("obliterate sweep"))?;
                if after.is_empty() {
                    break;
                }
            }
        }
        Ok(())
    }
}

fn ids(v: Value) -> Vec<JobId> {
    row::strings(v).into_iter().map(JobId::from_trusted).collect()
}

#[async_trait::async_trait]
impl Admin for RedisStore {
    async fn clean(&self, req: CleanRequest) -> Result<Vec<JobId>> {
        self.ctx.check()?;
        req.validate()?;
        let CleanRequest { queue, status, grace_ms, limit, now } = req;
        let cutoff = now.saturating_sub(i64::try_from(grace_ms).unwrap_or(i64::MAX));
        let args =
            vec![s("clean"), s(queue), n(i64::from(status.code())), n(cutoff), n(i64::from(limit)), n(now)];
        let removed = ids(self.admin_op(args).await?);
        if !removed.is_empty() {
            self.changed();
        }
        Ok(removed)
    }

    async fn drain(&self, req: DrainRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let DrainRequest { queue, include_delayed, now } = req;
        let gone = count(&self.admin_op(vec![s("drain"), s(queue), flag(include_delayed), n(now)]).await?);
        if gone > 0 {
            self.changed();
        }
        Ok(gone)
    }

    async fn obliterate(&self, req: ObliterateRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let ObliterateRequest { queue, force, count: page, now } = req;
        let args = vec![s("obliterate"), s(queue.as_str()), flag(force), n(i64::from(page)), n(now)];
        let left = count(&self.admin_op(args).await?);
        if left == 0 {
            self.sweep_queue(&queue, now).await?;
        }
        self.changed();
        Ok(left)
    }

    async fn remove_orphans(&self) -> Result<u64> {
        self.ctx.check()?;
        crate::orphans::remove(self).await
    }

    async fn retry_jobs(&self, req: RetryJobsRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let RetryJobsRequest { queue, status, count: page, now } = req;
        let args = vec![s("retry"), s(queue), n(i64::from(status.code())), n(i64::from(page)), n(now)];
        let moved = count(&self.admin_op(args).await?);
        if moved > 0 {
            self.changed();
        }
        Ok(moved)
    }

    async fn remove_job(&self, req: RemoveJobRequest) -> Result<Removed> {
        self.ctx.check()?;
        let RemoveJobRequest { job_id, remove_children, now } = req;
        let args = vec![s("remove"), s(job_id.as_str()), flag(remove_children), n(now)];
        let jobs = ids(self.admin_op(args).await?);
        if jobs.is_empty() {
            return Err(Error::JobNotFound(job_id));
        }
        self.changed();
        Ok(Removed { jobs })
    }

    async fn rate_limit_ttl(&self, req: RateLimitTtlRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let RateLimitTtlRequest { queue, now } = req;
        Ok(count(&self.admin_op(vec![s("ttl"), s(queue), n(now)]).await?))
    }
}
