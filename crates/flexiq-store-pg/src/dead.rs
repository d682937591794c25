//! [`DeadLetters`] for [`PgStore`]: listing, retrying and purging dead-lettered jobs.

use flexiq_core::cursor::page_from_rows;
use flexiq_core::store::{
    DeadLetters, DeadLettersAfterRequest, DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest,
};
use flexiq_core::{DeadJob, Error, JobId, Page, Result};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::apply::Effects;
use crate::db::{i64_of, jid};
use crate::inspect::cursor_pos;
use crate::store::PgStore;

const COLS: &str = "id, original_job_id, queue, task_name, payload, error, retry_count, failed_at, metadata";

fn dead(r: &Row) -> DeadJob {
    DeadJob {
        id: r.get::<_, Uuid>(0).hyphenated().to_string(),
        original_job_id: r.get::<_, Uuid>(1).hyphenated().to_string(),
        queue: r.get(2),
        task_name: r.get(3),
        payload: r.get(4),
        error: r.get(5),
        retry_count: r.get::<_, i32>(6).max(0) as u32,
        failed_at: r.get(7),
        metadata: r.get(8),
    }
}

fn not_found(id: &str) -> Error {
    Error::NotFound { what: "dead letter", id: id.to_string() }
}

#[async_trait::async_trait]
impl DeadLetters for PgStore {
    async fn dead_letters(&self, req: DeadLettersRequest) -> Result<Vec<DeadJob>> {
        req.validate()?;
        let (task, limit, offset) = (&req.task, i64::from(req.limit), i64_of("offset", req.offset)?);
        let ns: &str = &self.ns;
        let sql = self.sql(&format!(
            "SELECT {COLS} FROM {{S}}.dead_letters WHERE namespace = $1 AND ($2::text IS NULL OR task_name = $2) \
             ORDER BY failed_at DESC, id DESC LIMIT $3 OFFSET $4"
        ));
        let c = self.conn().await?;
        Ok(c.rows("list dead letters", &sql, &[&ns, &task, &limit, &offset])
            .await?
            .iter()
            .map(dead)
            .collect())
    }

    async fn dead_letters_after(&self, req: DeadLettersAfterRequest) -> Result<Page<DeadJob>> {
        req.validate()?;
        let (limit, lim) = (req.limit, i64::from(req.limit));
        let (key, id) = match &req.after {
            Some(a) => {
                let (k, id) = cursor_pos(a, "dead_letters", 0)?;
                (Some(k), Some(id))
            }
            None => (None, None),
        };
        let ns: &str = &self.ns;
        let sql = self.sql(&format!(
            "SELECT {COLS} FROM {{S}}.dead_letters WHERE namespace = $1 \
             AND ($2::int8 IS NULL OR (failed_at, id) < ($2, $3::uuid)) \
             ORDER BY failed_at DESC, id DESC LIMIT $4"
        ));
        let c = self.conn().await?;
        let rows: Vec<DeadJob> = c
            .rows("list dead letters", &sql, &[&ns, &key, &id, &(lim + 1)])
            .await?
            .iter()
            .map(dead)
            .collect();
        Ok(page_from_rows(rows, limit as usize, "dead_letters", 0, |d| (d.failed_at, d.id.clone())))
    }

    async fn retry_dead(&self, req: RetryDeadRequest) -> Result<JobId> {
        let (dead_id, now) = (req.dead_id.as_str(), req.now);
        let Ok(did) = Uuid::parse_str(dead_id) else { return Err(not_found(dead_id)) };
        let ns: &str = &self.ns;
        let new_id = flexiq_core::id::uuid_at(now);
        let c = self.conn().await?;
        let revoked = self.sql(
            "SELECT d.task_name, EXISTS (SELECT 1 FROM {S}.revoked_tasks r WHERE r.namespace = $1 AND r.task = d.task_name) \
             FROM {S}.dead_letters d WHERE d.namespace = $1 AND d.id = $2 FOR UPDATE",
        );
        let take = self.sql(
            "WITH d AS (DELETE FROM {S}.dead_letters WHERE namespace = $1 AND id = $2 RETURNING *), \
             q AS (INSERT INTO {S}.queues (namespace, queue) SELECT $1, queue FROM d ON CONFLICT DO NOTHING) \
             INSERT INTO {S}.jobs (id, namespace, queue, task, payload, priority, status, max_retries, backoff_base_ms, \
               backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key) \
             SELECT $3, $1, queue, task_name, payload, priority, 0, max_retries, backoff_base_ms, backoff_max_ms, $4, $4, \
               timeout_ms, metadata, group_key FROM d RETURNING id",
        );
        c.tx(async {
            let Some(r) = c.opt("retry dead letter", &revoked, &[&ns, &did]).await? else {
                return Err(not_found(dead_id));
            };
            if r.get::<_, bool>(1) {
                return Err(Error::TaskRevoked { task: r.get(0) });
            }
            c.exec("retry dead letter", &take, &[&ns, &did, &new_id, &now]).await?;
            Ok(())
        })
        .await?;
        self.announce(&Effects { work: true, jobs: vec![] });
        Ok(jid(new_id))
    }

    async fn delete_dead(&self, dead_id: &str) -> Result<bool> {
        let Ok(did) = Uuid::parse_str(dead_id) else { return Ok(false) };
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.dead_letters WHERE namespace = $1 AND id = $2");
        let c = self.conn().await?;
        Ok(c.exec("delete dead letter", &sql, &[&ns, &did]).await? > 0)
    }

    async fn purge_dead(&self, req: PurgeDeadRequest) -> Result<u64> {
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.dead_letters WHERE namespace = $1 AND failed_at < $2");
        let c = self.conn().await?;
        c.exec("purge dead letters", &sql, &[&ns, &req.cutoff_ms]).await
    }

    async fn purge_dead_by_task(&self, task: &str) -> Result<u64> {
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.dead_letters WHERE namespace = $1 AND task_name = $2");
        let c = self.conn().await?;
        c.exec("purge dead letters", &sql, &[&ns, &task]).await
    }
}
