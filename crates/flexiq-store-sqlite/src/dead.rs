//! [`DeadLetters`]: listing, retry, deletion and purges.
//!
//! A retried entry becomes a fresh job, except a workflow stage's: a (run, stage) pair holds
//! one row, so the retry goes through the stage upsert, which makes the stage's own row pending
//! again in place (its id and claim sequence kept, so the dead attempt's late ack is
//! `Superseded`), or inserts it anew when the stage's row was deleted since. A stage enqueued
//! again since it died is newer work, and its retry is `Conflict`.

use flexiq_core::cursor::{page_from_rows, Cursor};
use flexiq_core::store::{
    DeadLetters, DeadLettersAfterRequest, DeadLettersRequest, EnqueueRequest, PurgeDeadRequest,
    RetryDeadRequest, UpsertStagesRequest,
};
use flexiq_core::{Backoff, DeadJob, Error, JobId, JobStatus, NewJob, Page, Result};
use rusqlite::{OptionalExtension, Row};

use crate::error::SqlResultExt;
use crate::{enqueue, workflow, SqliteStore};

/// The keyset listing name of dead letters.
pub(crate) const DEAD_LISTING: &str = "dead_letters";

const DEAD_COLS: &str = "id, original_job_id, queue, task, payload, error, retry_count, failed_at, metadata";

fn dead_from_row(r: &Row<'_>) -> rusqlite::Result<DeadJob> {
    Ok(DeadJob {
        id: r.get(0)?,
        original_job_id: r.get(1)?,
        queue: r.get(2)?,
        task_name: r.get(3)?,
        payload: r.get(4)?,
        error: r.get(5)?,
        retry_count: r.get(6)?,
        failed_at: r.get(7)?,
        metadata: r.get(8)?,
    })
}

/// The SQL of a keyset page of dead letters (`?1` namespace, then the cursor, then the limit).
pub(crate) fn dead_page_sql(after: bool) -> String {
    if after {
        format!(
            "SELECT {DEAD_COLS} FROM dead_letters WHERE ns = ?1 AND (failed_at, id) < (?2, ?3)
             ORDER BY failed_at DESC, id DESC LIMIT ?4"
        )
    } else {
        format!(
            "SELECT {DEAD_COLS} FROM dead_letters WHERE ns = ?1 ORDER BY failed_at DESC, id DESC LIMIT ?2"
        )
    }
}

