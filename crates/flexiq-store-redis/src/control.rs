//! Dead letters and queue control (pause, rate limits, concurrency caps, purges, revocation).

use flexiq_core::cursor::page_from_rows;
use flexiq_core::options::validate_name;
use flexiq_core::store::{DeadLetters, QueueConfig, QueueControl};
use flexiq_core::{
    transition, validate_limit, Cursor, DeadJob, EnqueueOptions, Error, Event, JobId, JobStatus, NewJob,
    Page, RateLimit, Result,
};

use crate::conn::{n, s};
use crate::enqueue::{enqueue_args, run_enqueue};
use crate::keys::{member, member_id};
use crate::listing::Walk;
use crate::row::{self, int, text};
use crate::store::RedisStore;
use crate::transact::transact;

/// Jobs moved or deleted per script call, so no call blocks the server for long.
pub(crate) const ARCHIVE_BATCH: i64 = 500;

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

    async fn simple(&self, args: Vec<fred::types::Value>) -> Result<i64> {
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        Ok(int(&v).unwrap_or(0))
    }

    async fn touch_queue(&self, queue: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        self.ctx.conn.cmd("SADD", vec![s(self.ctx.keys.k("queues")), s(queue)]).await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl DeadLetters for RedisStore {
    async fn dead_letters(&self, task: Option<&str>, limit: u32, offset: u64) -> Result<Vec<DeadJob>> {
        self.ctx.check()?;
        let limit = validate_limit(i64::from(limit))?;
        self.dead_walk(task, None, offset, limit as usize).await
    }

    async fn dead_letters_after(&self, limit: u32, after: Option<&str>) -> Result<Page<DeadJob>> {
        self.ctx.check()?;
        let limit = validate_limit(i64::from(limit))? as usize;
        let before = match after {
            Some(c) => {
                let c = Cursor::decode(c, "dead_letters", 0)?;
                Some(member(c.sort_key, &c.id))
            }
            None => None,
        };
        let rows = self.dead_walk(None, before, 0, limit + 1).await?;
        Ok(page_from_rows(rows, limit, "dead_letters", 0, |d| (d.failed_at, d.id.clone())))
    }

    async fn retry_dead(&self, dead_id: &str, now: i64) -> Result<JobId> {
        self.ctx.check()?;
        let not_found = || Error::NotFound { what: "dead letter", id: dead_id.to_string() };
        let v = self.ctx.conn.cmd("HGET", vec![s(self.ctx.keys.k("dlq")), s(dead_id)]).await?;
        let dead: DeadJob = serde_json::from_str(&text(&v).ok_or_else(not_found)?).map_err(Error::backend)?;
        let opts = EnqueueOptions {
            queue: Some(dead.queue.clone()),
            metadata: dead.metadata.clone(),
            ..Default::default()
        };
        let job = NewJob::build(&dead.task_name, dead.payload.clone(), opts, now)?;
        let m = member(dead.failed_at, &dead.id);
        let args = enqueue_args(std::slice::from_ref(&job), None, now, Some((dead_id, &m, &dead.task_name)));
        let out = run_enqueue(&self.ctx, args).await?;
        out.into_iter().next().map(|e| e.id).ok_or_else(not_found)
    }

    async fn delete_dead(&self, dead_id: &str) -> Result<bool> {
        self.ctx.check()?;
        Ok(self.simple(vec![s("delete_dead"), s(dead_id)]).await? == 1)
    }

    async fn purge_dead(&self, cutoff: i64) -> Result<u64> {
        self.ctx.check()?;
        let v = self
            .ctx
            .conn
            .script(
                &self.ctx.conn.scripts.retention,
                &self.ctx.keys.base,
                vec![s("dead_letter"), n(cutoff), s("purge")],
            )
            .await?;
        Ok(int(&v).unwrap_or(0) as u64)
    }

    async fn purge_dead_by_task(&self, task: &str) -> Result<u64> {
        self.ctx.check()?;
        Ok(self.simple(vec![s("purge_dead_task"), s(task)]).await? as u64)
    }
}

#[async_trait::async_trait]
impl QueueControl for RedisStore {
    async fn pause(&self, queue: &str) -> Result<()> {
        self.ctx.check()?;
        self.touch_queue(queue).await?;
        self.ctx.conn.cmd("SADD", vec![s(self.ctx.keys.k("paused")), s(queue)]).await?;
        Ok(())
    }

    async fn resume(&self, queue: &str) -> Result<()> {
        self.ctx.check()?;
        self.touch_queue(queue).await?;
        self.ctx.conn.cmd("SREM", vec![s(self.ctx.keys.k("paused")), s(queue)]).await?;
        self.ctx
            .conn
            .cmd("ZADD", vec![s(self.ctx.keys.k("wake")), n(0), s(format!("resume:{queue}"))])
            .await?;
        self.changed();
        Ok(())
    }

    async fn paused_queues(&self) -> Result<Vec<String>> {
        self.ctx.check()?;
        let mut qs = row::strings(self.ctx.conn.cmd("SMEMBERS", vec![s(self.ctx.keys.k("paused"))]).await?);
        qs.sort();
        Ok(qs)
    }

    async fn set_rate_limit(&self, queue: &str, limit: Option<RateLimit>) -> Result<()> {
        self.ctx.check()?;
        self.touch_queue(queue).await?;
        let qc = self.ctx.keys.k(&format!("qc:{queue}"));
        let rb = self.ctx.keys.k(&format!("rb:{queue}"));
        let set = match limit {
            Some(l) => {
                if l.count == 0 || ![1_000, 60_000, 3_600_000].contains(&l.per_ms) {
                    return Err(Error::invalid(format!("rate limit {l} for queue {queue} is not valid")));
                }
                ("HSET", vec![s(qc), s("rc"), n(i64::from(l.count)), s("rp"), n(l.per_ms as i64)])
            }
            None => ("HDEL", vec![s(qc), s("rc"), s("rp")]),
        };
        self.ctx.conn.pipeline(vec![set, ("DEL", vec![s(rb)])]).await?;
        Ok(())
    }

    async fn set_concurrency(&self, queue: &str, max: Option<u32>) -> Result<()> {
        self.ctx.check()?;
        if max == Some(0) {
            return Err(Error::invalid(format!("concurrency cap for queue {queue} must be at least 1")));
        }
        self.touch_queue(queue).await?;
        let qc = self.ctx.keys.k(&format!("qc:{queue}"));
        match max {
            Some(m) => self.ctx.conn.cmd("HSET", vec![s(qc), s("conc"), n(i64::from(m))]).await?,
            None => self.ctx.conn.cmd("HDEL", vec![s(qc), s("conc")]).await?,
        };
        Ok(())
    }

    async fn queue_config(&self, queue: &str) -> Result<QueueConfig> {
        self.ctx.check()?;
        let r = self
            .ctx
            .conn
            .pipeline(vec![
                ("SISMEMBER", vec![s(self.ctx.keys.k("paused")), s(queue)]),
                ("HMGET", vec![s(self.ctx.keys.k(&format!("qc:{queue}"))), s("conc"), s("rc"), s("rp")]),
            ])
            .await?;
        let f = r[1].clone().into_array();
        let rate_limit = match (f.get(1).and_then(int), f.get(2).and_then(int)) {
            (Some(c), Some(p)) => Some(RateLimit { count: c as u32, per_ms: p as u64 }),
            _ => None,
        };
        Ok(QueueConfig {
            paused: int(&r[0]) == Some(1),
            rate_limit,
            concurrency: f.first().and_then(int).map(|c| c as u32),
        })
    }

    async fn purge_queue(&self, queue: &str, now: i64) -> Result<u64> {
        self.ctx.check()?;
        let key = self.ctx.keys.k(&format!("ix:q:{queue}"));
        let mut cancelled = 0u64;
        let mut start = 0i64;
        loop {
            let ms = row::strings(
                self.ctx.conn.cmd("ZRANGE", vec![s(key.clone()), n(start), n(start + 499)]).await?,
            );
            if ms.is_empty() {
                break;
            }
            start += ms.len() as i64;
            let ids: Vec<String> = ms.iter().map(|m| member_id(m).to_string()).collect();
            let ctx = &self.ctx;
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

    async fn revoke_task(&self, task: &str) -> Result<()> {
        self.ctx.check()?;
        validate_name("task name", task)?;
        self.ctx.conn.cmd("SADD", vec![s(self.ctx.keys.k("revoked")), s(task)]).await?;
        Ok(())
    }

    async fn unrevoke_task(&self, task: &str) -> Result<bool> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("SREM", vec![s(self.ctx.keys.k("revoked")), s(task)]).await?;
        Ok(int(&v) == Some(1))
    }

    async fn revoked_tasks(&self) -> Result<Vec<String>> {
        self.ctx.check()?;
        let mut t = row::strings(self.ctx.conn.cmd("SMEMBERS", vec![s(self.ctx.keys.k("revoked"))]).await?);
        t.sort();
        Ok(t)
    }

    async fn purge_completed(&self, cutoff: i64) -> Result<u64> {
        self.ctx.check()?;
        let mut total = 0u64;
        loop {
            let args = vec![n(cutoff), n(ARCHIVE_BATCH), n(0), s("purge_completed")];
            let v = self.ctx.conn.script(&self.ctx.conn.scripts.archive, &self.ctx.keys.base, args).await?;
            let done = int(&v).unwrap_or(0);
            total += done as u64;
            if done < ARCHIVE_BATCH {
                break;
            }
        }
        Ok(total)
    }
}
