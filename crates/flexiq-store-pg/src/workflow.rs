//! [`Workflows`] for [`PgStore`]: stages upserted by (run, stage), run-wide cancel, delete and
//! listing; the fair claim lives in `workflow_claim.rs` and `workflow_claim_free.rs`, acks
//! followed by a fair claim in `workflow_ack_claim.rs`.
//!
//! The unique index `jobs_workflow_stage` (migration 6) holds a pair to one row, so an upsert
//! is one `INSERT ... ON CONFLICT DO UPDATE`: concurrent upserts of a new pair cannot both
//! insert, and a replaced row keeps its id and claim sequence. The job-count triggers see the
//! replacement as the status change it is. Ordinary enqueue refuses a pair that has a row
//! (`Conflict`, checked in its transaction by [`PgStore::refuse_taken_stages`]). Run-wide
//! statements go through `jobs_workflow_run` on (namespace, run, created_at, id); cancels are
//! decided by the state machine like every other status change, and deleted stages go the
//! way every removed job goes (`remove.rs`: with their history, their dependents freed).

use std::collections::{BTreeSet, HashMap};

use flexiq_core::store::{
    placed_run_at, AckClaimFairReply, AckClaimFairRequest, CancelRunRequest, ClaimFairRequest,
    DeleteStagesRequest, UpsertStagesRequest, Workflows,
};
use flexiq_core::transition::{transition, Event};
use flexiq_core::{ClaimedJob, Error, Job, JobId, NewJob, Result};
use uuid::Uuid;

use crate::apply::{Change, Effects};
use crate::db::{i64_of, jid, uid, Conn};
use crate::remove::{Report, Rows};
use crate::row::{job, loaded, state_cols, JOB_COLS};
use crate::store::PgStore;
use crate::wait::wall_ms;

/// What replacing a stage's row writes, as the conflict clause of an insert into `jobs AS j`
/// whose new row is `excluded`: the row keeps its id, creation time and claim sequence and
/// starts over (pending, attempt 0, no stalls, lease, result, error, cancel request or
/// dependencies) with the new row's fields. `upsert_stages` and the retry of a dead stage both replace so.
pub(crate) const REPLACE_STAGE: &str = "ON CONFLICT (namespace, workflow_run_id, workflow_stage_id) \
    WHERE workflow_run_id IS NOT NULL DO UPDATE SET \
      queue = excluded.queue, task = excluded.task, payload = excluded.payload, priority = excluded.priority, \
      status = 0, attempt = 0, max_retries = excluded.max_retries, backoff_base_ms = excluded.backoff_base_ms, \
      backoff_max_ms = excluded.backoff_max_ms, run_at = excluded.run_at, started_at = NULL, heartbeat_at = NULL, \
      finished_at = NULL, worker_id = NULL, result = NULL, last_error = NULL, unique_key = NULL, \
      metadata = excluded.metadata, progress = NULL, timeout_ms = excluded.timeout_ms, cancel_requested = false, \
      depends_on = '{}', group_key = excluded.group_key, workflow_version = excluded.workflow_version, \
      stall_count = 0";

/// Inserts the stages, replacing in place the row of a pair that has one.
fn upsert_sql() -> String {
    format!(
        "INSERT INTO {{S}}.jobs AS j (id, namespace, queue, task, payload, priority, status, max_retries, \
          backoff_base_ms, backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key, workflow_run_id, \
          workflow_stage_id, workflow_version) \
        SELECT u.id, $1, u.queue, u.task, u.payload, u.priority, 0, u.max_retries, u.bb, u.bm, $2, u.run_at, \
          u.timeout, u.metadata, u.grp, u.wr, u.ws, u.wv \
        FROM unnest($3::uuid[], $4::text[], $5::text[], $6::bytea[], $7::int4[], $8::int4[], $9::int8[], $10::int8[], \
          $11::int8[], $12::int8[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[]) \
          AS u(id, queue, task, payload, priority, max_retries, bb, bm, run_at, timeout, metadata, grp, wr, ws, wv) \
        {REPLACE_STAGE} \
        RETURNING j.id, j.workflow_run_id, j.workflow_stage_id, j.xmax <> 0"
    )
}

/// The (run, stage) pair of a job that names both: what the unique index holds to one row.
pub(crate) fn stage_pair(j: &NewJob) -> Option<(&str, &str)> {
    Some((j.workflow_run_id.as_deref()?, j.workflow_stage_id.as_deref()?))
}

/// The `Conflict` for enqueueing a pair whose row is job `existing`.
pub(crate) fn stage_taken(run: &str, stage: &str, existing: Uuid) -> Error {
    Error::Conflict(format!(
        "stage {stage} of run {run} already has job {}; upsert_stages replaces a stage's job",
        jid(existing)
    ))
}