#[async_trait::async_trait]
impl DeadLetters for SqliteStore {
    async fn dead_letters(&self, req: DeadLettersRequest) -> Result<Vec<DeadJob>> {
        req.validate()?;
        let (ns, DeadLettersRequest { task, limit, offset }) = (self.ns(), req);
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        self.read(move |conn| {
            let sql = match task {
                Some(_) => format!(
                    "SELECT {DEAD_COLS} FROM dead_letters WHERE ns = ?1 AND task = ?2
                     ORDER BY failed_at DESC, id DESC LIMIT ?3 OFFSET ?4"
                ),
                None => format!(
                    "SELECT {DEAD_COLS} FROM dead_letters WHERE ns = ?1 AND ?2 IS NULL
                     ORDER BY failed_at DESC, id DESC LIMIT ?3 OFFSET ?4"
                ),
            };
            let mut stmt = conn.prepare_cached(&sql).db()?;
            let rows = stmt.query_map((&*ns, &task, limit, offset), dead_from_row).db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }

    async fn dead_letters_after(&self, req: DeadLettersAfterRequest) -> Result<Page<DeadJob>> {
        req.validate()?;
        let DeadLettersAfterRequest { limit, after } = req;
        let cursor = after.map(|a| Cursor::decode(&a, DEAD_LISTING, 0)).transpose()?;
        let ns = self.ns();
        self.read(move |conn| {
            let fetch = i64::from(limit) + 1;
            let mut stmt = conn.prepare_cached(&dead_page_sql(cursor.is_some())).db()?;
            let rows = match &cursor {
                Some(c) => stmt.query_map((&*ns, c.sort_key, &c.id, fetch), dead_from_row),
                None => stmt.query_map((&*ns, fetch), dead_from_row),
            }
            .db()?;
            let rows: Vec<DeadJob> = rows.collect::<rusqlite::Result<_>>().db()?;
            Ok(page_from_rows(rows, limit as usize, DEAD_LISTING, 0, |d| (d.failed_at, d.id.clone())))
        })
        .await
    }

    async fn retry_dead(&self, req: RetryDeadRequest) -> Result<JobId> {
        let (ns, RetryDeadRequest { dead_id, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let job = ctx
                .conn
                .prepare_cached(
                    "SELECT queue, task, payload, priority, max_retries, backoff_base, backoff_max,
                        timeout_ms, metadata, group_key, wf_run, wf_stage, wf_version
                     FROM dead_letters WHERE id = ?1 AND ns = ?2",
                )
                .db()?
                .query_row((&dead_id, &*ns), |r| {
                    Ok(NewJob {
                        id: JobId::at(now),
                        queue: r.get(0)?,
                        task: r.get(1)?,
                        payload: r.get(2)?,
                        priority: r.get(3)?,
                        run_at: now,
                        max_retries: r.get(4)?,
                        backoff: Backoff { base_ms: r.get(5)?, max_ms: r.get(6)? },
                        timeout_ms: r.get(7)?,
                        unique_key: None,
                        metadata: r.get(8)?,
                        depends_on: Vec::new(),
                        dep_policies: Vec::new(),
                        dedup: None,
                        group_key: r.get(9)?,
                        workflow_run_id: r.get(10)?,
                        workflow_stage_id: r.get(11)?,
                        workflow_version: r.get(12)?,
                    })
                })
                .optional()
                .db()?
                .ok_or_else(|| Error::NotFound { what: "dead letter", id: dead_id.clone() })?;
            let id = if let (Some(run), Some(stage)) = (&job.workflow_run_id, &job.workflow_stage_id) {
                if let Some(now_row) = workflow::stage_state(ctx.conn, &ns, run, stage)? {
                    if now_row.status != JobStatus::Dead {
                        return Err(Error::Conflict(format!(
                            "dead letter {dead_id} is stage {stage} of run {run}, whose job {} was enqueued again \
                             since and is {}: retrying would replace newer work",
                            now_row.id,
                            now_row.status.as_str()
                        )));
                    }
                }
                let ids = workflow::upsert(ctx, &ns, UpsertStagesRequest { jobs: vec![job], now })?;
                ids.into_iter().next().ok_or_else(|| {
                    Error::backend(format!("the retry of dead letter {dead_id} upserted no stage"))
                })?
            } else {
                let id = job.id.clone();
                enqueue::enqueue(ctx, &ns, &EnqueueRequest { jobs: vec![job], max_pending: None, now })?;
                id
            };
            ctx.conn
                .prepare_cached("DELETE FROM dead_letters WHERE id = ?1")
                .db()?
                .execute([&dead_id])
                .db()?;
            Ok(id)
        })
        .await
    }

    async fn delete_dead(&self, dead_id: &str) -> Result<bool> {
        let (ns, dead_id) = (self.ns(), dead_id.to_string());
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM dead_letters WHERE id = ?1 AND ns = ?2")
                .db()?
                .execute((&dead_id, &*ns))
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn purge_dead(&self, req: PurgeDeadRequest) -> Result<u64> {
        let (ns, PurgeDeadRequest { cutoff_ms: cutoff }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM dead_letters WHERE ns = ?1 AND failed_at < ?2")
                .db()?
                .execute((&*ns, cutoff))
                .db()?;
            Ok(n as u64)
        })
        .await
    }

    async fn purge_dead_by_task(&self, task: &str) -> Result<u64> {
        let (ns, task) = (self.ns(), task.to_string());
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM dead_letters WHERE ns = ?1 AND task = ?2")
                .db()?
                .execute((&*ns, &task))
                .db()?;
            Ok(n as u64)
        })
        .await
    }
}
