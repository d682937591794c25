//! [`Maintenance`]: what the elected cleaner runs. Archival moves terminal rows into
//! `archived_jobs` (keeping the counters right), retention deletes old history per table by its
//! time column (an archived job purged takes the dedup record it holds with it), and the
//! worker registry is one row per worker; the jobs a worker runs are not
//! stored with it but read from the running jobs stamped with its id when it is listed.

use std::collections::{BTreeMap, HashMap};

use flexiq_core::options::validate_name;
use flexiq_core::store::{ArchiveTerminalRequest, Maintenance, PruneWorkersRequest, RetentionRequest};
use flexiq_core::{
    EffectiveRetention, Error, JobStatus, Result, RetentionTable, RetentionWindows, WorkerInfo,
};
use rusqlite::{Connection, OptionalExtension};

use crate::error::SqlResultExt;
use crate::row::JOB_COLS;
use crate::SqliteStore;

/// The archive sweep: terminal jobs finished before a cutoff, oldest first.
pub(crate) const ARCHIVE_SWEEP: &str = "SELECT id, queue, status FROM jobs
    WHERE ns = ?1 AND finished_at IS NOT NULL AND finished_at < ?2 ORDER BY finished_at LIMIT ?3";

/// The running jobs of a namespace with the worker stamped on each: one pass over the running
/// index serves every worker `list_workers` returns.
pub(crate) const RUNNING_BY_WORKER: &str =
    "SELECT worker_id, id FROM jobs WHERE ns = ?1 AND status = 1 AND worker_id IS NOT NULL";

/// The ids of the running jobs of `ns`, by the worker stamped on them.
fn running_by_worker(conn: &Connection, ns: &str) -> Result<HashMap<String, Vec<String>>> {
    let mut stmt = conn.prepare_cached(RUNNING_BY_WORKER).db()?;
    let rows = stmt.query_map([ns], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).db()?;
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for row in rows {
        let (worker, id) = row.db()?;
        out.entry(worker).or_default().push(id);
    }
    Ok(out)
}

/// The dedup records held by archived jobs of `?1` archived before `?2`, dropped with them.
/// The archived rows are walked by archive time and each one's record found through
/// `dedup_keys_job`, so the namespace's other records are never read.
pub(crate) const ARCHIVED_DEDUP_PURGE: &str = "DELETE FROM dedup_keys WHERE ns = ?1 AND key IN
    (SELECT k.key FROM archived_jobs a CROSS JOIN dedup_keys k ON k.ns = ?1 AND k.job_id = a.id
     WHERE a.ns = ?1 AND a.archived_at < ?2)";

/// (table, time column) swept for each retention table.
fn retention_target(t: RetentionTable) -> (&'static str, &'static str) {
    match t {
        RetentionTable::ArchivedJobs => ("archived_jobs", "archived_at"),
        RetentionTable::DeadLetter => ("dead_letters", "failed_at"),
        RetentionTable::TaskLogs => ("task_logs", "logged_at"),
        RetentionTable::TaskMetrics => ("task_metrics", "recorded_at"),
        RetentionTable::JobErrors => ("job_errors", "failed_at"),
    }
}

fn retention(
    conn: &Connection,
    ns: &str,
    windows: &RetentionWindows,
    now: i64,
    delete: bool,
) -> Result<BTreeMap<RetentionTable, u64>> {
    let mut out = BTreeMap::new();
    for t in RetentionTable::ALL {
        let n = match windows.cutoff(t, now) {
            None => 0,
            Some(cutoff) => {
                let (table, col) = retention_target(t);
                if delete {
                    if t == RetentionTable::ArchivedJobs {
                        conn.prepare_cached(ARCHIVED_DEDUP_PURGE).db()?.execute((ns, cutoff)).db()?;
                    }
                    let sql = format!("DELETE FROM {table} WHERE ns = ?1 AND {col} < ?2");
                    conn.prepare_cached(&sql).db()?.execute((ns, cutoff)).db()? as u64
                } else {
                    let sql = format!("SELECT COUNT(*) FROM {table} WHERE ns = ?1 AND {col} < ?2");
                    conn.prepare_cached(&sql).db()?.query_row((ns, cutoff), |r| r.get::<_, i64>(0)).db()?
                        as u64
                }
            }
        };
        out.insert(t, n);
    }
    Ok(out)
}

