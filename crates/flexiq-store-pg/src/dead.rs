//! [`DeadLetters`] for [`PgStore`]: listing, retrying and purging dead-lettered jobs.
//!
//! An entry keeps the workflow fields of the job that died (migration 7). Retrying a plain
//! job enqueues it again as a new job; retrying a workflow stage must keep its (run, stage)
//! pair to one row, so the insert takes the same conflict clause as `upsert_stages`
//! (`REPLACE_STAGE`): the stage's own row starts over in place, keeping its id and claim
//! sequence (the dead attempt's late ack is `Superseded`), and only a pair whose row is gone
//! gets a new one. A stage enqueued again since it died is newer work: its row is no longer
//! dead, and the retry is `Conflict` and changes nothing.

use flexiq_core::cursor::page_from_rows;
use flexiq_core::store::{
    DeadLetters, DeadLettersAfterRequest, DeadLettersRequest, PurgeDeadRequest, RetryDeadRequest,
};
use flexiq_core::{DeadJob, Error, JobId, JobStatus, Page, Result};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::apply::Effects;
use crate::db::{i64_of, jid};
use crate::inspect::cursor_pos;
use crate::row::status;
use crate::store::PgStore;
use crate::workflow::REPLACE_STAGE;

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

/// Takes dead letter `$2` of namespace `$1` and enqueues its job again at `$4`: as job `$3`,
/// unless it is a workflow stage whose (run, stage) pair still has a row, which is then
/// replaced in place as `upsert_stages` replaces it. Returns the job id and whether a row was
/// replaced.
fn retry_sql() -> String {
    format!(
        "WITH d AS (DELETE FROM {{S}}.dead_letters WHERE namespace = $1 AND id = $2 RETURNING *), \
         q AS (INSERT INTO {{S}}.queues (namespace, queue) SELECT $1, queue FROM d ON CONFLICT DO NOTHING) \
         INSERT INTO {{S}}.jobs AS j (id, namespace, queue, task, payload, priority, status, max_retries, backoff_base_ms, \
           backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key, workflow_run_id, workflow_stage_id, \
           workflow_version) \
         SELECT $3, $1, queue, task_name, payload, priority, 0, max_retries, backoff_base_ms, backoff_max_ms, $4, $4, \
           timeout_ms, metadata, group_key, workflow_run_id, workflow_stage_id, workflow_version FROM d \
         {REPLACE_STAGE} \
         RETURNING j.id, j.xmax <> 0"
    )
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
        let what = "retry dead letter";
        let c = self.conn().await?;
        // The entry, whether its task is revoked, and for a stage the pair's row as it is now.
        let entry = self.sql(
            "SELECT d.task_name, EXISTS (SELECT 1 FROM {S}.revoked_tasks r WHERE r.namespace = $1 AND r.task = d.task_name), \
               d.workflow_run_id, d.workflow_stage_id, s.id, s.status \
             FROM {S}.dead_letters d LEFT JOIN LATERAL \
               (SELECT j.id, j.status FROM {S}.jobs j WHERE j.namespace = $1 AND j.workflow_run_id = d.workflow_run_id \
                  AND j.workflow_stage_id = d.workflow_stage_id FOR UPDATE) AS s ON true \
             WHERE d.namespace = $1 AND d.id = $2 FOR UPDATE OF d",
        );
        let take = self.sql(&retry_sql());
        let unlink = self.sql("DELETE FROM {S}.job_deps WHERE job_id = $1");
        let (id, replaced) = c
            .tx(async {
                let Some(r) = c.opt(what, &entry, &[&ns, &did]).await? else {
                    return Err(not_found(dead_id));
                };
                if r.get::<_, bool>(1) {
                    return Err(Error::TaskRevoked { task: r.get(0) });
                }
                if let (Some(run), Some(stage), Some(job), Some(code)) =
                    (r.get::<_, Option<&str>>(2), r.get::<_, Option<&str>>(3), r.get::<_, Option<Uuid>>(4), r.get(5))
                {
                    let now_is = status(code)?;
                    if now_is != JobStatus::Dead {
                        return Err(Error::Conflict(format!(
                            "dead letter {dead_id} is stage {stage} of run {run}, whose job {} was enqueued again \
                             since and is {}: retrying would replace newer work",
                            jid(job),
                            now_is.as_str()
                        )));
                    }
                }
                let row = c.opt(what, &take, &[&ns, &did, &new_id, &now]).await?.ok_or_else(|| {
                    Error::backend(format!("retry of dead letter {dead_id} wrote no job"))
                })?;
                let (id, replaced): (Uuid, bool) = (row.get(0), row.get(1));
                if replaced {
                    // The revived stage starts over without the dependencies it may have had.
                    c.exec(what, &unlink, &[&id]).await?;
                }
                Ok((id, replaced))
            })
            .await?;
        // Waiters on a revived stage see it start over; idle workers see new work.
        let jobs = if replaced { vec![id] } else { Vec::new() };
        self.announce(&Effects { work: true, jobs });
        Ok(jid(id))
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
