//! Reading job rows: the column list, row to [`Job`] mapping, and the slice of a row the
//! state machine needs.

use std::collections::HashMap;

use flexiq_core::transition::JobState;
use flexiq_core::{Backoff, Fence, Job, JobId, JobStatus, Result};

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row};

use crate::error::SqlResultExt;

/// Every column a [`Job`] is built from, in [`job_from_row`] order (`has_deps` last).
pub(crate) const JOB_COLS: &str = "id, ns, queue, task, payload, priority, status, attempt, max_retries, \
    backoff_base, backoff_max, created_at, run_at, started_at, heartbeat_at, finished_at, worker_id, \
    result, last_error, unique_key, metadata, progress, timeout_ms, cancel_requested, group_key, \
    wf_run, wf_stage, wf_version, claim_seq, stall_count, has_deps";

/// How many columns [`JOB_COLS`] names.
pub(crate) const JOB_COL_COUNT: usize = 31;

fn status_at(r: &Row<'_>, i: usize) -> rusqlite::Result<JobStatus> {
    let code: u8 = r.get(i)?;
    JobStatus::from_code(code)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, Type::Integer, Box::new(e)))
}

/// Builds a job from [`JOB_COLS`] starting at column `o`; returns it with its `has_deps` flag
/// (dependencies are filled by [`fill_deps`]).
pub(crate) fn job_from_row(r: &Row<'_>, o: usize) -> rusqlite::Result<(Job, bool)> {
    let job = Job {
        id: JobId::from_trusted(r.get::<_, String>(o)?),
        namespace: r.get(o + 1)?,
        queue: r.get(o + 2)?,
        task: r.get(o + 3)?,
        payload: r.get(o + 4)?,
        priority: r.get(o + 5)?,
        status: status_at(r, o + 6)?,
        attempt: r.get(o + 7)?,
        max_retries: r.get(o + 8)?,
        backoff: Backoff { base_ms: r.get(o + 9)?, max_ms: r.get(o + 10)? },
        created_at: r.get(o + 11)?,
        run_at: r.get(o + 12)?,
        started_at: r.get(o + 13)?,
        heartbeat_at: r.get(o + 14)?,
        finished_at: r.get(o + 15)?,
        worker_id: r.get(o + 16)?,
        result: r.get(o + 17)?,
        last_error: r.get(o + 18)?,
        unique_key: r.get(o + 19)?,
        metadata: r.get(o + 20)?,
        progress: r.get(o + 21)?,
        timeout_ms: r.get(o + 22)?,
        cancel_requested: r.get(o + 23)?,
        depends_on: Vec::new(),
        group_key: r.get(o + 24)?,
        workflow_run_id: r.get(o + 25)?,
        workflow_stage_id: r.get(o + 26)?,
        workflow_version: r.get(o + 27)?,
        claim_seq: r.get(o + 28)?,
        stall_count: r.get(o + 29)?,
    };
    Ok((job, r.get(o + 30)?))
}

/// Fills `depends_on` of the jobs flagged as having dependencies.
pub(crate) fn fill_deps(conn: &Connection, rows: Vec<(Job, bool)>) -> Result<Vec<Job>> {
    let mut out = Vec::with_capacity(rows.len());
    for (mut job, has_deps) in rows {
        if has_deps {
            job.depends_on = deps_of(conn, job.id.as_str())?;
        }
        out.push(job);
    }
    Ok(out)
}

/// The ids a job depends on, sorted.
pub(crate) fn deps_of(conn: &Connection, id: &str) -> Result<Vec<JobId>> {
    let mut stmt =
        conn.prepare_cached("SELECT dep_id FROM job_deps WHERE job_id = ?1 ORDER BY dep_id").db()?;
    let rows = stmt.query_map([id], |r| r.get::<_, String>(0).map(JobId::from_trusted)).db()?;
    rows.collect::<rusqlite::Result<Vec<_>>>().db()
}

/// A job of `ns` by id from the hot table, or from the archive once it was moved there.
pub(crate) fn load_job(conn: &Connection, ns: &str, id: &str) -> Result<Option<Job>> {
    for table in ["jobs", "archived_jobs"] {
        let sql = format!("SELECT {JOB_COLS} FROM {table} WHERE id = ?1 AND ns = ?2");
        let row =
            conn.prepare_cached(&sql).db()?.query_row((id, ns), |r| job_from_row(r, 0)).optional().db()?;
        if let Some(row) = row {
            return Ok(fill_deps(conn, vec![row])?.pop());
        }
    }
    Ok(None)
}

