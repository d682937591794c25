//! [`Maintenance`] for [`PgStore`]: archival, retention (a purged archived job takes its dedup
//! keys with it), the effective-retention record and the worker registry.

use std::collections::BTreeMap;

use flexiq_core::store::{ArchiveTerminalRequest, Maintenance, PruneWorkersRequest, RetentionRequest};
use flexiq_core::{EffectiveRetention, Result, RetentionTable, RetentionWindows, WorkerInfo};

use crate::row::JOB_COLS;
use crate::store::PgStore;

/// The table and time column each retention window applies to.
fn target(t: RetentionTable) -> (&'static str, &'static str) {
    match t {
        RetentionTable::ArchivedJobs => ("archived_jobs", "archived_at"),
        RetentionTable::DeadLetter => ("dead_letters", "failed_at"),
        RetentionTable::TaskLogs => ("task_logs", "logged_at"),
        RetentionTable::TaskMetrics => ("task_metrics", "recorded_at"),
        RetentionTable::JobErrors => ("job_errors", "failed_at"),
    }
}

impl PgStore {
    async fn retention(
        &self,
        windows: &RetentionWindows,
        now: i64,
        delete: bool,
    ) -> Result<BTreeMap<RetentionTable, u64>> {
        let ns: &str = &self.ns;
        let c = self.conn().await?;
        let mut out = BTreeMap::new();
        for t in RetentionTable::ALL {
            let Some(cutoff) = windows.cutoff(t, now) else {
                out.insert(t, 0);
                continue;
            };
            let (table, col) = target(t);
            let n = if delete && t == RetentionTable::ArchivedJobs {
                // A purged job's dedup keys go with it.
                let sql = self.sql(&format!(
                    "WITH gone AS (DELETE FROM {{S}}.{table} WHERE namespace = $1 AND {col} < $2 RETURNING id), \
                     k AS (DELETE FROM {{S}}.dedup_keys d USING gone WHERE d.namespace = $1 AND d.job_id = gone.id) \
                     SELECT count(*) FROM gone"
                ));
                c.rows("retention purge", &sql, &[&ns, &cutoff]).await?[0].get::<_, i64>(0).max(0) as u64
            } else if delete {
                let sql = self.sql(&format!("DELETE FROM {{S}}.{table} WHERE namespace = $1 AND {col} < $2"));
                c.exec("retention purge", &sql, &[&ns, &cutoff]).await?
            } else {
                let sql = self
                    .sql(&format!("SELECT count(*) FROM {{S}}.{table} WHERE namespace = $1 AND {col} < $2"));
                c.rows("retention preview", &sql, &[&ns, &cutoff]).await?[0].get::<_, i64>(0).max(0) as u64
            };
            out.insert(t, n);
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl Maintenance for PgStore {
    async fn archive_terminal(&self, req: ArchiveTerminalRequest) -> Result<u64> {
        req.validate()?;
        let (cutoff, limit, now) = (req.cutoff_ms, i64::from(req.limit), req.now);
        let ns: &str = &self.ns;
        // Columns by name: `archived_jobs` gained `claim_seq` after its `archived_at`.
        let cols = format!("{JOB_COLS}, has_dependents");
        let sql = self.sql(&format!(
            "WITH moved AS (DELETE FROM {{S}}.jobs WHERE id IN ( \
                SELECT id FROM {{S}}.jobs WHERE namespace = $1 AND status IN (2, 3, 4, 5) AND finished_at < $2 \
                ORDER BY finished_at LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING *) \
             INSERT INTO {{S}}.archived_jobs ({cols}, archived_at) SELECT {cols}, $4::int8 FROM moved"
        ));
        let moved = {
            let c = self.conn().await?;
            c.exec("archive jobs", &sql, &[&ns, &cutoff, &limit, &now]).await?
        };
        self.fold_counts().await?;
        Ok(moved)
    }

    async fn retention_counts(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        self.retention(&req.windows, req.now, false).await
    }

    async fn retention_purge(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        self.retention(&req.windows, req.now, true).await
    }

    async fn publish_effective_retention(&self, eff: &EffectiveRetention) -> Result<()> {
        let ns: &str = &self.ns;
        let w = |t| eff.windows.get(t).map(|v| v.min(i64::MAX as u64) as i64);
        let (a, d, l, m, e) = (
            w(RetentionTable::ArchivedJobs),
            w(RetentionTable::DeadLetter),
            w(RetentionTable::TaskLogs),
            w(RetentionTable::TaskMetrics),
            w(RetentionTable::JobErrors),
        );
        let sql = self.sql(
            "INSERT INTO {S}.effective_retention (namespace, enabled, defaulted, reported_at, archived_jobs_ms, \
               dead_letter_ms, task_logs_ms, task_metrics_ms, job_errors_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (namespace) DO UPDATE SET enabled = EXCLUDED.enabled, defaulted = EXCLUDED.defaulted, \
               reported_at = EXCLUDED.reported_at, archived_jobs_ms = EXCLUDED.archived_jobs_ms, \
               dead_letter_ms = EXCLUDED.dead_letter_ms, task_logs_ms = EXCLUDED.task_logs_ms, \
               task_metrics_ms = EXCLUDED.task_metrics_ms, job_errors_ms = EXCLUDED.job_errors_ms",
        );
        let c = self.conn().await?;
        c.exec(
            "publish retention",
            &sql,
            &[&ns, &eff.enabled, &eff.defaulted, &eff.reported_at, &a, &d, &l, &m, &e],
        )
        .await?;
        Ok(())
    }

    async fn effective_retention(&self) -> Result<Option<EffectiveRetention>> {
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT enabled, defaulted, reported_at, archived_jobs_ms, dead_letter_ms, task_logs_ms, task_metrics_ms, \
             job_errors_ms FROM {S}.effective_retention WHERE namespace = $1",
        );
        let c = self.conn().await?;
        let Some(r) = c.opt("read retention", &sql, &[&ns]).await? else { return Ok(None) };
        let mut windows = BTreeMap::new();
        for (i, t) in RetentionTable::ALL.into_iter().enumerate() {
            windows.insert(t, r.get::<_, Option<i64>>(3 + i).map(|v| v.max(0) as u64));
        }
        Ok(Some(EffectiveRetention {
            enabled: r.get(0),
            defaulted: r.get(1),
            namespace: self.ns.to_string(),
            reported_at: r.get(2),
            windows: RetentionWindows(windows),
        }))
    }

    async fn worker_heartbeat(&self, info: &WorkerInfo) -> Result<()> {
        flexiq_core::options::validate_name("worker id", &info.id)?;
        let ns: &str = &self.ns;
        let conc = i32::try_from(info.concurrency).unwrap_or(i32::MAX);
        let pid = i64::from(info.pid);
        let sql = self.sql(
            "INSERT INTO {S}.workers (namespace, id, queues, concurrency, host, pid, started_at, heartbeat_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (namespace, id) DO UPDATE SET queues = EXCLUDED.queues, \
             concurrency = EXCLUDED.concurrency, host = EXCLUDED.host, pid = EXCLUDED.pid, \
             started_at = EXCLUDED.started_at, heartbeat_at = EXCLUDED.heartbeat_at",
        );
        let c = self.conn().await?;
        c.exec(
            "worker heartbeat",
            &sql,
            &[&ns, &info.id, &info.queues, &conc, &info.host, &pid, &info.started_at, &info.heartbeat_at],
        )
        .await?;
        Ok(())
    }

    async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        let ns: &str = &self.ns;
        // One pass over the namespace's running jobs (the running index), grouped by worker.
        let sql = self.sql(
            "SELECT w.id, w.queues, w.concurrency, w.host, w.pid, w.started_at, w.heartbeat_at, \
               coalesce(r.ids, '{}'::uuid[]) FROM {S}.workers w \
             LEFT JOIN (SELECT worker_id, array_agg(id ORDER BY id) AS ids FROM {S}.jobs \
                WHERE namespace = $1 AND status = 1 AND worker_id IS NOT NULL GROUP BY worker_id) AS r \
               ON r.worker_id = w.id \
             WHERE w.namespace = $1 ORDER BY w.id",
        );
        let c = self.conn().await?;
        Ok(c.rows("list workers", &sql, &[&ns])
            .await?
            .iter()
            .map(|r| WorkerInfo {
                id: r.get(0),
                queues: r.get(1),
                concurrency: r.get::<_, i32>(2).max(0) as u32,
                host: r.get(3),
                pid: r.get::<_, i64>(4).clamp(0, i64::from(u32::MAX)) as u32,
                started_at: r.get(5),
                heartbeat_at: r.get(6),
                current_jobs: r
                    .get::<_, Vec<uuid::Uuid>>(7)
                    .into_iter()
                    .map(|u| u.hyphenated().to_string())
                    .collect(),
            })
            .collect())
    }

    async fn prune_workers(&self, req: PruneWorkersRequest) -> Result<u64> {
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.workers WHERE namespace = $1 AND heartbeat_at < $2");
        let c = self.conn().await?;
        c.exec("prune workers", &sql, &[&ns, &req.cutoff_ms]).await
    }
}
