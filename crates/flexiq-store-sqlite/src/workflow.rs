//! [`Workflows`]: workflow stages as job rows, found by (run, stage).
//!
//! A stage's row is found through the partial unique index on (namespace, run, stage), which
//! also keeps a second live row per stage out; a run's rows through the partial index on
//! (namespace, run, created_at, id). Plain jobs carry no run, so neither index costs them
//! anything. Replacing a stage rewrites its row in place (same id and claim sequence, so the
//! replaced attempt's fence stops matching and its late ack is `Superseded`) and moves the
//! counters like any transition. The fair claim lives in `workflow_claim.rs`; acks followed by a
//! fair claim run both in one write, so they commit together (or not at all).

use flexiq_core::options::validate_name;
use flexiq_core::store::{
    placed_run_at, AckClaimFairReply, AckClaimFairRequest, CancelRunRequest, ClaimFairRequest,
    DeleteStagesRequest, UpsertStagesRequest, Workflows,
};
use flexiq_core::transition::Event;
use flexiq_core::{ClaimedJob, Error, Job, JobId, JobStatus, NewJob, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::apply::{fire, Extras};
use crate::control::delete_job;
use crate::error::SqlResultExt;
use crate::removal::delete_history;
use crate::row::{load_state, loaded_from_row, query_jobs, Loaded, JOB_COLS, STATE_COLS};
use crate::writer::WriteCtx;
use crate::{enqueue, workflow_claim, SqliteStore};

/// Stages in an upsert small enough to commit on the caller's thread.
const SMALL_UPSERT: usize = 64;

/// Acks before a fair claim few enough to commit on the caller's thread (as a plain ack batch).
const SMALL_ACKS_BEFORE_CLAIM: usize = 256;

/// The lookup of a stage's live row.
pub(crate) fn stage_sql() -> String {
    format!(
        "SELECT {STATE_COLS} FROM jobs WHERE ns = ?1 AND wf_run = ?2 AND wf_stage = ?3 AND wf_run IS NOT NULL"
    )
}

/// A run's rows in listing order.
pub(crate) fn run_jobs_sql() -> String {
    format!("SELECT {JOB_COLS} FROM jobs WHERE ns = ?1 AND wf_run = ?2 AND wf_run IS NOT NULL ORDER BY created_at, id")
}

/// A run's rows that have not started (pending, suspended, waiting).
pub(crate) const RUN_UNSTARTED: &str = "SELECT id FROM jobs
    WHERE ns = ?1 AND wf_run = ?2 AND wf_run IS NOT NULL AND status IN (0, 6, 7) ORDER BY created_at, id";

/// The in-place rewrite of a replaced stage: the new job's definition, and the state of a job
/// never claimed (no attempts, no stalls). The id, `created_at` and claim sequence stay.
const REPLACE: &str = "UPDATE jobs SET queue = ?2, task = ?3, payload = ?4, priority = ?5, status = ?6,
    attempt = 0, stall_count = 0, max_retries = ?7, backoff_base = ?8, backoff_max = ?9, run_at = ?10, started_at = NULL,
    heartbeat_at = NULL, finished_at = NULL, worker_id = NULL, result = NULL, last_error = NULL,
    unique_key = NULL, metadata = ?11, progress = NULL, timeout_ms = ?12, cancel_requested = 0,
    group_key = ?13, wf_version = ?14, has_deps = 0
    WHERE rowid = ?1";

pub(crate) fn stage_state(conn: &Connection, ns: &str, run: &str, stage: &str) -> Result<Option<Loaded>> {
    conn.prepare_cached(&stage_sql()).db()?.query_row((ns, run, stage), loaded_from_row).optional().db()
}

/// Rewrites the row `old` as the never-claimed job `j`, keeping its id, and moves its counters.
fn replace(ctx: &mut WriteCtx<'_>, ns: &str, old: &Loaded, j: &NewJob, now: i64) -> Result<()> {
    let conn = ctx.conn;
    let pending = JobStatus::Pending;
    conn.prepare_cached(REPLACE)
        .db()?
        .execute(rusqlite::params![
            old.rowid,
            j.queue,
            j.task,
            j.payload,
            j.priority,
            pending.code(),
            j.max_retries,
            j.backoff.base_ms,
            j.backoff.max_ms,
            placed_run_at(j.run_at, now),
            j.metadata,
            j.timeout_ms,
            j.group_key,
            j.workflow_version,
        ])
        .db()?;
    // A row enqueued with dependencies under a stage's name gives them up: a stage has none.
    conn.prepare_cached("DELETE FROM job_deps WHERE job_id = ?1").db()?.execute([&old.id]).db()?;
    ctx.count_delta(ns, &old.queue, old.status, -1);
    ctx.count_delta(ns, &j.queue, pending, 1);
    ctx.wake_work();
    ctx.job_changed(&old.id);
    Ok(())
}

/// Replaces the stages that have a row and inserts the rest, all in the caller's savepoint.
/// A dead stage's retry comes here too, so it revives the stage's row as an upsert would.
pub(crate) fn upsert(ctx: &mut WriteCtx<'_>, ns: &str, req: UpsertStagesRequest) -> Result<Vec<JobId>> {
    enqueue::refuse_revoked(ctx.conn, ns, &req.jobs)?;
    let mut out = Vec::with_capacity(req.jobs.len());
    let mut fresh: Vec<NewJob> = Vec::new();
    for j in req.jobs {
        let (Some(run), Some(stage)) = (j.workflow_run_id.as_deref(), j.workflow_stage_id.as_deref()) else {
            return Err(Error::invalid(format!("job {} names no workflow run and stage", j.id)));
        };
        match stage_state(ctx.conn, ns, run, stage)? {
            Some(old) => {
                replace(ctx, ns, &old, &j, req.now)?;
                out.push(JobId::from_trusted(old.id));
            }
            None => {
                out.push(j.id.clone());
                fresh.push(j);
            }
        }
    }
    if !fresh.is_empty() {
        let rows: Vec<(&NewJob, JobStatus)> = fresh.iter().map(|j| (j, JobStatus::Pending)).collect();
        enqueue::insert_rows(ctx.conn, ns, req.now, &rows)?;
        for j in &fresh {
            ctx.count_delta(ns, &j.queue, JobStatus::Pending, 1);
        }
        ctx.wake_work();
    }
    Ok(out)
}

/// Cancels the run's unstarted jobs through the state machine (dependents follow). A job of
/// the run cancelled as the dependent of another one counts too.
fn cancel_run(ctx: &mut WriteCtx<'_>, ns: &str, run: &str, now: i64) -> Result<u64> {
    let ids: Vec<String> = {
        let mut stmt = ctx.conn.prepare_cached(RUN_UNSTARTED).db()?;
        let rows = stmt.query_map((ns, run), |r| r.get(0)).db()?;
        rows.collect::<rusqlite::Result<_>>().db()?
    };
    let mut n = 0;
    for id in ids {
        let Some(st) = load_state(ctx.conn, ns, &id)? else { continue };
        let cancelled = match st.status {
            JobStatus::Pending | JobStatus::Suspended | JobStatus::Waiting => {
                fire(ctx, ns, &st, &Event::Cancel, now, Extras::default())?.is_some()
            }
            // Unstarted when listed: only this call's propagation cancelled it since.
            JobStatus::Cancelled => true,
            _ => false,
        };
        n += u64::from(cancelled);
    }
    Ok(n)
}

/// Deletes the rows of the run's stages with their history (errors, logs, partials, metric
/// rows). Their dead letters stay: retrying one inserts the stage anew.
fn delete_stages(ctx: &mut WriteCtx<'_>, ns: &str, run: &str, stages: &[String]) -> Result<u64> {
    let mut n = 0;
    for stage in stages {
        let Some(st) = stage_state(ctx.conn, ns, run, stage)? else { continue };
        delete_history(ctx.conn, &st.id)?;
        delete_job(ctx, ns, &st.id, &st.queue, st.status)?;
        n += 1;
    }
    Ok(n)
}

#[async_trait::async_trait]
impl Workflows for SqliteStore {
    async fn upsert_stages(&self, req: UpsertStagesRequest) -> Result<Vec<JobId>> {
        req.validate()?;
        if req.jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ns = self.ns();
        let small = req.jobs.len() <= SMALL_UPSERT;
        self.write_sized(false, small, move |ctx| upsert(ctx, &ns, req)).await
    }

    async fn claim_fair(&self, req: ClaimFairRequest) -> Result<Vec<ClaimedJob>> {
        req.validate()?;
        let ns = self.ns();
        self.write_small(true, move |ctx| workflow_claim::claim_fair(ctx, &ns, &req)).await
    }

    async fn ack_and_claim_fair(&self, req: AckClaimFairRequest) -> Result<AckClaimFairReply> {
        req.validate()?;
        let ns = self.ns();
        let AckClaimFairRequest { acks, claim } = req;
        let small = acks.len() <= SMALL_ACKS_BEFORE_CLAIM;
        self.write_sized(true, small, move |ctx| {
            let outcomes =
                if acks.is_empty() { Vec::new() } else { crate::jobs::ack_all(ctx, &ns, acks, claim.now)? };
            let claimed = workflow_claim::claim_fair(ctx, &ns, &claim)?;
            Ok(AckClaimFairReply { outcomes, claimed: Ok(claimed) })
        })
        .await
    }

    async fn cancel_run(&self, req: CancelRunRequest) -> Result<u64> {
        req.validate()?;
        let (ns, CancelRunRequest { run_id, now }) = (self.ns(), req);
        self.write(false, move |ctx| cancel_run(ctx, &ns, &run_id, now)).await
    }

    async fn delete_stages(&self, req: DeleteStagesRequest) -> Result<u64> {
        req.validate()?;
        if req.stage_ids.is_empty() {
            return Ok(0);
        }
        let (ns, DeleteStagesRequest { run_id, stage_ids }) = (self.ns(), req);
        // Queued with `needs_counts` so the batch's metric rows are written before the stages'
        // rows go (and with them their metric rows).
        self.write(true, move |ctx| delete_stages(ctx, &ns, &run_id, &stage_ids)).await
    }

    async fn jobs_of_run(&self, run_id: &str) -> Result<Vec<Job>> {
        validate_name("workflow_run_id", run_id)?;
        let (ns, run) = (self.ns(), run_id.to_string());
        self.read(move |conn| query_jobs(conn, &run_jobs_sql(), &[&&*ns, &run])).await
    }
}
