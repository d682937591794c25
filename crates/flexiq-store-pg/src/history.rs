//! [`History`] for [`PgStore`]: metric rows, partial results, logs, progress and replays.

use flexiq_core::store::{
    AppendLogRequest, GetMetricsRequest, History, PartialsRequest, PublishPartialRequest, ReplayRequest,
    SetProgressRequest,
};
use flexiq_core::{AckOutcome, Error, JobId, LogEntry, MetricRow, Partial, ReplayEntry, Result};
use uuid::Uuid;

use crate::apply::{new_uuid, Effects};
use crate::db::{jid, uid};
use crate::store::PgStore;

#[async_trait::async_trait]
impl History for PgStore {
    async fn get_metrics(&self, req: GetMetricsRequest) -> Result<Vec<MetricRow>> {
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT job_id, task, queue, attempt, success, duration_ms, recorded_at FROM {S}.task_metrics \
             WHERE namespace = $1 AND recorded_at >= $2 AND ($3::text IS NULL OR task = $3) ORDER BY recorded_at, job_id, attempt",
        );
        let c = self.conn().await?;
        Ok(c.rows("read metrics", &sql, &[&ns, &req.since_ms, &req.task])
            .await?
            .iter()
            .map(|r| MetricRow {
                job_id: r.get::<_, Uuid>(0).hyphenated().to_string(),
                task: r.get(1),
                queue: r.get(2),
                attempt: r.get::<_, i32>(3).max(0) as u32,
                success: r.get(4),
                duration_ms: r.get::<_, i64>(5).max(0) as u64,
                recorded_at: r.get(6),
            })
            .collect())
    }

    async fn publish_partial(&self, req: PublishPartialRequest) -> Result<u64> {
        req.validate()?;
        let (id, data, now) = (&req.id, &req.data, req.now);
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let lock = self.sql("SELECT id FROM {S}.jobs WHERE namespace = $1 AND id = $2 FOR UPDATE");
        // A separate statement after the lock, so it sees partials committed before it.
        let insert = self.sql(
            "INSERT INTO {S}.job_partials (job_id, seq, data, published_at) \
             SELECT $1, coalesce(max(seq), 0) + 1, $2, $3 FROM {S}.job_partials WHERE job_id = $1 RETURNING seq",
        );
        let c = self.conn().await?;
        let seq = c
            .tx(async {
                if c.opt("publish partial", &lock, &[&ns, &u]).await?.is_none() {
                    return Err(Error::JobNotFound(id.clone()));
                }
                let r = c.rows("publish partial", &insert, &[&u, data, &now]).await?;
                Ok(r[0].get::<_, i64>(0))
            })
            .await?;
        self.announce(&Effects { work: false, jobs: vec![u] });
        Ok(seq.max(0) as u64)
    }

    async fn partials(&self, req: PartialsRequest) -> Result<Vec<Partial>> {
        req.validate()?;
        let u = uid(&req.id)?;
        let limit = i64::from(req.limit);
        let after = i64::try_from(req.after_seq).unwrap_or(i64::MAX);
        let sql = self.sql(
            "SELECT seq, data, published_at FROM {S}.job_partials WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        );
        let c = self.conn().await?;
        Ok(c.rows("read partials", &sql, &[&u, &after, &limit])
            .await?
            .iter()
            .map(|r| Partial {
                seq: r.get::<_, i64>(0).max(0) as u64,
                data: r.get(1),
                published_at: r.get(2),
            })
            .collect())
    }

    async fn append_log(&self, req: AppendLogRequest) -> Result<()> {
        req.validate()?;
        let (id, level, message, now) = (&req.id, &req.level, &req.message, req.now);
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql(
            "INSERT INTO {S}.task_logs (id, namespace, job_id, level, message, logged_at) \
             SELECT $3, $1, id, $4, $5, $6 FROM {S}.jobs WHERE namespace = $1 AND id = $2",
        );
        let c = self.conn().await?;
        let n = c.exec("append log", &sql, &[&ns, &u, &new_uuid(), level, message, &now]).await?;
        if n == 0 {
            return Err(Error::JobNotFound(id.clone()));
        }
        Ok(())
    }

    async fn job_logs(&self, id: &JobId) -> Result<Vec<LogEntry>> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT level, message, logged_at FROM {S}.task_logs WHERE job_id = $1 AND namespace = $2 ORDER BY logged_at, id",
        );
        let c = self.conn().await?;
        Ok(c.rows("read logs", &sql, &[&u, &ns])
            .await?
            .iter()
            .map(|r| LogEntry {
                job_id: id.to_string(),
                level: r.get(0),
                message: r.get(1),
                logged_at: r.get(2),
            })
            .collect())
    }

    async fn set_progress(&self, req: SetProgressRequest) -> Result<AckOutcome> {
        req.validate()?;
        let (fence, progress) = (req.fence, req.progress);
        let u = uid(&req.id)?;
        let ns: &str = &self.ns;
        let attempt = fence.attempt as i32;
        let seq = fence.claim_seq.min(i64::MAX as u64) as i64;
        let sql = self.sql(
            "UPDATE {S}.jobs SET progress = $3 WHERE namespace = $1 AND id = $2 AND status = 1 \
             AND attempt = $4 AND started_at = $5 AND claim_seq = $6",
        );
        let c = self.conn().await?;
        let n =
            c.exec("set progress", &sql, &[&ns, &u, &progress, &attempt, &fence.started_at, &seq]).await?;
        if n == 0 {
            return Ok(AckOutcome::Superseded);
        }
        self.announce(&Effects { work: false, jobs: vec![u] });
        Ok(AckOutcome::Acknowledged)
    }

    async fn replay(&self, req: ReplayRequest) -> Result<JobId> {
        let (id, now) = (&req.id, req.now);
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let new_id = flexiq_core::id::uuid_at(now);
        // A copy of a workflow stage keeps its run and stage, so it is refused (`Conflict`)
        // while that pair still has a live row: only `upsert_stages` replaces a stage's row.
        let cols =
            "queue, task, payload, priority, max_retries, backoff_base_ms, backoff_max_ms, timeout_ms, \
            metadata, group_key, workflow_run_id, workflow_stage_id, workflow_version, last_error";
        let sql = self.sql(&format!(
            "WITH found AS (SELECT {cols} FROM {{S}}.jobs WHERE namespace = $1 AND id = $2 \
                          UNION ALL SELECT {cols} FROM {{S}}.archived_jobs WHERE namespace = $1 AND id = $2 \
                          LIMIT 1), \
             clash AS (SELECT j.id FROM {{S}}.jobs j, found f WHERE j.namespace = $1 \
                 AND j.workflow_run_id = f.workflow_run_id AND j.workflow_stage_id = f.workflow_stage_id LIMIT 1), \
             src AS (SELECT * FROM found WHERE NOT EXISTS (SELECT 1 FROM clash) AND NOT EXISTS \
                 (SELECT 1 FROM {{S}}.revoked_tasks r WHERE r.namespace = $1 AND r.task = found.task)), \
             ins AS (INSERT INTO {{S}}.jobs (id, namespace, queue, task, payload, priority, status, max_retries, \
                 backoff_base_ms, backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key, workflow_run_id, \
                 workflow_stage_id, workflow_version) \
               SELECT $3, $1, queue, task, payload, priority, 0, max_retries, backoff_base_ms, backoff_max_ms, $4, $4, \
                 timeout_ms, metadata, group_key, workflow_run_id, workflow_stage_id, workflow_version FROM src RETURNING id), \
             rep AS (INSERT INTO {{S}}.replays (id, namespace, original_job_id, replay_job_id, replayed_at, original_error) \
               SELECT $5, $1, $2, $3, $4, last_error FROM src), \
             q AS (INSERT INTO {{S}}.queues (namespace, queue) SELECT $1, queue FROM src ON CONFLICT DO NOTHING) \
             SELECT (SELECT task FROM found), EXISTS (SELECT 1 FROM ins), (SELECT id FROM clash), \
               (SELECT workflow_run_id FROM found), (SELECT workflow_stage_id FROM found)"
        ));
        let c = self.conn().await?;
        let r = c.rows("replay job", &sql, &[&ns, &u, &new_id, &now, &new_uuid()]).await?;
        let task: Option<String> = r[0].get(0);
        let clash: Option<Uuid> = r[0].get(2);
        match (task, r[0].get::<_, bool>(1), clash) {
            (None, _, _) => return Err(Error::JobNotFound(id.clone())),
            (Some(_), _, Some(existing)) => {
                let (run, stage): (Option<String>, Option<String>) = (r[0].get(3), r[0].get(4));
                return Err(crate::workflow::stage_taken(
                    run.as_deref().unwrap_or_default(),
                    stage.as_deref().unwrap_or_default(),
                    existing,
                ));
            }
            (Some(task), false, None) => return Err(Error::TaskRevoked { task }),
            (Some(_), true, None) => {}
        }
        self.announce(&Effects { work: true, jobs: vec![] });
        Ok(jid(new_id))
    }

    async fn replay_history(&self, id: &JobId) -> Result<Vec<ReplayEntry>> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT r.id, r.original_job_id, r.replay_job_id, r.replayed_at, r.original_error, j.last_error \
             FROM {S}.replays r LEFT JOIN {S}.jobs j ON j.id = r.replay_job_id \
             WHERE r.namespace = $1 AND r.original_job_id = $2 ORDER BY r.replayed_at DESC, r.id DESC",
        );
        let c = self.conn().await?;
        Ok(c.rows("replay history", &sql, &[&ns, &u])
            .await?
            .iter()
            .map(|r| ReplayEntry {
                id: r.get::<_, Uuid>(0).hyphenated().to_string(),
                original_job_id: r.get::<_, Uuid>(1).hyphenated().to_string(),
                replay_job_id: r.get::<_, Uuid>(2).hyphenated().to_string(),
                replayed_at: r.get(3),
                original_error: r.get(4),
                replay_error: r.get(5),
            })
            .collect())
    }
}
