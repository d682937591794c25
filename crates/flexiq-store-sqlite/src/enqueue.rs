//! Enqueue on the writer thread: revocation, unique keys, dedup keys, dependencies, the
//! admission cap.
//!
//! Where a job with dependencies starts is `flows::standing`'s verdict over its edges (each
//! dependency's status, read in this transaction, and the edge's policy); for plain edges that
//! is [`flexiq_core::start::starting`]'s verdict. A failed dependency's cancellation (or, under
//! `fail_parent`, the job's failure) is its follow-up event, applied through the same
//! transition path as every other status change. A job with a dedup key does what
//! [`flexiq_core::dedup::plan_dedup`] says over the key's record (see `dedup.rs`), jobs taken
//! in batch order, so a later job of the batch sees an earlier one's record.
//! An enqueue absorbed by an existing job (a live unique key, or a dedup key whose plan keeps
//! the holder) writes `deduplicated` on the job that absorbed it.
//! A workflow stage holds at most one live row: a job naming a (run, stage) pair that already
//! has one is `Conflict`, checked before the insert in the same transaction. A LIFO job (a
//! negative `run_at`) is stamped with the enqueue's own time, so the latest enqueued is
//! claimed first.

use std::collections::HashMap;

use flexiq_core::dedup::{plan_dedup, DedupPlan};
use flexiq_core::flow::EdgePolicy;
use flexiq_core::store::{placed_run_at, EnqueueRequest, Enqueued};
use flexiq_core::{Error, JobId, JobStatus, NewJob, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::apply::{fire, Extras};
use crate::dedup;
use crate::error::{is_unique_violation, map, SqlResultExt};
use crate::events_write;
use crate::flows::{self, Edge, Standing};
use crate::row::load_state;
use crate::writer::WriteCtx;

const INSERT_HEAD: &str = "INSERT INTO jobs (id, ns, queue, task, payload, priority, status, attempt,
    max_retries, backoff_base, backoff_max, created_at, run_at, unique_key, metadata, timeout_ms, has_deps,
    group_key, wf_run, wf_stage, wf_version) VALUES ";
const INSERT_ROW: &str = "(?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// Rows per multi-row INSERT: fewer statements per job on the bulk path.
const ROWS_PER_INSERT: usize = 32;

fn insert_sql(rows: usize) -> String {
    let mut sql = String::from(INSERT_HEAD);
    for i in 0..rows {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(INSERT_ROW);
    }
    sql
}

/// Inserts `rows` with as few statements as possible; a duplicate id is `Conflict` naming it.
pub(crate) fn insert_rows(
    conn: &Connection,
    ns: &str,
    now: i64,
    rows: &[(&NewJob, JobStatus)],
) -> Result<()> {
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let mut stmt = conn.prepare_cached(&insert_sql(chunk.len())).db()?;
        let mut i = 0;
        let mut bind = |v: &dyn rusqlite::ToSql| -> Result<()> {
            i += 1;
            stmt.raw_bind_parameter(i, v).db()
        };
        for (j, status) in chunk {
            bind(&j.id.as_str())?;
            bind(&ns)?;
            bind(&j.queue)?;
            bind(&j.task)?;
            bind(&j.payload)?;
            bind(&j.priority)?;
            bind(&status.code())?;
            bind(&j.max_retries)?;
            bind(&j.backoff.base_ms)?;
            bind(&j.backoff.max_ms)?;
            bind(&now)?;
            bind(&placed_run_at(j.run_at, now))?;
            bind(&j.unique_key)?;
            bind(&j.metadata)?;
            bind(&j.timeout_ms)?;
            bind(&!j.depends_on.is_empty())?;
            bind(&j.group_key)?;
            bind(&j.workflow_run_id)?;
            bind(&j.workflow_stage_id)?;
            bind(&j.workflow_version)?;
        }
        if let Err(e) = stmt.raw_execute() {
            if is_unique_violation(&e) {
                for (j, _) in chunk {
                    if exists(conn, &j.id)? || chunk.iter().filter(|(k, _)| k.id == j.id).count() > 1 {
                        return Err(Error::Conflict(format!("job {} already exists", j.id)));
                    }
                }
            }
            return Err(map(e));
        }
    }
    Ok(())
}

fn exists(conn: &Connection, id: &JobId) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM jobs WHERE id = ?1)")
        .db()?
        .query_row([id.as_str()], |r| r.get(0))
        .db()
}

fn revoked(conn: &Connection, ns: &str, task: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM revoked_tasks WHERE ns = ?1 AND task = ?2)")
        .db()?
        .query_row((ns, task), |r| r.get(0))
        .db()
}

fn any_revoked(conn: &Connection, ns: &str) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM revoked_tasks WHERE ns = ?1)")
        .db()?
        .query_row([ns], |r| r.get(0))
        .db()
}