/// Column arrays of the upsert.
#[derive(Default)]
struct StageCols {
    id: Vec<Uuid>,
    queue: Vec<String>,
    task: Vec<String>,
    payload: Vec<Vec<u8>>,
    priority: Vec<i32>,
    max_retries: Vec<i32>,
    bb: Vec<i64>,
    bm: Vec<i64>,
    run_at: Vec<i64>,
    timeout: Vec<Option<i64>>,
    metadata: Vec<Option<String>>,
    grp: Vec<Option<String>>,
    wr: Vec<String>,
    ws: Vec<String>,
    wv: Vec<Option<String>>,
}

impl StageCols {
    fn push(&mut self, j: NewJob, now: i64) -> Result<()> {
        let run_at = placed_run_at(j.run_at, now);
        let (Some(run), Some(stage)) = (j.workflow_run_id, j.workflow_stage_id) else {
            return Err(Error::invalid(format!("job {} names no workflow run and stage", j.id)));
        };
        self.id.push(uid(&j.id)?);
        self.priority.push(j.priority);
        self.max_retries.push(i32::try_from(j.max_retries).map_err(|_| {
            Error::invalid(format!("max_retries of stage {stage} of run {run} is too large"))
        })?);
        self.bb.push(i64_of("backoff base ms", j.backoff.base_ms)?);
        self.bm.push(i64_of("backoff max ms", j.backoff.max_ms)?);
        self.run_at.push(run_at);
        self.timeout.push(j.timeout_ms.map(|t| i64_of("timeout ms", t)).transpose()?);
        self.queue.push(j.queue);
        self.task.push(j.task);
        self.payload.push(j.payload);
        self.metadata.push(j.metadata);
        self.grp.push(j.group_key);
        self.wr.push(run);
        self.ws.push(stage);
        self.wv.push(j.workflow_version);
        Ok(())
    }
}

