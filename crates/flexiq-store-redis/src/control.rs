//! Queue control: pause (with its `paused` / `resumed` events), rate limits and concurrency
//! caps (small persisted keys of the namespace that `claim.lua` reads), the stall budget (a
//! field of the same per-queue hash, read by `release_stale`), task revocation (read by both
//! enqueue scripts) and the purges of a queue's unstarted jobs (cancelled, each reporting
//! `cancelled`) and of old completed ones (deleted, each reporting `removed`).

use flexiq_core::options::validate_name;
use flexiq_core::store::{
    PurgeCompletedRequest, PurgeQueueRequest, QueueConfig, QueueControl, SetConcurrencyRequest,
    SetMaxStalledRequest, SetRateLimitRequest,
};
use flexiq_core::{transition, Error, Event, JobStatus, RateLimit, Result};

use crate::conn::{n, s};
use crate::keys::member_id;
use crate::maintenance::ARCHIVE_BATCH;
use crate::row::{self, int};
use crate::store::RedisStore;
use crate::transact::transact;
use crate::wake::wall_ms;

/// The rate windows `claim.lua`'s token bucket supports (ms): a second, a minute, an hour.
const RATE_WINDOWS_MS: [u64; 3] = [1_000, 60_000, 3_600_000];

impl RedisStore {
    /// Records a queue as known (listed by stats even while it holds no job).
    async fn touch_queue(&self, queue: &str) -> Result<()> {
        self.ctx.conn.cmd("SADD", vec![s(self.ctx.keys.k("queues")), s(queue)]).await?;
        Ok(())
    }

    /// Sets one numeric control `field` of a queue's `qc:<queue>` hash, or clears it.
    async fn set_control(&self, queue: &str, field: &str, value: Option<u32>) -> Result<()> {
        self.touch_queue(queue).await?;
        let qc = self.ctx.keys.k(&format!("qc:{queue}"));
        match value {
            Some(v) => self.ctx.conn.cmd("HSET", vec![s(qc), s(field), n(i64::from(v))]).await?,
            None => self.ctx.conn.cmd("HDEL", vec![s(qc), s(field)]).await?,
        };
        Ok(())
    }
}

#[async_trait::async_trait]
impl QueueControl for RedisStore {
    // Pausing and resuming are `small.lua` operations so that each writes its event with the
    // change. The calls carry no clock: the events are stamped with this host's.
    async fn pause(&self, queue: &str) -> Result<()> {
        self.ctx.check()?;
        validate_name("queue name", queue)?;
        self.small_op(vec![s("pause"), s(queue), n(wall_ms())]).await?;
        Ok(())
    }

    async fn resume(&self, queue: &str) -> Result<()> {
        self.ctx.check()?;
        validate_name("queue name", queue)?;
        self.small_op(vec![s("resume"), s(queue), n(wall_ms())]).await?;
        self.changed();
        Ok(())
    }

    async fn paused_queues(&self) -> Result<Vec<String>> {
        self.ctx.check()?;
        let mut qs = row::strings(self.ctx.conn.cmd("SMEMBERS", vec![s(self.ctx.keys.k("paused"))]).await?);
        qs.sort();
        Ok(qs)
    }

    async fn set_rate_limit(&self, req: SetRateLimitRequest) -> Result<()> {
        self.ctx.check()?;
        req.validate()?;
        let SetRateLimitRequest { queue, limit } = req;
        if let Some(l) = limit {
            if !RATE_WINDOWS_MS.contains(&l.per_ms) {
                return Err(Error::invalid(format!(
                    "rate limit {l} for queue {queue} is not valid: redis counts per second, minute or hour"
                )));
            }
        }
        self.touch_queue(&queue).await?;
        let qc = self.ctx.keys.k(&format!("qc:{queue}"));
        let rb = self.ctx.keys.k(&format!("rb:{queue}"));
        let set = match limit {
            Some(l) => ("HSET", vec![s(qc), s("rc"), n(i64::from(l.count)), s("rp"), n(l.per_ms as i64)]),
            None => ("HDEL", vec![s(qc), s("rc"), s("rp")]),
        };
        self.ctx.conn.pipeline(vec![set, ("DEL", vec![s(rb)])]).await?;
        Ok(())
    }

    async fn set_concurrency(&self, req: SetConcurrencyRequest) -> Result<()> {
        self.ctx.check()?;
        req.validate()?;
        let SetConcurrencyRequest { queue, max } = req;
        self.set_control(&queue, "conc", max).await
    }

    async fn set_max_stalled(&self, req: SetMaxStalledRequest) -> Result<()> {
        self.ctx.check()?;
        req.validate()?;
        let SetMaxStalledRequest { queue, max } = req;
        self.set_control(&queue, "ms", max).await
    }

    async fn queue_config(&self, queue: &str) -> Result<QueueConfig> {
        self.ctx.check()?;
        let r = self
            .ctx
            .conn
            .pipeline(vec![
                ("SISMEMBER", vec![s(self.ctx.keys.k("paused")), s(queue)]),
                (
                    "HMGET",
                    vec![s(self.ctx.keys.k(&format!("qc:{queue}"))), s("conc"), s("rc"), s("rp"), s("ms")],
                ),
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
            max_stalled_count: f.get(3).and_then(int).map(|m| m as u32),
        })
    }

    async fn purge_queue(&self, req: PurgeQueueRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let PurgeQueueRequest { queue, now } = req;
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

    async fn purge_completed(&self, req: PurgeCompletedRequest) -> Result<u64> {
        self.ctx.check()?;
        let mut total = 0u64;
        loop {
            // The request carries no clock: the events of the purge are stamped with this host's.
            let args = vec![n(req.cutoff_ms), n(ARCHIVE_BATCH), n(wall_ms()), s("purge_completed")];
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
