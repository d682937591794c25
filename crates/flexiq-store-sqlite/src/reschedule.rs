//! [`Reschedule`]: a new delay, promotion (one job or a queue's batch), a new priority and
//! LIFO placement.
//!
//! Each change is one write of the group commit: the job's status and `run_at` are read in the
//! same transaction as the UPDATE, and core's `plan_*` helpers decide what is written, so the
//! rules match every other store. Claims read `priority` and `run_at` straight from the claim
//! index, which SQLite keeps up to date with the row, so nothing else needs moving; a change to
//! a claimable job wakes waiting claimers, which also makes them look again for the next job
//! coming due. A LIFO `run_at` is negative, so it is due and sorts first in the same index.
//!
//! `promote_jobs` takes the soonest delayed jobs of a queue across all its priorities without
//! sorting the queue: the claim index orders each priority's rows by `run_at`, so it seeks each
//! priority that holds claimable rows in turn, reads at most `count` delayed rows of it (never
//! later than the latest one kept so far) and keeps the `count` soonest.

use flexiq_core::store::{
    plan_change_delay, plan_change_priority, plan_promote, ChangeDelayRequest, ChangePriorityRequest,
    PromoteJobsRequest, PromoteRequest, Reschedule,
};
use flexiq_core::{Error, JobId, JobStatus, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::error::SqlResultExt;
use crate::wait::NEXT_PRIORITY;
use crate::writer::WriteCtx;
use crate::SqliteStore;

/// A job's place in line: its row (`None` for an archived copy), status and `run_at`.
struct Place {
    rowid: Option<i64>,
    status: JobStatus,
    run_at: i64,
}

/// The delayed pending rows of one priority (`?3`) of a queue due after `?4` and by `?5`,
/// soonest first, at most `?6`.
pub(crate) const DELAYED_AT_PRIORITY: &str = "SELECT run_at, id, rowid FROM jobs
    WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6) AND priority = ?3 AND run_at > ?4 AND run_at <= ?5
      AND status = 0 ORDER BY run_at, id LIMIT ?6";

/// The status and `run_at` of job `id` of `ns`, from the hot table or the archive; `NotFound`
/// when it is in neither.
fn locate(conn: &Connection, ns: &str, id: &JobId) -> Result<Place> {
    let row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(Option<i64>, u8, i64)> {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    };
    let found = conn
        .prepare_cached("SELECT rowid, status, run_at FROM jobs WHERE id = ?1 AND ns = ?2")
        .db()?
        .query_row((id.as_str(), ns), row)
        .optional()
        .db()?;
    let found = match found {
        Some(f) => Some(f),
        None => conn
            .prepare_cached("SELECT NULL, status, run_at FROM archived_jobs WHERE id = ?1 AND ns = ?2")
            .db()?
            .query_row((id.as_str(), ns), row)
            .optional()
            .db()?,
    };
    let (rowid, code, run_at) = found.ok_or_else(|| Error::JobNotFound(id.clone()))?;
    Ok(Place { rowid, status: JobStatus::from_code(code)?, run_at })
}

/// Writes the planned `run_at` and `priority` (each when given) on the row of `place`.
fn write_place(
    ctx: &mut WriteCtx<'_>,
    id: &JobId,
    place: &Place,
    run_at: Option<i64>,
    priority: Option<i32>,
) -> Result<()> {
    let rowid = place.rowid.ok_or_else(|| {
        Error::backend(format!("job {id} is archived as {} and has no row to move", place.status))
    })?;
    ctx.conn
        .prepare_cached(
            "UPDATE jobs SET run_at = COALESCE(?2, run_at), priority = COALESCE(?3, priority) WHERE rowid = ?1",
        )
        .db()?
        .execute((rowid, run_at, priority))
        .db()?;
    if place.status.is_claimable() {
        ctx.wake_work();
    }
    ctx.job_changed(id.as_str());
    Ok(())
}

fn change_delay(ctx: &mut WriteCtx<'_>, ns: &str, req: &ChangeDelayRequest) -> Result<()> {
    let place = locate(ctx.conn, ns, &req.job_id)?;
    let run_at = plan_change_delay(req, place.status)?;
    write_place(ctx, &req.job_id, &place, Some(run_at), None)
}

fn promote(ctx: &mut WriteCtx<'_>, ns: &str, req: &PromoteRequest) -> Result<()> {
    let place = locate(ctx.conn, ns, &req.job_id)?;
    let run_at = plan_promote(req, place.status, place.run_at)?;
    write_place(ctx, &req.job_id, &place, Some(run_at), None)
}

fn change_priority(ctx: &mut WriteCtx<'_>, ns: &str, req: &ChangePriorityRequest) -> Result<()> {
    let place = locate(ctx.conn, ns, &req.job_id)?;
    let run_at = plan_change_priority(req, place.status, place.run_at)?;
    write_place(ctx, &req.job_id, &place, run_at, Some(req.priority))
}

/// The soonest `req.count` delayed pending jobs of the queue, as (run_at, id, rowid), soonest
/// first.
fn soonest_delayed(conn: &Connection, ns: &str, req: &PromoteJobsRequest) -> Result<Vec<(i64, String, i64)>> {
    let limit = req.count as usize;
    let mut kept: Vec<(i64, String, i64)> = Vec::new();
    let mut below = i64::MAX;
    loop {
        let p: Option<i64> = conn
            .prepare_cached(NEXT_PRIORITY)
            .db()?
            .query_row((ns, &req.queue, below), |r| r.get(0))
            .optional()
            .db()?;
        let Some(p) = p else { break };
        below = p;
        let latest = if kept.len() == limit { kept.last().map_or(i64::MAX, |k| k.0) } else { i64::MAX };
        let mut stmt = conn.prepare_cached(DELAYED_AT_PRIORITY).db()?;
        let rows = stmt
            .query_map((ns, &req.queue, p, req.now, latest, req.count), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .db()?;
        for row in rows {
            kept.push(row.db()?);
        }
        kept.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        kept.truncate(limit);
    }
    Ok(kept)
}

fn promote_jobs(ctx: &mut WriteCtx<'_>, ns: &str, req: &PromoteJobsRequest) -> Result<u64> {
    let due = soonest_delayed(ctx.conn, ns, req)?;
    let mut stmt = ctx.conn.prepare_cached("UPDATE jobs SET run_at = ?2 WHERE rowid = ?1").db()?;
    for (_, _, rowid) in &due {
        stmt.execute((rowid, req.now)).db()?;
    }
    drop(stmt);
    for (_, id, _) in &due {
        ctx.job_changed(id);
    }
    if !due.is_empty() {
        ctx.wake_work();
    }
    Ok(due.len() as u64)
}

#[async_trait::async_trait]
impl Reschedule for SqliteStore {
    async fn change_delay(&self, req: ChangeDelayRequest) -> Result<()> {
        req.validate()?;
        let ns = self.ns();
        self.write_small(false, move |ctx| change_delay(ctx, &ns, &req)).await
    }

    async fn promote(&self, req: PromoteRequest) -> Result<()> {
        let ns = self.ns();
        self.write_small(false, move |ctx| promote(ctx, &ns, &req)).await
    }

    async fn promote_jobs(&self, req: PromoteJobsRequest) -> Result<u64> {
        req.validate()?;
        let ns = self.ns();
        self.write(false, move |ctx| promote_jobs(ctx, &ns, &req)).await
    }

    async fn change_priority(&self, req: ChangePriorityRequest) -> Result<()> {
        req.validate()?;
        let ns = self.ns();
        self.write_small(false, move |ctx| change_priority(ctx, &ns, &req)).await
    }
}