/// Runs a job query and maps every row (dependencies filled).
pub(crate) fn query_jobs(conn: &Connection, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Result<Vec<Job>> {
    let mut stmt = conn.prepare_cached(sql).db()?;
    let rows = stmt.query_map(params, |r| job_from_row(r, 0)).db()?;
    let rows = rows.collect::<rusqlite::Result<Vec<_>>>().db()?;
    fill_deps(conn, rows)
}

/// The slice of a job row a transition reads, plus what applying it needs.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    /// The row's rowid: the transition's UPDATE finds the row by it without a second seek of
    /// the id index.
    pub(crate) rowid: i64,
    /// The job id.
    pub(crate) id: String,
    /// Its queue (for the counters).
    pub(crate) queue: String,
    /// Its task (for metrics).
    pub(crate) task: String,
    /// Current status.
    pub(crate) status: JobStatus,
    /// Attempts so far.
    pub(crate) attempt: u32,
    /// Retry budget.
    pub(crate) max_retries: u32,
    /// Start of the current attempt (Unix ms).
    pub(crate) started_at: Option<i64>,
    /// Claims so far (the fence's claim sequence while running).
    pub(crate) claim_seq: u64,
    /// Lapsed leases recovered so far.
    pub(crate) stall_count: u32,
    /// Backoff policy.
    pub(crate) backoff: Backoff,
    /// Whether other jobs depend on it.
    pub(crate) has_dependents: bool,
    /// Whether cooperative cancel was requested.
    pub(crate) cancel_requested: bool,
}

/// Columns of [`Loaded`], in [`loaded_from_row`] order.
pub(crate) const STATE_COLS: &str = "id, queue, task, status, attempt, max_retries, started_at, \
    backoff_base, backoff_max, has_dependents, cancel_requested, rowid, claim_seq, stall_count";

/// Builds a [`Loaded`] from [`STATE_COLS`] at column 0.
pub(crate) fn loaded_from_row(r: &Row<'_>) -> rusqlite::Result<Loaded> {
    Ok(Loaded {
        id: r.get(0)?,
        queue: r.get(1)?,
        task: r.get(2)?,
        status: status_at(r, 3)?,
        attempt: r.get(4)?,
        max_retries: r.get(5)?,
        started_at: r.get(6)?,
        backoff: Backoff { base_ms: r.get(7)?, max_ms: r.get(8)? },
        has_dependents: r.get(9)?,
        cancel_requested: r.get(10)?,
        rowid: r.get(11)?,
        claim_seq: r.get(12)?,
        stall_count: r.get(13)?,
    })
}

/// The ack lookup: a job's state by id.
pub(crate) fn state_sql() -> String {
    format!("SELECT {STATE_COLS} FROM jobs WHERE id = ?1 AND ns = ?2")
}

/// Loads the state of job `id` in `ns` from the hot table.
pub(crate) fn load_state(conn: &Connection, ns: &str, id: &str) -> Result<Option<Loaded>> {
    conn.prepare_cached(&state_sql()).db()?.query_row((id, ns), loaded_from_row).optional().db()
}

/// The state lookup of a list of ids (`?2`, a JSON array) in `?1`; the `+` keeps the planner
/// on the id index rather than scanning the namespace.
pub(crate) fn states_sql() -> String {
    format!("SELECT {STATE_COLS} FROM jobs WHERE id IN (SELECT value FROM json_each(?2)) AND +ns = ?1")
}

/// Loads the states of jobs `ids` in `ns` from the hot table with one statement, by id.
pub(crate) fn load_states(conn: &Connection, ns: &str, ids: &[&str]) -> Result<HashMap<String, Loaded>> {
    let list =
        serde_json::to_string(ids).map_err(|e| flexiq_core::Error::backend(format!("job id list: {e}")))?;
    let mut stmt = conn.prepare_cached(&states_sql()).db()?;
    let rows = stmt.query_map((ns, &list), loaded_from_row).db()?;
    let mut out = HashMap::with_capacity(ids.len());
    for r in rows {
        let l = r.db()?;
        out.insert(l.id.clone(), l);
    }
    Ok(out)
}

impl Loaded {
    /// Whether `fence` is the current claim's: running, with the same attempt, start and
    /// claim sequence. Fenced writes that bypass the state machine (heartbeat, progress)
    /// check this.
    pub(crate) fn holds(&self, fence: Fence) -> bool {
        self.status == JobStatus::Running
            && self.attempt == fence.attempt
            && self.started_at == Some(fence.started_at)
            && self.claim_seq == fence.claim_seq
    }

    /// The state machine's view.
    pub(crate) fn job_state(&self) -> JobState {
        JobState {
            id: self.id.clone(),
            status: self.status,
            attempt: self.attempt,
            max_retries: self.max_retries,
            started_at: self.started_at,
            claim_seq: self.claim_seq,
            stall_count: self.stall_count,
            backoff: self.backoff,
        }
    }
}

/// Whether a job id exists in `ns` (hot table or archive).
pub(crate) fn job_exists(conn: &Connection, ns: &str, id: &str) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM jobs WHERE id = ?1 AND ns = ?2)
             OR EXISTS(SELECT 1 FROM archived_jobs WHERE id = ?1 AND ns = ?2)",
    )
    .db()?
    .query_row((id, ns), |r| r.get(0))
    .db()
}