/// `TaskRevoked` naming the first revoked task of the batch, before anything is written, so
/// a batch with one revoked task is refused whole. Retries of dead letters and replays enqueue
/// through here too.
pub(crate) fn refuse_revoked(conn: &Connection, ns: &str, jobs: &[NewJob]) -> Result<()> {
    if !any_revoked(conn, ns)? {
        return Ok(());
    }
    let mut checked: Vec<&str> = Vec::new();
    for j in jobs {
        if checked.contains(&j.task.as_str()) {
            continue;
        }
        if revoked(conn, ns, &j.task)? {
            return Err(Error::TaskRevoked { task: j.task.clone() });
        }
        checked.push(&j.task);
    }
    Ok(())
}

/// The live job of `ns` holding unique key `key`, if any.
pub(crate) fn live_unique(conn: &Connection, ns: &str, key: &str) -> Result<Option<String>> {
    conn.prepare_cached(
        "SELECT id FROM jobs WHERE ns = ?1 AND unique_key = ?2
           AND unique_key IS NOT NULL AND status IN (0, 1, 6, 7)",
    )
    .db()?
    .query_row((ns, key), |r| r.get(0))
    .optional()
    .db()
}

/// The live job holding stage `?3` of workflow run `?2` in `?1`.
pub(crate) const STAGE_HOLDER: &str =
    "SELECT id FROM jobs WHERE ns = ?1 AND wf_run = ?2 AND wf_stage = ?3 AND wf_run IS NOT NULL";

/// The live job holding stage `stage` of workflow run `run` in `ns`, if any.
fn stage_holder(conn: &Connection, ns: &str, run: &str, stage: &str) -> Result<Option<String>> {
    conn.prepare_cached(STAGE_HOLDER).db()?.query_row((ns, run, stage), |r| r.get(0)).optional().db()
}

/// `Conflict` for a job naming a stage that already has a row (only `upsert_stages` replaces).
fn stage_taken(run: &str, stage: &str, holder: &str) -> Error {
    Error::Conflict(format!(
        "stage {stage} of workflow run {run} already has job {holder}: only enqueue_parallel (upsert_stages) replaces it"
    ))
}

/// The status of dependency `id` of `ns`, from the hot table or the archive.
pub(crate) fn dep_status(conn: &Connection, ns: &str, id: &JobId) -> Result<Option<JobStatus>> {
    let code: Option<u8> = conn
        .prepare_cached(
            "SELECT status FROM jobs WHERE id = ?1 AND ns = ?2
             UNION ALL SELECT status FROM archived_jobs WHERE id = ?1 AND ns = ?2 LIMIT 1",
        )
        .db()?
        .query_row((id.as_str(), ns), |r| r.get(0))
        .optional()
        .db()?;
    code.map(JobStatus::from_code).transpose()
}

/// `j` with one more edge, on the running `holder` of its dedup key, under
/// `ignore_dependency`: it waits for the holder and runs however the holder ends.
fn queued_behind(j: &NewJob, holder: JobId) -> NewJob {
    let mut behind = j.clone();
    if behind.dep_policies.is_empty() {
        behind.dep_policies = vec![EdgePolicy::CancelDependent; behind.depends_on.len()];
    }
    behind.depends_on.push(holder);
    behind.dep_policies.push(EdgePolicy::IgnoreDependency);
    behind
}

/// Inserts job `j` alone where its edges put it ([`flows::standing`] over its dependencies'
/// statuses, read here), with its edges and their policies; a dependency that already failed
/// under a policy ending the job is its follow-up event, through the state machine.
fn insert_one(ctx: &mut WriteCtx<'_>, ns: &str, j: &NewJob, now: i64) -> Result<()> {
    let conn: &Connection = ctx.conn;
    let mut edges = Vec::with_capacity(j.depends_on.len());
    for (i, d) in j.depends_on.iter().enumerate() {
        let status = dep_status(conn, ns, d)?.ok_or_else(|| {
            Error::invalid(format!("dependency {d} of job {} not found in namespace {ns}", j.id))
        })?;
        let policy = j.dep_policies.get(i).copied().unwrap_or_default();
        edges.push(Edge { dep: d.to_string(), policy, status: Some(status) });
    }
    let standing = flows::standing(conn, ns, &edges)?;
    let status = standing.insert_status();
    insert_rows(conn, ns, now, &[(j, status)])?;
    let kept: Vec<&Edge> = edges.iter().filter(|e| !e.dropped()).collect();
    let mut edge =
        conn.prepare_cached("INSERT INTO job_deps (job_id, dep_id, policy) VALUES (?1, ?2, ?3)").db()?;
    let mut flag = conn
        .prepare_cached("UPDATE jobs SET has_dependents = 1 WHERE id = ?1 AND has_dependents = 0")
        .db()?;
    for e in &kept {
        edge.execute((j.id.as_str(), &e.dep, e.policy.code())).db()?;
        flag.execute([&e.dep]).db()?;
    }
    if kept.len() != edges.len() {
        flows::unflag_deps(conn, j.id.as_str())?;
    }
    ctx.count_delta(ns, &j.queue, status, 1);
    if status == JobStatus::Pending {
        ctx.wake_work();
    }
    if let Standing::Fails(event) = standing {
        if let Some(st) = load_state(conn, ns, j.id.as_str())? {
            fire(ctx, ns, &st, &event, now, Extras::default())?;
        }
    }
    Ok(())
}

