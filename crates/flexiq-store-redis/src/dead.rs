//! The dead-letter queue: entries are JSON rows in one hash (`B:dlq`), listed through a
//! newest-first index over all entries (`B:dlix`) and one per task (`B:dlt:<task>`); a retry
//! re-enqueues the entry's job and removes the entry in the same script.

use flexiq_core::cursor::page_from_rows;
use flexiq_core::store::{
    DeadLetters, DeadLettersAfterRequest, DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest,
};
use flexiq_core::{Cursor, DeadJob, EnqueueOptions, Error, JobId, NewJob, Page, Result};

use crate::conn::{n, s};
use crate::enqueue::{enqueue_args, run_enqueue};
use crate::keys::{member, member_id};
use crate::listing::Walk;
use crate::row::{int, text};
use crate::store::RedisStore;

impl RedisStore {
    async fn dead_walk(
        &self,
        task: Option<&str>,
        before: Option<String>,
        offset: u64,
        want: usize,
    ) -> Result<Vec<DeadJob>> {
        let key = match task {
            Some(t) => self.ctx.keys.k(&format!("dlt:{t}")),
            None => self.ctx.keys.k("dlix"),
        };
        let mut walk = Walk::exact(&self.ctx.conn, key, before, offset, want);
        let mut out = Vec::new();
        while let Some(ms) = walk.next().await? {
            if ms.is_empty() {
                continue;
            }
            let mut args = vec![s(self.ctx.keys.k("dlq"))];
            args.extend(ms.iter().map(|m| s(member_id(m))));
            for v in self.ctx.conn.cmd("HMGET", args).await?.into_array() {
                if let Some(j) = text(&v) {
                    out.push(serde_json::from_str::<DeadJob>(&j).map_err(Error::backend)?);
                }
            }
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl DeadLetters for RedisStore {
    async fn dead_letters(&self, req: DeadLettersRequest) -> Result<Vec<DeadJob>> {
        self.ctx.check()?;
        req.validate()?;
        self.dead_walk(req.task.as_deref(), None, req.offset, req.limit as usize).await
    }

    async fn dead_letters_after(&self, req: DeadLettersAfterRequest) -> Result<Page<DeadJob>> {
        self.ctx.check()?;
        req.validate()?;
        let limit = req.limit as usize;
        let before = match &req.after {
            Some(c) => {
                let c = Cursor::decode(c, "dead_letters", 0)?;
                Some(member(c.sort_key, &c.id))
            }
            None => None,
        };
        let rows = self.dead_walk(None, before, 0, limit + 1).await?;
        Ok(page_from_rows(rows, limit, "dead_letters", 0, |d| (d.failed_at, d.id.clone())))
    }

    async fn retry_dead(&self, req: RetryDeadRequest) -> Result<JobId> {
        self.ctx.check()?;
        let RetryDeadRequest { dead_id, now } = req;
        let not_found = || Error::NotFound { what: "dead letter", id: dead_id.clone() };
        let v = self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.k("dlq")), s(dead_id.as_str())]).await?;
        let dead: DeadJob = serde_json::from_str(&text(&v).ok_or_else(not_found)?).map_err(Error::backend)?;
        let opts = EnqueueOptions {
            queue: Some(dead.queue.clone()),
            metadata: dead.metadata.clone(),
            ..Default::default()
        };
        let job = NewJob::build(&dead.task_name, dead.payload.clone(), opts, now)?;
        let m = member(dead.failed_at, &dead.id);
        let args = enqueue_args(std::slice::from_ref(&job), None, now, Some((&dead_id, &m, &dead.task_name)));
        let out = run_enqueue(&self.ctx, args).await?;
        out.into_iter().next().map(|e| e.id).ok_or_else(not_found)
    }

    async fn delete_dead(&self, dead_id: &str) -> Result<bool> {
        self.ctx.check()?;
        Ok(self.small_op(vec![s("delete_dead"), s(dead_id)]).await? == 1)
    }

    async fn purge_dead(&self, req: PurgeDeadRequest) -> Result<u64> {
        self.ctx.check()?;
        let v = self
            .ctx
            .conn
            .script(
                &self.ctx.conn.scripts.retention,
                &self.ctx.keys.base,
                vec![s("dead_letter"), n(req.cutoff_ms), s("purge")],
            )
            .await?;
        Ok(int(&v).unwrap_or(0) as u64)
    }

    async fn purge_dead_by_task(&self, task: &str) -> Result<u64> {
        self.ctx.check()?;
        Ok(self.small_op(vec![s("purge_dead_task"), s(task)]).await? as u64)
    }
}
