//! Writing decided transitions: one batched UPDATE plus the side effects the state machine
//! asks for (error rows, dead letters, metric rows), then what it does to the dependents: the
//! ones it releases, and those its failure reaches under each edge's policy (see `flows.rs`).
//! Every status change in this crate is decided by `flexiq_core::transition` on rows loaded
//! under lock, and written here.
//!
//! Statements are prepared first and then sent together (optionally with `COMMIT`), so a batch
//! of any size costs one round trip when no dependents are involved.

use std::future::Future;
use std::pin::Pin;

use flexiq_core::transition::Next;
use flexiq_core::{JobStatus, Result};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::db::Conn;
use crate::error;
use crate::row::{code, job_cols, Loaded};
use crate::store::PgStore;

/// One decided transition, ready to write.
pub(crate) struct Change {
    /// The job as loaded under lock.
    pub(crate) before: Loaded,
    /// What the state machine decided.
    pub(crate) next: Next,
    /// `Some(bytes)` replaces the stored result.
    pub(crate) result: Option<Option<Vec<u8>>>,
    /// The claiming worker (claims only).
    pub(crate) worker: Option<String>,
}

impl Change {
    pub(crate) fn new(before: Loaded, next: Next) -> Change {
        Change { before, next, result: None, worker: None }
    }
}

/// What committed changes should announce.
#[derive(Default)]
pub(crate) struct Effects {
    /// Some job became (or may become) claimable.
    pub(crate) work: bool,
    /// Jobs whose status changed.
    pub(crate) jobs: Vec<Uuid>,
}

impl Effects {
    pub(crate) fn note(&mut self, changes: &[Change]) {
        for ch in changes {
            self.jobs.push(ch.before.id);
            if matches!(ch.next.status, JobStatus::Pending | JobStatus::Suspended) {
                self.work = true;
            }
        }
    }
}

type Send<'a> = Pin<Box<dyn Future<Output = Result<u64>> + std::marker::Send + 'a>>;

const UPDATE: &str = "UPDATE {S}.jobs AS j SET status = u.status, attempt = u.attempt, \
    run_at = coalesce(u.run_at, j.run_at), started_at = coalesce(u.started_at, j.started_at), \
    finished_at = u.finished_at, last_error = coalesce(u.last_error, j.last_error), \
    worker_id = CASE WHEN u.clear_lease THEN NULL ELSE coalesce(u.worker, j.worker_id) END, \
    heartbeat_at = CASE WHEN u.clear_lease OR u.started_at IS NOT NULL THEN NULL ELSE j.heartbeat_at END, \
    result = CASE WHEN u.set_result THEN u.result ELSE j.result END, \
    cancel_requested = j.cancel_requested AND NOT u.clear_cancel, \
    claim_seq = coalesce(u.claim_seq, j.claim_seq), stall_count = coalesce(u.stall_count, j.stall_count) \
    FROM unnest($1::uuid[], $2::int2[], $3::int4[], $4::int8[], $5::int8[], $6::int8[], $7::text[], \
    $8::bool[], $9::text[], $10::bool[], $11::bytea[], $12::bool[], $13::int8[], $14::int4[]) \
    AS u(id, status, attempt, run_at, started_at, finished_at, last_error, clear_lease, worker, set_result, result, \
    clear_cancel, claim_seq, stall_count) \
    WHERE j.id = u.id";

const ERRORS: &str = "INSERT INTO {S}.job_errors (id, namespace, job_id, attempt, error, failed_at) \
    SELECT u.id, $1, u.job_id, u.attempt, u.error, $2 \
    FROM unnest($3::uuid[], $4::uuid[], $5::int4[], $6::text[]) AS u(id, job_id, attempt, error)";

const DEAD: &str = "INSERT INTO {S}.dead_letters (id, namespace, original_job_id, queue, task_name, payload, \
    error, retry_count, failed_at, metadata, priority, max_retries, backoff_base_ms, backoff_max_ms, timeout_ms, group_key, \
    workflow_run_id, workflow_stage_id, workflow_version) \
    SELECT u.id, j.namespace, j.id, j.queue, j.task, j.payload, j.last_error, j.attempt, $1, j.metadata, \
    j.priority, j.max_retries, j.backoff_base_ms, j.backoff_max_ms, j.timeout_ms, j.group_key, \
    j.workflow_run_id, j.workflow_stage_id, j.workflow_version \
    FROM unnest($2::uuid[], $3::uuid[]) AS u(id, job_id) JOIN {S}.jobs j ON j.id = u.job_id";

