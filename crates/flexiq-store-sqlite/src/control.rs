//! [`QueueControl`]: pause, rate limits, concurrency caps, stall budgets, purges and
//! revocation, persisted in `queue_state` and `revoked_tasks` so every process sharing the file
//! sees them. A revoked task refuses new enqueues (`TaskRevoked`, checked in `enqueue`); claims
//! do not look at it. The stall budget is read by `release_stale`, per job's queue. Pausing and
//! resuming write `paused` and `resumed`, and `purge_completed` writes `removed` per job, in
//! the same write; `purge_queue` cancels, which the status triggers report.

use flexiq_core::events::EventKind;
use flexiq_core::options::validate_name;
use flexiq_core::store::{
    PurgeCompletedRequest, PurgeQueueRequest, QueueConfig, QueueControl, SetConcurrencyRequest,
    SetMaxStalledRequest, SetRateLimitRequest,
};
use flexiq_core::transition::Event;
use flexiq_core::{JobStatus, Result};

use crate::apply::{fire, Extras};
use crate::claim::queue_row;
use crate::dedup;
use crate::error::SqlResultExt;
use crate::events_write;
use crate::row::{load_state, loaded_from_row, Loaded, STATE_COLS};
use crate::wait::wall_clock_ms;
use crate::writer::WriteCtx;
use crate::SqliteStore;

/// Completed jobs finished before a cutoff.
pub(crate) fn purge_completed_sql() -> String {
    format!("SELECT {STATE_COLS} FROM jobs WHERE ns = ?1 AND finished_at IS NOT NULL AND finished_at < ?2 AND status = 2")
}

fn ensure_queue(ctx: &WriteCtx<'_>, ns: &str, queue: &str) -> Result<()> {
    ctx.conn
        .prepare_cached(
            "INSERT INTO queue_state (ns, queue) VALUES (?1, ?2) ON CONFLICT (ns, queue) DO NOTHING",
        )
        .db()?
        .execute((ns, queue))
        .db()?;
    Ok(())
}

impl SqliteStore {
    /// Writes one column of a queue's (validated) row, creating the row first.
    async fn update_queue(&self, q: String, sql: &'static str, value: rusqlite::types::Value) -> Result<()> {
        let ns = self.ns();
        self.write(false, move |ctx| {
            ensure_queue(ctx, &ns, &q)?;
            ctx.conn.prepare_cached(sql).db()?.execute((&*ns, &q, value)).db()?;
            ctx.wake_work();
            Ok(())
        })
        .await
    }
}

impl SqliteStore {
    /// Pauses or resumes a (validated) queue and writes `paused` or `resumed` beside it, on
    /// every call: each is an operator's act, whatever state the queue was in.
    async fn set_paused(&self, q: String, paused: bool) -> Result<()> {
        let ns = self.ns();
        self.write(false, move |ctx| {
            ensure_queue(ctx, &ns, &q)?;
            ctx.conn
                .prepare_cached("UPDATE queue_state SET paused = ?3 WHERE ns = ?1 AND queue = ?2")
                .db()?
                .execute((&*ns, &q, paused))
                .db()?;
            let kind = if paused { EventKind::Paused } else { EventKind::Resumed };
            events_write::queue_event(ctx.conn, &ns, kind, &q, &serde_json::json!({}), wall_clock_ms())?;
            ctx.wake_work();
            Ok(())
        })
        .await
    }
}

#[async_trait::async_trait]
impl QueueControl for SqliteStore {
    async fn pause(&self, queue: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        self.set_paused(queue.to_string(), true).await
    }

    async fn resume(&self, queue: &str) -> Result<()> {
        validate_name("queue name", queue)?;
        self.set_paused(queue.to_string(), false).await
    }