impl PgStore {
    /// `Conflict` when one of `stages` (job id, run, stage) names a pair that already has a row,
    /// or a pair an earlier one of them names. Runs inside the enqueue's transaction.
    pub(crate) async fn refuse_taken_stages(
        &self,
        c: &Conn,
        stages: &[(Uuid, String, String)],
    ) -> Result<()> {
        if stages.is_empty() {
            return Ok(());
        }
        let mut first: HashMap<(&str, &str), Uuid> = HashMap::with_capacity(stages.len());
        for (id, run, stage) in stages {
            if let Some(earlier) = first.insert((run, stage), *id) {
                return Err(stage_taken(run, stage, earlier));
            }
        }
        let runs: Vec<&str> = stages.iter().map(|s| s.1.as_str()).collect();
        let names: Vec<&str> = stages.iter().map(|s| s.2.as_str()).collect();
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT j.workflow_run_id, j.workflow_stage_id, j.id FROM {S}.jobs j \
             JOIN unnest($2::text[], $3::text[]) AS u(r, s) ON j.workflow_run_id = u.r AND j.workflow_stage_id = u.s \
             WHERE j.namespace = $1 ORDER BY j.workflow_run_id, j.workflow_stage_id LIMIT 1",
        );
        if let Some(r) = c.opt("enqueue", &sql, &[&ns, &runs, &names]).await? {
            return Err(stage_taken(r.get(0), r.get(1), r.get(2)));
        }
        Ok(())
    }

    async fn upsert(&self, req: UpsertStagesRequest) -> Result<Vec<JobId>> {
        req.validate()?;
        if req.jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ns: &str = &self.ns;
        let now = req.now;
        let tasks: Vec<String> =
            req.jobs.iter().map(|j| j.task.clone()).collect::<BTreeSet<_>>().into_iter().collect();
        let queues: Vec<String> =
            req.jobs.iter().map(|j| j.queue.clone()).collect::<BTreeSet<_>>().into_iter().collect();
        let mut cols = StageCols::default();
        for j in req.jobs {
            cols.push(j, now)?;
        }
        let what = "upsert workflow stages";
        let rev_sql =
            self.sql("SELECT task FROM {S}.revoked_tasks WHERE namespace = $1 AND task = ANY($2) LIMIT 1");
        let reg_sql = self.sql(
            "INSERT INTO {S}.queues (namespace, queue) SELECT $1, x FROM unnest($2::text[]) AS x ON CONFLICT DO NOTHING",
        );
        let unlink = self.sql("DELETE FROM {S}.job_deps WHERE job_id = ANY($1)");
        let c = self.conn().await?;
        let (ids, replaced) = c
            .tx(async {
                if let Some(r) = c.opt(what, &rev_sql, &[&ns, &tasks]).await? {
                    return Err(Error::TaskRevoked { task: r.get(0) });
                }
                c.exec(what, &reg_sql, &[&ns, &queues]).await?;
                let rows = c
                    .rows(
                        what,
                        &self.sql(&upsert_sql()),
                        &[
                            &ns,
                            &now,
                            &cols.id,
                            &cols.queue,
                            &cols.task,
                            &cols.payload,
                            &cols.priority,
                            &cols.max_retries,
                            &cols.bb,
                            &cols.bm,
                            &cols.run_at,
                            &cols.timeout,
                            &cols.metadata,
                            &cols.grp,
                            &cols.wr,
                            &cols.ws,
                            &cols.wv,
                        ],
                    )
                    .await?;
                let mut by_pair: HashMap<(String, String), Uuid> = HashMap::with_capacity(rows.len());
                let mut replaced = Vec::new();
                for r in &rows {
                    let id: Uuid = r.get(0);
                    if r.get::<_, bool>(3) {
                        replaced.push(id);
                    }
                    by_pair.insert((r.get(1), r.get(2)), id);
                }
                if !replaced.is_empty() {
                    // A replaced row starts over without the dependencies it may have had.
                    c.exec(what, &unlink, &[&replaced]).await?;
                }
                let mut ids = Vec::with_capacity(cols.id.len());
                for (run, stage) in cols.wr.iter().zip(&cols.ws) {
                    let id = by_pair.get(&(run.clone(), stage.clone())).copied().ok_or_else(|| {
                        Error::backend(format!("upsert of stage {stage} of run {run} returned no row"))
                    })?;
                    ids.push(jid(id));
                }
                Ok((ids, replaced))
            })
            .await?;
        // Waiters on a replaced job see it start over; idle workers see new work.
        self.announce(&Effects { work: true, jobs: replaced });
        Ok(ids)
    }

    async fn cancel_of_run(&self, req: CancelRunRequest) -> Result<u64> {
        req.validate()?;
        let ns: &str = &self.ns;
        let now = req.now;
        let sql = self.sql(&format!(
            "SELECT {} FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.workflow_run_id = $2 AND j.status IN (0, 6, 7) \
             ORDER BY j.id FOR UPDATE",
            state_cols("j")
        ));
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let n = c
            .tx(async {
                let rows = c.rows("cancel workflow run", &sql, &[&ns, &req.run_id]).await?;
                let mut changes = Vec::with_capacity(rows.len());
                for r in &rows {
                    let l = loaded(r, 0)?;
                    if let Ok(next) = transition(&l.state, &Event::Cancel, now) {
                        changes.push(Change::new(l, next));
                    }
                }
                self.write_and_commit(&c, &changes, now, false, &mut fx).await?;
                Ok(changes.len() as u64)
            })
            .await?;
        self.announce(&fx);
        Ok(n)
    }

    async fn delete_of_stages(&self, req: DeleteStagesRequest) -> Result<u64> {
        req.validate()?;
        if req.stage_ids.is_empty() {
            return Ok(0);
        }
        let ns: &str = &self.ns;
        let lock = self.sql(
            "SELECT id FROM {S}.jobs WHERE namespace = $1 AND workflow_run_id = $2 AND workflow_stage_id = ANY($3) \
             ORDER BY id FOR UPDATE",
        );
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let n = c
            .tx(async {
                let ids: Vec<Uuid> = c
                    .rows("delete workflow stages", &lock, &[&ns, &req.run_id, &req.stage_ids])
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                Ok(
                    self.remove_locked(&c, (Rows::Live, Report::Silent), &ids, wall_ms(), &mut fx)
                        .await?
                        .len() as u64,
                )
            })
            .await?;
        self.announce(&fx);
        Ok(n)
    }

    async fn of_run(&self, run_id: &str) -> Result<Vec<Job>> {
        flexiq_core::options::validate_name("workflow_run_id", run_id)?;
        let ns: &str = &self.ns;
        let sql = self.sql(&format!(
            "SELECT {JOB_COLS} FROM {{S}}.jobs WHERE namespace = $1 AND workflow_run_id = $2 ORDER BY created_at, id"
        ));
        let c = self.conn().await?;
        c.rows("list jobs of workflow run", &sql, &[&ns, &run_id]).await?.iter().map(job).collect()
    }
}

#[async_trait::async_trait]
impl Workflows for PgStore {
    async fn upsert_stages(&self, req: UpsertStagesRequest) -> Result<Vec<JobId>> {
        self.upsert(req).await
    }

    async fn claim_fair(&self, req: ClaimFairRequest) -> Result<Vec<ClaimedJob>> {
        self.claim_fair_jobs(req).await
    }

    async fn ack_and_claim_fair(&self, req: AckClaimFairRequest) -> Result<AckClaimFairReply> {
        self.ack_claim_fair_jobs(req).await
    }

    async fn cancel_run(&self, req: CancelRunRequest) -> Result<u64> {
        self.cancel_of_run(req).await
    }

    async fn delete_stages(&self, req: DeleteStagesRequest) -> Result<u64> {
        self.delete_of_stages(req).await
    }

    async fn jobs_of_run(&self, run_id: &str) -> Result<Vec<Job>> {
        self.of_run(run_id).await
    }
}