#[async_trait::async_trait]
impl Maintenance for SqliteStore {
    async fn archive_terminal(&self, req: ArchiveTerminalRequest) -> Result<u64> {
        req.validate()?;
        let (ns, ArchiveTerminalRequest { cutoff_ms: cutoff, limit, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let rows: Vec<(String, String, u8)> = {
                let mut stmt = ctx.conn.prepare_cached(ARCHIVE_SWEEP).db()?;
                let rows =
                    stmt.query_map((&*ns, cutoff, limit), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).db()?;
                rows.collect::<rusqlite::Result<_>>().db()?
            };
            let copy = format!(
                "INSERT INTO archived_jobs ({JOB_COLS}, has_dependents, archived_at)
                 SELECT {JOB_COLS}, has_dependents, ?2 FROM jobs WHERE id = ?1"
            );
            for (id, queue, code) in &rows {
                ctx.conn.prepare_cached(&copy).db()?.execute((id, now)).db()?;
                let conn = ctx.conn;
                conn.prepare_cached("DELETE FROM jobs WHERE id = ?1").db()?.execute([id]).db()?;
                ctx.count_delta(&ns, queue, JobStatus::from_code(*code)?, -1);
                ctx.job_changed(id);
            }
            Ok(rows.len() as u64)
        })
        .await
    }

    async fn retention_counts(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        let (ns, RetentionRequest { windows, now }) = (self.ns(), req);
        self.read(move |conn| retention(conn, &ns, &windows, now, false)).await
    }

    async fn retention_purge(&self, req: RetentionRequest) -> Result<BTreeMap<RetentionTable, u64>> {
        let (ns, RetentionRequest { windows, now }) = (self.ns(), req);
        self.write(true, move |ctx| retention(ctx.conn, &ns, &windows, now, true)).await
    }

    async fn publish_effective_retention(&self, eff: &EffectiveRetention) -> Result<()> {
        let body =
            serde_json::to_string(eff).map_err(|e| Error::invalid(format!("effective retention: {e}")))?;
        let ns = self.ns();
        self.write(false, move |ctx| {
            ctx.conn
                .prepare_cached(
                    "INSERT INTO retention_state (ns, body) VALUES (?1, ?2)
                     ON CONFLICT (ns) DO UPDATE SET body = excluded.body",
                )
                .db()?
                .execute((&*ns, &body))
                .db()?;
            Ok(())
        })
        .await
    }

    async fn effective_retention(&self) -> Result<Option<EffectiveRetention>> {
        let ns = self.ns();
        self.read(move |conn| {
            let body: Option<String> = conn
                .prepare_cached("SELECT body FROM retention_state WHERE ns = ?1")
                .db()?
                .query_row([&*ns], |r| r.get(0))
                .optional()
                .db()?;
            body.map(|b| {
                serde_json::from_str(&b).map_err(|e| {
                    Error::backend(format!("stored effective retention of namespace {ns} is corrupt: {e}"))
                })
            })
            .transpose()
        })
        .await
    }

    async fn worker_heartbeat(&self, info: &WorkerInfo) -> Result<()> {
        validate_name("worker id", &info.id)?;
        let queues = serde_json::to_string(&info.queues).map_err(|e| Error::invalid(e.to_string()))?;
        let (ns, info) = (self.ns(), info.clone());
        self.write(false, move |ctx| {
            ctx.conn
                .prepare_cached(
                    "INSERT INTO workers (ns, id, queues, concurrency, host, pid, started_at, heartbeat_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT (ns, id) DO UPDATE SET queues = excluded.queues,
                        concurrency = excluded.concurrency, host = excluded.host, pid = excluded.pid,
                        started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at",
                )
                .db()?
                .execute((
                    &*ns,
                    &info.id,
                    &queues,
                    info.concurrency,
                    &info.host,
                    info.pid,
                    info.started_at,
                    info.heartbeat_at,
                ))
                .db()?;
            Ok(())
        })
        .await
    }

    async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        let ns = self.ns();
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT id, queues, concurrency, host, pid, started_at, heartbeat_at FROM workers
                     WHERE ns = ?1 ORDER BY id",
                )
                .db()?;
            let rows = stmt
                .query_map([&*ns], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ))
                })
                .db()?;
            let mut running = running_by_worker(conn, &ns)?;
            let mut out = Vec::new();
            for row in rows {
                let (id, queues, concurrency, host, pid, started_at, heartbeat_at) = row.db()?;
                let queues = serde_json::from_str(&queues)
                    .map_err(|e| Error::backend(format!("stored queues of worker {id} are corrupt: {e}")))?;
                let current_jobs = running.remove(&id).unwrap_or_default();
                out.push(WorkerInfo {
                    id,
                    queues,
                    concurrency,
                    host,
                    pid,
                    started_at,
                    heartbeat_at,
                    current_jobs,
                });
            }
            Ok(out)
        })
        .await
    }

    async fn prune_workers(&self, req: PruneWorkersRequest) -> Result<u64> {
        let (ns, PruneWorkersRequest { cutoff_ms: cutoff }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM workers WHERE ns = ?1 AND heartbeat_at < ?2")
                .db()?
                .execute((&*ns, cutoff))
                .db()?;
            Ok(n as u64)
        })
        .await
    }
}
