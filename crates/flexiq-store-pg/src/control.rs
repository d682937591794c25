//! [`QueueControl`] for [`PgStore`]: pause, limits, the stall budget, purges and revocation,
//! persisted in the `queues` and `revoked_tasks` tables so every worker process sees them.
//!
//! A revoked task refuses new enqueues (and dead-letter retries and replays) with
//! `TaskRevoked`; its jobs already pending are not affected and are claimed as usual.

use flexiq_core::options::validate_name;
use flexiq_core::store::{
    PurgeCompletedRequest, PurgeQueueRequest, QueueConfig, QueueControl, SetConcurrencyRequest,
    SetMaxStalledRequest, SetRateLimitRequest,
};
use flexiq_core::transition::{transition, Event};
use flexiq_core::{Error, RateLimit, Result};

use crate::apply::{Change, Effects};
use crate::event_writes::{queue_event_sql, removed_sql, CLOCK_MS};
use crate::row::{loaded, state_cols};
use crate::store::PgStore;

impl PgStore {
    /// Registers a queue if new and sets `assignments` (SQL using `$3` for `value`); the
    /// caller has checked the queue name.
    async fn set_queue(
        &self,
        queue: &str,
        assignments: &str,
        value: &(dyn tokio_postgres::types::ToSql + Sync),
    ) -> Result<()> {
        let ns: &str = &self.ns;
        let register =
            self.sql("INSERT INTO {S}.queues (namespace, queue) VALUES ($1, $2) ON CONFLICT DO NOTHING");
        let update =
            self.sql(&format!("UPDATE {{S}}.queues SET {assignments} WHERE namespace = $1 AND queue = $2"));
        let c = self.conn().await?;
        c.tx(async {
            c.exec("queue control", &register, &[&ns, &queue]).await?;
            c.exec("queue control", &update, &[&ns, &queue, value]).await?;
            Ok(())
        })
        .await?;
        self.announce(&Effects { work: true, jobs: vec![] });
        Ok(())
    }

    /// Pauses or resumes a queue (registering it if new); a change writes its `paused` or
    /// `resumed` event in the same statement, and setting what is already set writes none.
    async fn set_paused(&self, queue: &str, paused: bool) -> Result<()> {
        let ns: &str = &self.ns;
        let register =
            self.sql("INSERT INTO {S}.queues (namespace, queue) VALUES ($1, $2) ON CONFLICT DO NOTHING");
        let kind = if paused { "paused" } else { "resumed" };
        let update = self.sql(&format!(
            "WITH u AS (UPDATE {{S}}.queues SET paused = $3 WHERE namespace = $1 AND queue = $2 AND paused <> $3 \
             RETURNING queue) {}",
            queue_event_sql(kind, "$1", "u", CLOCK_MS, "'{}'::jsonb")
        ));
        let c = self.conn().await?;
        c.tx(async {
            c.exec("queue control", &register, &[&ns, &queue]).await?;
            c.exec("queue control", &update, &[&ns, &queue, &paused]).await?;
            Ok(())
        })
        .await?;
        self.announce(&Effects { work: true, jobs: vec![] });
        Ok(())
    }
}

#[async_trait::async_trait]
impl QueueControl for PgStore {
    async fn pause(&self, queue: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        self.set_paused(queue, true).await
    }

    async fn resume(&self, queue: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        self.set_paused(queue, false).await
    }

    async fn paused_queues(&self) -> Result<Vec<String>> {
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT queue FROM {S}.queues WHERE namespace = $1 AND paused ORDER BY queue");
        let c = self.conn().await?;
        Ok(c.rows("paused queues", &sql, &[&ns]).await?.iter().map(|r| r.get(0)).collect())
    }

    async fn set_rate_limit(&self, req: SetRateLimitRequest) -> Result<()> {
        req.validate()?;
        let queue = &req.queue;
        let too_large =
            |l: RateLimit| Error::invalid(format!("rate limit {l} of queue {queue} is too large"));
        let rate: Option<(i32, i64)> = match req.limit {
            Some(l) => Some((
                i32::try_from(l.count).map_err(|_| too_large(l))?,
                i64::try_from(l.per_ms).map_err(|_| too_large(l))?,
            )),
            None => None,
        };
        let text = rate.map(|(c, p)| format!("{c}/{p}"));
        self.set_queue(
            queue,
            "rate_count = split_part($3::text, '/', 1)::int, rate_per_ms = split_part($3::text, '/', 2)::bigint, \
             tokens = NULL, tokens_at = NULL",
            &text,
        )
        .await
    }

    async fn set_concurrency(&self, req: SetConcurrencyRequest) -> Result<()> {
        req.validate()?;
        let queue = &req.queue;
        let v: Option<i32> = req
            .max
            .map(|m| {
                i32::try_from(m)
                    .map_err(|_| Error::invalid(format!("concurrency cap {m} of queue {queue} is too large")))
            })
            .transpose()?;
        self.set_queue(queue, "concurrency = $3", &v).await
    }