const METRICS: &str = "INSERT INTO {S}.task_metrics (namespace, job_id, task, queue, attempt, success, duration_ms, recorded_at) \
    SELECT $1, u.job_id, u.task, u.queue, u.attempt, u.success, u.duration, $2 \
    FROM unnest($3::uuid[], $4::text[], $5::text[], $6::int4[], $7::bool[], $8::int8[]) \
    AS u(job_id, task, queue, attempt, success, duration)";

impl PgStore {
    /// Writes `changes` and their row side effects; sends `COMMIT` in the same flight when
    /// `commit` is set. Returns the updated job rows when `returning` is set.
    pub(crate) async fn write(
        &self,
        c: &Conn,
        changes: &[Change],
        now: i64,
        returning: bool,
        commit: bool,
    ) -> Result<Vec<Row>> {
        if changes.is_empty() {
            if commit {
                c.commit().await?;
            }
            return Ok(Vec::new());
        }
        let n = changes.len();
        let (mut ids, mut status, mut attempt) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut run_at, mut started, mut finished) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut last_error, mut clear_lease, mut worker) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut set_result, mut result, mut clear_cancel) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let mut claim_seq: Vec<Option<i64>> = Vec::with_capacity(n);
        let mut stall_count: Vec<Option<i32>> = Vec::with_capacity(n);
        let (mut e_ids, mut e_jobs, mut e_attempts, mut e_texts) = (vec![], vec![], vec![], vec![]);
        let (mut d_ids, mut d_jobs) = (vec![], vec![]);
        let (mut m_jobs, mut m_tasks, mut m_queues, mut m_attempts, mut m_ok, mut m_dur) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for ch in changes {
            let nx = &ch.next;
            ids.push(ch.before.id);
            status.push(code(nx.status));
            attempt.push(nx.attempt as i32);
            run_at.push(nx.run_at);
            started.push(nx.started_at);
            finished.push(nx.finished_at);
            last_error.push(nx.last_error.clone());
            clear_lease.push(nx.clear_lease);
            worker.push(ch.worker.clone());
            set_result.push(ch.result.is_some());
            result.push(ch.result.clone().flatten());
            clear_cancel.push(nx.clear_cancel_request);
            claim_seq.push(nx.claim_seq.map(|q| q.min(i64::MAX as u64) as i64));
            stall_count.push(nx.stall_count.map(|s| s.min(i32::MAX as u32) as i32));
            let ended_attempt = ch.before.state.attempt as i32;
            if let Some(text) = &nx.error_record {
                e_ids.push(new_uuid());
                e_jobs.push(ch.before.id);
                e_attempts.push(ended_attempt);
                e_texts.push(text.clone());
            }
            if nx.dead_letter {
                d_ids.push(new_uuid());
                d_jobs.push(ch.before.id);
            }
            if let Some(ok) = nx.metric {
                m_jobs.push(ch.before.id);
                m_tasks.push(ch.before.task.clone());
                m_queues.push(ch.before.queue.clone());
                m_attempts.push(ended_attempt);
                m_ok.push(ok);
                m_dur.push(ch.before.state.started_at.map(|s| (now - s).max(0)).unwrap_or(0));
            }
        }
        let mut upd_sql = self.sql(UPDATE);
        if returning {
            upd_sql.push_str(" RETURNING ");
            upd_sql.push_str(&job_cols("j"));
        }
        let what = "write job changes";
        let upd_st = c.prep(what, &upd_sql).await?;
        let err_st = if e_ids.is_empty() { None } else { Some(c.prep(what, &self.sql(ERRORS)).await?) };
        let dead_st = if d_ids.is_empty() { None } else { Some(c.prep(what, &self.sql(DEAD)).await?) };
        let met_st = if m_jobs.is_empty() { None } else { Some(c.prep(what, &self.sql(METRICS)).await?) };
        let ns: &str = &self.ns;
        let upd_params: [&(dyn ToSql + Sync); 14] = [
            &ids,
            &status,
            &attempt,
            &run_at,
            &started,
            &finished,
            &last_error,
            &clear_lease,
            &worker,
            &set_result,
            &result,
            &clear_cancel,
            &claim_seq,
            &stall_count,
        ];
        let upd = async { c.query(&upd_st, &upd_params).await.map_err(|e| error::pg(what, e)) };
        let err_params: [&(dyn ToSql + Sync); 6] = [&ns, &now, &e_ids, &e_jobs, &e_attempts, &e_texts];
        let dead_params: [&(dyn ToSql + Sync); 3] = [&now, &d_ids, &d_jobs];
        let met_params: [&(dyn ToSql + Sync); 8] =
            [&ns, &now, &m_jobs, &m_tasks, &m_queues, &m_attempts, &m_ok, &m_dur];
        let mut rest: Vec<Send<'_>> = Vec::new();
        if let Some(st) = &err_st {
            rest.push(Box::pin(async { c.execute(st, &err_params).await.map_err(|e| error::pg(what, e)) }));
        }
        if let Some(st) = &dead_st {
            rest.push(Box::pin(async { c.execute(st, &dead_params).await.map_err(|e| error::pg(what, e)) }));
        }
        if let Some(st) = &met_st {
            rest.push(Box::pin(async { c.execute(st, &met_params).await.map_err(|e| error::pg(what, e)) }));
        }
        if commit {
            rest.push(Box::pin(async { c.commit().await.map(|_| 0) }));
        }
        let (rows, _) = futures::try_join!(upd, futures::future::try_join_all(rest))?;
        Ok(rows)
    }

    /// Whether writing `changes` must be followed by [`PgStore::cascade`].
    pub(crate) fn needs_cascade(changes: &[Change]) -> bool {
        changes
            .iter()
            .any(|ch| ch.before.has_dependents && (ch.next.cancel_dependents || ch.next.release_dependents))
    }

    /// Releases the dependents of the jobs `changes` completed and applies the edge policies
    /// of the ones they failed for good (see `flows.rs`), transitively, inside the open
    /// transaction.
    pub(crate) async fn cascade(
        &self,
        c: &Conn,
        changes: &[Change],
        now: i64,
        fx: &mut Effects,
    ) -> Result<()> {
        let pick = |f: fn(&Next) -> bool, chs: &[Change]| -> Vec<Uuid> {
            chs.iter().filter(|ch| ch.before.has_dependents && f(&ch.next)).map(|ch| ch.before.id).collect()
        };
        let mut release_from = pick(|n| n.release_dependents, changes);
        let mut failed_from = pick(|n| n.cancel_dependents, changes);
        while !release_from.is_empty() || !failed_from.is_empty() {
            let chs = if release_from.is_empty() {
                self.failure_step(c, &std::mem::take(&mut failed_from), now).await?
            } else {
                self.release_step(c, &std::mem::take(&mut release_from), now).await?
            };
            self.write(c, &chs, now, false, false).await?;
            fx.note(&chs);
            release_from.extend(pick(|n| n.release_dependents, &chs));
            failed_from.extend(pick(|n| n.cancel_dependents, &chs));
        }
        Ok(())
    }

    /// Writes `changes`, runs their cascade when needed and commits; returns updated rows
    /// when `returning` is set. The transaction must be open.
    pub(crate) async fn write_and_commit(
        &self,
        c: &Conn,
        changes: &[Change],
        now: i64,
        returning: bool,
        fx: &mut Effects,
    ) -> Result<Vec<Row>> {
        fx.note(changes);
        if Self::needs_cascade(changes) {
            let rows = self.write(c, changes, now, returning, false).await?;
            self.cascade(c, changes, now, fx).await?;
            c.commit().await?;
            Ok(rows)
        } else {
            self.write(c, changes, now, returning, true).await
        }
    }

    /// Announces what a committed transaction changed.
    pub(crate) fn announce(&self, fx: &Effects) {
        self.shared.hub.publish(&self.ns, fx.work, &fx.jobs);
    }

    /// Announces the jobs a committed one-statement claim took.
    pub(crate) fn announce_claimed(&self, claimed: &[flexiq_core::ClaimedJob]) {
        let ids: Vec<Uuid> = claimed.iter().filter_map(|cj| crate::db::uid(&cj.job.id).ok()).collect();
        self.shared.hub.publish(&self.ns, false, &ids);
    }
}

/// A fresh time-ordered row id.
pub(crate) fn new_uuid() -> Uuid {
    Uuid::now_v7()
}
