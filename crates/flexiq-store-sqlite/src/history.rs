//! [`History`]: metric rows, partial results, logs, progress and replays.

use flexiq_core::id::new_row_id;
use flexiq_core::store::{
    AppendLogRequest, EnqueueRequest, GetMetricsRequest, History, PartialsRequest, PublishPartialRequest,
    ReplayRequest, SetProgressRequest,
};
use flexiq_core::{AckOutcome, Error, JobId, LogEntry, MetricRow, NewJob, Partial, ReplayEntry, Result};

use crate::error::SqlResultExt;
use crate::row::{job_exists, load_job, load_state};
use crate::{enqueue, SqliteStore};

#[async_trait::async_trait]
impl History for SqliteStore {
    async fn get_metrics(&self, req: GetMetricsRequest) -> Result<Vec<MetricRow>> {
        let (ns, GetMetricsRequest { since_ms: since, task }) = (self.ns(), req);
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT job_id, task, queue, attempt, success, duration_ms, recorded_at FROM task_metrics
                     WHERE ns = ?1 AND recorded_at >= ?2 AND (?3 IS NULL OR task = ?3)
                     ORDER BY recorded_at, rowid",
                )
                .db()?;
            let rows = stmt
                .query_map((&*ns, since, &task), |r| {
                    Ok(MetricRow {
                        job_id: r.get(0)?,
                        task: r.get(1)?,
                        queue: r.get(2)?,
                        attempt: r.get(3)?,
                        success: r.get(4)?,
                        duration_ms: r.get(5)?,
                        recorded_at: r.get(6)?,
                    })
                })
                .db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }

    async fn publish_partial(&self, req: PublishPartialRequest) -> Result<u64> {
        req.validate()?;
        let (ns, PublishPartialRequest { id, data, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            if !job_exists(ctx.conn, &ns, id.as_str())? {
                return Err(Error::JobNotFound(id));
            }
            let seq: u64 = ctx
                .conn
                .prepare_cached(
                    "INSERT INTO job_partials (job_id, seq, data, published_at)
                     SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3 FROM job_partials WHERE job_id = ?1
                     RETURNING seq",
                )
                .db()?
                .query_row((id.as_str(), &data, now), |r| r.get(0))
                .db()?;
            ctx.job_changed(id.as_str());
            Ok(seq)
        })
        .await
    }

    async fn partials(&self, req: PartialsRequest) -> Result<Vec<Partial>> {
        req.validate()?;
        let PartialsRequest { id, after_seq, limit } = req;
        let after = i64::try_from(after_seq).unwrap_or(i64::MAX);
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT seq, data, published_at FROM job_partials WHERE job_id = ?1 AND seq > ?2
                     ORDER BY seq LIMIT ?3",
                )
                .db()?;
            let rows = stmt
                .query_map((id.as_str(), after, limit), |r| {
                    Ok(Partial { seq: r.get(0)?, data: r.get(1)?, published_at: r.get(2)? })
                })
                .db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }

    async fn append_log(&self, req: AppendLogRequest) -> Result<()> {
        req.validate()?;
        let (ns, AppendLogRequest { id, level, message, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            if !job_exists(ctx.conn, &ns, id.as_str())? {
                return Err(Error::JobNotFound(id));
            }
            ctx.conn
                .prepare_cached(
                    "INSERT INTO task_logs (ns, job_id, level, message, logged_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .db()?
                .execute((&*ns, id.as_str(), &level, &message, now))
                .db()?;
            Ok(())
        })
        .await
    }

    async fn job_logs(&self, id: &JobId) -> Result<Vec<LogEntry>> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT job_id, level, message, logged_at FROM task_logs
                     WHERE job_id = ?1 AND ns = ?2 ORDER BY logged_at, rowid",
                )
                .db()?;
            let rows = stmt
                .query_map((id.as_str(), &*ns), |r| {
                    Ok(LogEntry {
                        job_id: r.get(0)?,
                        level: r.get(1)?,
                        message: r.get(2)?,
                        logged_at: r.get(3)?,
                    })
                })
                .db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }

    async fn set_progress(&self, req: SetProgressRequest) -> Result<AckOutcome> {
        req.validate()?;
        let (ns, SetProgressRequest { id, fence, progress }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let Some(st) = load_state(ctx.conn, &ns, id.as_str())? else { return Ok(AckOutcome::Superseded) };
            if !st.holds(fence) {
                return Ok(AckOutcome::Superseded);
            }
            ctx.conn
                .prepare_cached("UPDATE jobs SET progress = ?2 WHERE id = ?1")
                .db()?
                .execute((&st.id, progress))
                .db()?;
            ctx.job_changed(&st.id);
            Ok(AckOutcome::Acknowledged)
        })
        .await
    }

    async fn replay(&self, req: ReplayRequest) -> Result<JobId> {
        let (ns, ReplayRequest { id, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let old = load_job(ctx.conn, &ns, id.as_str())?.ok_or_else(|| Error::JobNotFound(id.clone()))?;
            let job = NewJob {
                id: JobId::at(now),
                queue: old.queue,
                task: old.task,
                payload: old.payload,
                priority: old.priority,
                run_at: now,
                max_retries: old.max_retries,
                backoff: old.backoff,
                timeout_ms: old.timeout_ms,
                unique_key: None,
                metadata: old.metadata,
                depends_on: Vec::new(),
                dep_policies: Vec::new(),
                dedup: None,
                group_key: old.group_key,
                workflow_run_id: old.workflow_run_id,
                workflow_stage_id: old.workflow_stage_id,
                workflow_version: old.workflow_version,
            };
            let new_id = job.id.clone();
            enqueue::enqueue(ctx, &ns, &EnqueueRequest { jobs: vec![job], max_pending: None, now })?;
            ctx.conn
                .prepare_cached(
                    "INSERT INTO replays (id, ns, original_job_id, replay_job_id, replayed_at, original_error)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .db()?
                .execute((new_row_id(), &*ns, id.as_str(), new_id.as_str(), now, &old.last_error))
                .db()?;
            Ok(new_id)
        })
        .await
    }

    async fn replay_history(&self, id: &JobId) -> Result<Vec<ReplayEntry>> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT r.id, r.original_job_id, r.replay_job_id, r.replayed_at, r.original_error,
                        COALESCE(
                            (SELECT last_error FROM jobs j WHERE j.id = r.replay_job_id AND j.status IN (3, 4)),
                            (SELECT last_error FROM archived_jobs a WHERE a.id = r.replay_job_id AND a.status IN (3, 4)))
                     FROM replays r WHERE r.original_job_id = ?1 AND r.ns = ?2
                     ORDER BY r.replayed_at DESC, r.id DESC",
                )
                .db()?;
            let rows = stmt
                .query_map((id.as_str(), &*ns), |r| {
                    Ok(ReplayEntry {
                        id: r.get(0)?,
                        original_job_id: r.get(1)?,
                        replay_job_id: r.get(2)?,
                        replayed_at: r.get(3)?,
                        original_error: r.get(4)?,
                        replay_error: r.get(5)?,
                    })
                })
                .db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }
}