    async fn set_max_stalled(&self, req: SetMaxStalledRequest) -> Result<()> {
        req.validate()?;
        let queue = &req.queue;
        let v: Option<i32> = req
            .max
            .map(|m| {
                i32::try_from(m).map_err(|_| {
                    Error::invalid(format!("max_stalled_count {m} of queue {queue} is too large"))
                })
            })
            .transpose()?;
        self.set_queue(queue, "max_stalled_count = $3", &v).await
    }

    async fn queue_config(&self, queue: &str) -> Result<QueueConfig> {
        validate_name("queue name", queue)?;
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT paused, rate_count, rate_per_ms, concurrency, max_stalled_count FROM {S}.queues WHERE namespace = $1 AND queue = $2");
        let c = self.conn().await?;
        let Some(r) = c.opt("queue config", &sql, &[&ns, &queue]).await? else {
            return Ok(QueueConfig::default());
        };
        let rate_limit = match (r.get::<_, Option<i32>>(1), r.get::<_, Option<i64>>(2)) {
            (Some(count), Some(per)) => {
                Some(RateLimit { count: count.max(0) as u32, per_ms: per.max(0) as u64 })
            }
            _ => None,
        };
        Ok(QueueConfig {
            paused: r.get(0),
            rate_limit,
            concurrency: r.get::<_, Option<i32>>(3).map(|v| v.max(0) as u32),
            max_stalled_count: r.get::<_, Option<i32>>(4).map(|v| v.max(0) as u32),
        })
    }

    async fn purge_queue(&self, req: PurgeQueueRequest) -> Result<u64> {
        req.validate()?;
        let (queue, now) = (&req.queue, req.now);
        let ns: &str = &self.ns;
        let sql = self.sql(&format!(
            "SELECT {} FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = $2 AND j.status IN (0, 6, 7) ORDER BY j.id FOR UPDATE",
            state_cols("j")
        ));
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let n = c
            .tx(async {
                let rows = c.rows("purge queue", &sql, &[&ns, &queue]).await?;
                let mut changes = Vec::with_capacity(rows.len());
                for r in &rows {
                    let l = loaded(r, 0)?;
                    if let Ok(next) = transition(&l.state, &Event::Cancel, now) {
                        changes.push(Change::new(l, next));
                    }
                }
                self.write_and_commit(&c, &changes, now, false, &mut fx).await?;
                Ok(changes.len() as u64)
            })
            .await?;
        self.announce(&fx);
        Ok(n)
    }

    async fn revoke_task(&self, task: &str) -> Result<()> {
        validate_name("task name", task)?;
        let ns: &str = &self.ns;
        let sql = self
            .sql("INSERT INTO {S}.revoked_tasks (namespace, task) VALUES ($1, $2) ON CONFLICT DO NOTHING");
        let c = self.conn().await?;
        c.exec("revoke task", &sql, &[&ns, &task]).await?;
        Ok(())
    }

    async fn unrevoke_task(&self, task: &str) -> Result<bool> {
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.revoked_tasks WHERE namespace = $1 AND task = $2");
        let c = self.conn().await?;
        // Nothing becomes claimable: a revocation never held back pending jobs.
        let n = c.exec("unrevoke task", &sql, &[&ns, &task]).await?;
        Ok(n > 0)
    }

    async fn revoked_tasks(&self) -> Result<Vec<String>> {
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT task FROM {S}.revoked_tasks WHERE namespace = $1 ORDER BY task");
        let c = self.conn().await?;
        Ok(c.rows("revoked tasks", &sql, &[&ns]).await?.iter().map(|r| r.get(0)).collect())
    }

    async fn purge_completed(&self, req: PurgeCompletedRequest) -> Result<u64> {
        let ns: &str = &self.ns;
        // A purged job's dedup keys go with it, and its `removed` event is written.
        let sql = self.sql(&format!(
            "WITH gone AS (DELETE FROM {{S}}.jobs WHERE namespace = $1 AND status = 2 AND finished_at < $2 \
               RETURNING id, queue, task, attempt), \
             k AS (DELETE FROM {{S}}.dedup_keys d USING gone WHERE d.namespace = $1 AND d.job_id = gone.id), \
             ev AS ({}) \
             SELECT count(*) FROM gone",
            removed_sql("$1", "gone", CLOCK_MS, "true")
        ));
        let n = {
            let c = self.conn().await?;
            c.rows("purge completed jobs", &sql, &[&ns, &req.cutoff_ms]).await?[0].get::<_, i64>(0).max(0)
                as u64
        };
        if n > 0 {
            self.shared.hub.publish_events(ns);
        }
        Ok(n)
    }
}