/// Inserts the batch (the caller's savepoint undoes everything on error).
pub(crate) fn enqueue(ctx: &mut WriteCtx<'_>, ns: &str, req: &EnqueueRequest) -> Result<Vec<Enqueued>> {
    let conn: &Connection = ctx.conn;
    refuse_revoked(conn, ns, &req.jobs)?;
    let mut before: Vec<(String, i64)> = Vec::new();
    if req.max_pending.is_some() {
        for j in &req.jobs {
            if !before.iter().any(|(q, _)| *q == j.queue) {
                before.push((j.queue.clone(), ctx.count(ns, &j.queue, JobStatus::Pending)?));
            }
        }
    }
    let mut out = Vec::with_capacity(req.jobs.len());
    let mut buffered: Vec<(&NewJob, JobStatus)> = Vec::new();
    // Stages this batch inserts, beside those already in the table: rows still buffered are
    // not visible to `stage_holder` yet.
    let mut stages: HashMap<(&str, &str), &str> = HashMap::new();
    for j in &req.jobs {
        if let Some(key) = &j.unique_key {
            if let Some(id) = live_unique(conn, ns, key)? {
                events_write::deduplicated(conn, ns, &id, key, req.now)?;
                out.push(Enqueued { id: JobId::from_trusted(id), created: false });
                continue;
            }
        }
        // A dedup key is decided against its record as this write left it, so rows still
        // buffered (whose holders the record may name) go in first.
        let mut taken = None;
        let mut behind = None;
        if let Some(d) = &j.dedup {
            insert_rows(conn, ns, req.now, &buffered)?;
            buffered.clear();
            // A free key is taken at once: with no record, every mode inserts.
            let free = dedup::take_free(conn, ns, &d.id, j, d.expires_at(req.now))?;
            let hold = if free { None } else { dedup::hold(conn, ns, &d.id)? };
            match plan_dedup(d, hold.as_ref(), req.now) {
                DedupPlan::Insert { .. } if free => {}
                DedupPlan::Insert { expires_at } => taken = Some(expires_at),
                DedupPlan::Ignore { holder, extend_to, replace } => {
                    dedup::keep(ctx, ns, j, &holder, extend_to, replace, req.now)?;
                    events_write::deduplicated(conn, ns, holder.as_str(), &d.id, req.now)?;
                    out.push(Enqueued { id: holder, created: false });
                    continue;
                }
                DedupPlan::InsertBehind { holder } => {
                    taken = Some(d.expires_at(req.now));
                    behind = Some(holder);
                }
            }
        }
        if let (Some(run), Some(stage)) = (j.workflow_run_id.as_deref(), j.workflow_stage_id.as_deref()) {
            if let Some(holder) = stages.get(&(run, stage)) {
                return Err(stage_taken(run, stage, holder));
            }
            if let Some(holder) = stage_holder(conn, ns, run, stage)? {
                return Err(stage_taken(run, stage, &holder));
            }
            stages.insert((run, stage), j.id.as_str());
        }
        out.push(Enqueued { id: j.id.clone(), created: true });
        // No dependencies: the row goes in `pending` with the batch.
        if j.depends_on.is_empty() && j.unique_key.is_none() && j.dedup.is_none() {
            ctx.count_delta(ns, &j.queue, JobStatus::Pending, 1);
            ctx.wake_work();
            buffered.push((j, JobStatus::Pending));
            if buffered.len() == ROWS_PER_INSERT {
                insert_rows(conn, ns, req.now, &buffered)?;
                buffered.clear();
            }
            continue;
        }
        insert_rows(conn, ns, req.now, &buffered)?;
        buffered.clear();
        match behind {
            Some(holder) => insert_one(ctx, ns, &queued_behind(j, holder), req.now)?,
            None => insert_one(ctx, ns, j, req.now)?,
        }
        if let (Some(d), Some(expires_at)) = (&j.dedup, taken) {
            dedup::take(conn, ns, &d.id, j, expires_at)?;
        }
    }
    insert_rows(conn, ns, req.now, &buffered)?;
    if let Some(cap) = req.max_pending {
        for (queue, pending) in before {
            let after = ctx.count(ns, &queue, JobStatus::Pending)?;
            if after > pending && after > i64::try_from(cap).unwrap_or(i64::MAX) {
                return Err(Error::QueueFull { queue, pending: pending.max(0) as u64, max_pending: cap });
            }
        }
    }
    Ok(out)
}