    async fn paused_queues(&self) -> Result<Vec<String>> {
        let ns = self.ns();
        self.read(move |conn| {
            let mut stmt = conn
                .prepare_cached("SELECT queue FROM queue_state WHERE ns = ?1 AND paused = 1 ORDER BY queue")
                .db()?;
            let rows = stmt.query_map([&*ns], |r| r.get(0)).db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }

    async fn set_rate_limit(&self, req: SetRateLimitRequest) -> Result<()> {
        req.validate()?;
        let (ns, SetRateLimitRequest { queue: q, limit }) = (self.ns(), req);
        self.write(false, move |ctx| {
            ensure_queue(ctx, &ns, &q)?;
            ctx.conn
                .prepare_cached(
                    "UPDATE queue_state SET rate_count = ?3, rate_per_ms = ?4, tokens = NULL, tokens_at = NULL
                     WHERE ns = ?1 AND queue = ?2",
                )
                .db()?
                .execute((&*ns, &q, limit.map(|l| l.count), limit.map(|l| l.per_ms)))
                .db()?;
            ctx.wake_work();
            Ok(())
        })
        .await
    }

    async fn set_concurrency(&self, req: SetConcurrencyRequest) -> Result<()> {
        req.validate()?;
        let SetConcurrencyRequest { queue, max } = req;
        let sql = "UPDATE queue_state SET concurrency = ?3 WHERE ns = ?1 AND queue = ?2";
        self.update_queue(queue, sql, max.map_or(rusqlite::types::Value::Null, |m| i64::from(m).into())).await
    }

    async fn set_max_stalled(&self, req: SetMaxStalledRequest) -> Result<()> {
        req.validate()?;
        let SetMaxStalledRequest { queue, max } = req;
        let sql = "UPDATE queue_state SET max_stalled_count = ?3 WHERE ns = ?1 AND queue = ?2";
        self.update_queue(queue, sql, max.map_or(rusqlite::types::Value::Null, |m| i64::from(m).into())).await
    }

    async fn queue_config(&self, queue: &str) -> Result<QueueConfig> {
        let (ns, q) = (self.ns(), queue.to_string());
        self.read(move |conn| Ok(queue_row(conn, &ns, &q)?.config())).await
    }

    async fn purge_queue(&self, req: PurgeQueueRequest) -> Result<u64> {
        req.validate()?;
        let (ns, PurgeQueueRequest { queue: q, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let ids: Vec<String> = {
                let mut stmt = ctx
                    .conn
                    .prepare_cached(
                        "SELECT id FROM jobs WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6, 7)",
                    )
                    .db()?;
                let rows = stmt.query_map((&*ns, &q), |r| r.get(0)).db()?;
                rows.collect::<rusqlite::Result<_>>().db()?
            };
            let mut n = 0;
            for id in ids {
                let Some(st) = load_state(ctx.conn, &ns, &id)? else { continue };
                if matches!(st.status, JobStatus::Pending | JobStatus::Suspended | JobStatus::Waiting)
                    && fire(ctx, &ns, &st, &Event::Cancel, now, Extras::default())?.is_some()
                {
                    n += 1;
                }
            }
            Ok(n)
        })
        .await
    }

    async fn revoke_task(&self, task: &str) -> Result<()> {
        validate_name("task name", task)?;
        let (ns, t) = (self.ns(), task.to_string());
        self.write(false, move |ctx| {
            ctx.conn
                .prepare_cached("INSERT INTO revoked_tasks (ns, task) VALUES (?1, ?2) ON CONFLICT DO NOTHING")
                .db()?
                .execute((&*ns, &t))
                .db()?;
            Ok(())
        })
        .await
    }

    async fn unrevoke_task(&self, task: &str) -> Result<bool> {
        let (ns, t) = (self.ns(), task.to_string());
        self.write(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM revoked_tasks WHERE ns = ?1 AND task = ?2")
                .db()?
                .execute((&*ns, &t))
                .db()?;
            Ok(n > 0)
        })
        .await
    }

    async fn revoked_tasks(&self) -> Result<Vec<String>> {
        let ns = self.ns();
        self.read(move |conn| {
            let mut stmt =
                conn.prepare_cached("SELECT task FROM revoked_tasks WHERE ns = ?1 ORDER BY task").db()?;
            let rows = stmt.query_map([&*ns], |r| r.get(0)).db()?;
            rows.collect::<rusqlite::Result<_>>().db()
        })
        .await
    }

    async fn purge_completed(&self, req: PurgeCompletedRequest) -> Result<u64> {
        let (ns, PurgeCompletedRequest { cutoff_ms: cutoff }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let rows: Vec<Loaded> = {
                let mut stmt = ctx.conn.prepare_cached(&purge_completed_sql()).db()?;
                let rows = stmt.query_map((&*ns, cutoff), loaded_from_row).db()?;
                rows.collect::<rusqlite::Result<_>>().db()?
            };
            events_write::removed(ctx.conn, &ns, &rows, wall_clock_ms())?;
            for st in &rows {
                delete_job(ctx, &ns, &st.id, &st.queue, JobStatus::Completed)?;
            }
            Ok(rows.len() as u64)
        })
        .await
    }
}

/// Deletes a job row with its partials, dependency edges and the dedup record it holds,
/// keeping the counters right. A
/// running job gone frees its queue's concurrency and its group's fairness cap, so claimers
/// are woken.
pub(crate) fn delete_job(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    id: &str,
    queue: &str,
    status: JobStatus,
) -> Result<()> {
    let conn = ctx.conn;
    conn.prepare_cached("DELETE FROM jobs WHERE id = ?1").db()?.execute([id]).db()?;
    conn.prepare_cached("DELETE FROM job_partials WHERE job_id = ?1").db()?.execute([id]).db()?;
    conn.prepare_cached("DELETE FROM job_deps WHERE job_id = ?1").db()?.execute([id]).db()?;
    dedup::release_held(conn, ns, id)?;
    ctx.count_delta(ns, queue, status, -1);
    ctx.job_changed(id);
    if status == JobStatus::Running {
        ctx.wake_work();
    }
    Ok(())
}
