//! [`JobStore`]: enqueue, claim, fenced acks, leases, cancellation and lookups.
//!
//! A lapsed lease is a stall: `release_stale` gives each job its own queue's stall budget, so
//! the state machine recovers it or, past the budget, fails it with `STALLED`. Heartbeats of
//! started attempts copy the claim sequence into `start_seq`; an attempt whose `start_seq`
//! lags its claim sequence never reported a start (it sat in a prefetch buffer), and its
//! release gives the attempt back without a stall. The claim writes nothing for it.

use std::collections::HashMap;

use flexiq_core::store::{
    Ack, AckKind, AckRequest, CancelRequest, ClaimRequest, EnqueueRequest, Enqueued, ExpireRunawayRequest,
    HeartbeatReply, HeartbeatRequest, JobStore, ReleaseStaleRequest, RequestCancelRequest, RequeueRequest,
    WaitForJobRequest, WaitForWorkRequest,
};
use flexiq_core::transition::{transition, Event};
use flexiq_core::{AckOutcome, ClaimedJob, Error, Fence, Job, JobId, JobStatus, Result};
use rusqlite::Connection;

use crate::apply::{apply_completions, fire, is_plain_completion, Extras};
use crate::claim::queue_row;
use crate::error::SqlResultExt;
use crate::row::{job_exists, load_job, load_state, load_states, loaded_from_row, Loaded, STATE_COLS};
use crate::writer::WriteCtx;
use crate::{claim, enqueue, wait, SqliteStore};

/// Applies acks in order. A batch naming each job once loads every state with one statement
/// (an ack cannot change the state of another running job, so none goes stale) and writes its
/// plain completions with one more; a batch that names a job twice loads each state just
/// before its ack, so the second sees the first.
pub(crate) fn ack_all(ctx: &mut WriteCtx<'_>, ns: &str, acks: Vec<Ack>, now: i64) -> Result<Vec<AckOutcome>> {
    let mut out = Vec::with_capacity(acks.len());
    let ids: Vec<&str> = acks.iter().map(|a| a.job_id.as_str()).collect();
    let distinct = ids.iter().collect::<std::collections::HashSet<_>>().len() == ids.len();
    if !(distinct && acks.len() > 1) {
        for ack in acks {
            let st = load_state(ctx.conn, ns, ack.job_id.as_str())?;
            out.push(ack_one(ctx, ns, st, ack, now)?);
        }
        return Ok(out);
    }
    let mut loaded = load_states(ctx.conn, ns, &ids)?;
    let mut plain = Vec::new();
    for Ack { job_id, fence, kind } in acks {
        let st = loaded.remove(job_id.as_str());
        // Plain completions are gathered and written together; the rest go one by one.
        let (st, kind) = match (st, kind) {
            (Some(st), AckKind::Complete { result }) => {
                match transition(&st.job_state(), &Event::Complete { fence }, now) {
                    Ok(next) if is_plain_completion(&st, &next, now) => {
                        plain.push((st, next, result));
                        out.push(AckOutcome::Acknowledged);
                        continue;
                    }
                    _ => (Some(st), AckKind::Complete { result }),
                }
            }
            other => other,
        };
        out.push(ack_one(ctx, ns, st, Ack { job_id, fence, kind }, now)?);
    }
    apply_completions(ctx, ns, &plain, now)?;
    Ok(out)
}

fn ack_one(ctx: &mut WriteCtx<'_>, ns: &str, st: Option<Loaded>, ack: Ack, now: i64) -> Result<AckOutcome> {
    let Some(st) = st else { return Ok(AckOutcome::Superseded) };
    let fence = ack.fence;
    let (event, result) = match ack.kind {
        AckKind::Complete { result } => (Event::Complete { fence }, result),
        AckKind::Fail { error, retryable } => (Event::Fail { fence, error, retryable }, None),
        AckKind::Suspend { until } => (Event::Suspend { fence, until }, None),
        AckKind::Defer { until, reason } => (Event::Defer { fence, until, reason }, None),
        AckKind::Cancel { reason } => (Event::CancelRunning { fence, reason }, None),
    };
    let extras = Extras { result: result.as_deref(), worker_id: None };
    Ok(match fire(ctx, ns, &st, &event, now, extras)? {
        Some(_) => AckOutcome::Acknowledged,
        None => AckOutcome::Superseded,
    })
}

/// The sweep query over running jobs by `column` (`heartbeat_at` or `started_at`).
pub(crate) fn sweep_sql(column: &str) -> String {
    format!("SELECT {STATE_COLS} FROM jobs WHERE ns = ?1 AND status = 1 AND {column} < ?2")
}

fn running_older_than(ctx: &WriteCtx<'_>, ns: &str, column: &str, cutoff: i64) -> Result<Vec<Loaded>> {
    let mut stmt = ctx.conn.prepare_cached(&sweep_sql(column)).db()?;
    let rows = stmt.query_map((ns, cutoff), loaded_from_row).db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}

/// Fires `event_of` each running job of `ns` whose `column` is older than `age_ms`; the ids
/// of those it moved.
fn sweep(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    column: &str,
    age_ms: u64,
    now: i64,
    mut event_of: impl FnMut(&Connection, &Loaded) -> Result<Event>,
) -> Result<Vec<JobId>> {
    let cutoff = now.saturating_sub(i64::try_from(age_ms).unwrap_or(i64::MAX));
    let mut out = Vec::new();
    for st in running_older_than(ctx, ns, column, cutoff)? {
        let event = event_of(ctx.conn, &st)?;
        if fire(ctx, ns, &st, &event, now, Extras::default())?.is_some() {
            out.push(JobId::from_trusted(st.id));
        }
    }
    Ok(out)
}

/// The lost-heartbeat event of `st`: whether a heartbeat reported its start, and its queue's
/// stall budget, read once per queue a sweep
/// meets (`budgets`).
fn heartbeat_lost(
    conn: &Connection,
    ns: &str,
    st: &Loaded,
    budgets: &mut HashMap<String, u32>,
) -> Result<Event> {
    let max_stalled = match budgets.get(&st.queue) {
        Some(b) => *b,
        None => {
            let b = queue_row(conn, ns, &st.queue)?.config().stall_budget();
            budgets.insert(st.queue.clone(), b);
            b
        }
    };
    let started = conn
        // A workflow stage starts when its host dequeues it: no buffer stands in between.
        .prepare_cached("SELECT start_seq = claim_seq OR wf_run IS NOT NULL FROM jobs WHERE rowid = ?1")
        .db()?
        .query_row([st.rowid], |r| r.get::<_, bool>(0))
        .db()?;
    Ok(Event::HeartbeatLost { max_stalled, started })
}

/// Renews the leases of `jobs` still held by their fences; `record_start` also marks each
/// attempt as started (its claim sequence copied into `start_seq`).
fn renew(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    jobs: Vec<(JobId, Fence)>,
    now: i64,
    record_start: bool,
) -> Result<Vec<HeartbeatReply>> {
    let sql = if record_start {
        "UPDATE jobs SET heartbeat_at = ?2, start_seq = claim_seq WHERE rowid = ?1"
    } else {
        "UPDATE jobs SET heartbeat_at = ?2 WHERE rowid = ?1"
    };
    let mut out = Vec::with_capacity(jobs.len());
    for (id, fence) in jobs {
        let st = load_state(ctx.conn, ns, id.as_str())?;
        let reply = match st {
            Some(st) if st.holds(fence) => {
                ctx.conn.prepare_cached(sql).db()?.execute((st.rowid, now)).db()?;
                HeartbeatReply { outcome: AckOutcome::Acknowledged, cancel_requested: st.cancel_requested }
            }
            other => HeartbeatReply {
                outcome: AckOutcome::Superseded,
                cancel_requested: other.is_some_and(|s| s.cancel_requested),
            },
        };
        out.push(reply);
    }
    Ok(out)
}

/// Jobs in an enqueue small enough to commit on the caller's thread.
const SMALL_ENQUEUE: usize = 64;
/// Jobs in a claim or ack small enough to commit on the caller's thread (more than an
/// enqueue: their per-job work is lighter).
const SMALL_CLAIM_OR_ACK: usize = 256;

/// Whether `id` is known in `ns`, as `NotFound` when not.
fn must_exist(conn: &Connection, ns: &str, id: &JobId) -> Result<()> {
    if job_exists(conn, ns, id.as_str())? {
        Ok(())
    } else {
        Err(Error::JobNotFound(id.clone()))
    }
}

#[async_trait::async_trait]
impl JobStore for SqliteStore {
    async fn enqueue(&self, req: EnqueueRequest) -> Result<Vec<Enqueued>> {
        req.validate()?;
        if req.jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ns = self.ns();
        let (counts, small) = (req.max_pending.is_some(), req.jobs.len() <= SMALL_ENQUEUE);
        self.write_sized(counts, small, move |ctx| enqueue::enqueue(ctx, &ns, &req)).await
    }

    async fn claim(&self, req: ClaimRequest) -> Result<Vec<ClaimedJob>> {
        req.validate()?;
        let ns = self.ns();
        let small = req.limit as usize <= SMALL_CLAIM_OR_ACK;
        self.write_sized(true, small, move |ctx| claim::claim(ctx, &ns, &req)).await
    }

    async fn ack(&self, req: AckRequest) -> Result<Vec<AckOutcome>> {
        let AckRequest { acks, now } = req;
        if acks.is_empty() {
            return Ok(Vec::new());
        }
        let ns = self.ns();
        let small = acks.len() <= SMALL_CLAIM_OR_ACK;
        self.write_sized(false, small, move |ctx| ack_all(ctx, &ns, acks, now)).await
    }

    async fn heartbeat(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        let HeartbeatRequest { jobs, now } = req;
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ns = self.ns();
        self.write_small(false, move |ctx| renew(ctx, &ns, jobs, now, true)).await
    }

    async fn renew_buffered(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        let HeartbeatRequest { jobs, now } = req;
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ns = self.ns();
        self.write_small(false, move |ctx| renew(ctx, &ns, jobs, now, false)).await
    }

    async fn release_stale(&self, req: ReleaseStaleRequest) -> Result<Vec<JobId>> {
        let (ns, ReleaseStaleRequest { stale_after_ms, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            let mut budgets = HashMap::new();
            sweep(ctx, &ns, "heartbeat_at", stale_after_ms, now, |conn, st| {
                heartbeat_lost(conn, &ns, st, &mut budgets)
            })
        })
        .await
    }

    async fn expire_runaway(&self, req: ExpireRunawayRequest) -> Result<Vec<JobId>> {
        let (ns, ExpireRunawayRequest { absolute_cap_ms, now }) = (self.ns(), req);
        self.write(false, move |ctx| {
            sweep(ctx, &ns, "started_at", absolute_cap_ms, now, |_, _| Ok(Event::RunawayExpired))
        })
        .await
    }

    async fn requeue(&self, req: RequeueRequest) -> Result<bool> {
        let (ns, RequeueRequest { id, now }) = (self.ns(), req);
        self.write_small(false, move |ctx| {
            let Some(st) = load_state(ctx.conn, &ns, id.as_str())? else { return Ok(false) };
            Ok(fire(ctx, &ns, &st, &Event::Requeue, now, Extras::default())?.is_some())
        })
        .await
    }

    async fn cancel(&self, req: CancelRequest) -> Result<bool> {
        let (ns, CancelRequest { id, now }) = (self.ns(), req);
        self.write_small(false, move |ctx| {
            let Some(st) = load_state(ctx.conn, &ns, id.as_str())? else {
                must_exist(ctx.conn, &ns, &id)?;
                return Ok(false);
            };
            Ok(fire(ctx, &ns, &st, &Event::Cancel, now, Extras::default())?.is_some())
        })
        .await
    }

    async fn request_cancel(&self, req: RequestCancelRequest) -> Result<bool> {
        let (ns, RequestCancelRequest { id, now }) = (self.ns(), req);
        self.write_small(false, move |ctx| {
            let Some(st) = load_state(ctx.conn, &ns, id.as_str())? else {
                must_exist(ctx.conn, &ns, &id)?;
                return Ok(false);
            };
            if st.status.is_terminal() {
                return Ok(false);
            }
            ctx.conn
                .prepare_cached("UPDATE jobs SET cancel_requested = 1 WHERE id = ?1")
                .db()?
                .execute([&st.id])
                .db()?;
            ctx.job_changed(&st.id);
            if st.status != JobStatus::Running {
                fire(ctx, &ns, &st, &Event::Cancel, now, Extras::default())?;
            }
            Ok(true)
        })
        .await
    }

    async fn is_cancel_requested(&self, id: &JobId) -> Result<bool> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| {
            let job = load_job(conn, &ns, id.as_str())?.ok_or_else(|| Error::JobNotFound(id.clone()))?;
            Ok(job.cancel_requested)
        })
        .await
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| load_job(conn, &ns, id.as_str())).await
    }

    async fn get_result(&self, id: &JobId) -> Result<Option<Vec<u8>>> {
        let (ns, id) = (self.ns(), id.clone());
        self.read(move |conn| {
            let job = load_job(conn, &ns, id.as_str())?.ok_or_else(|| Error::JobNotFound(id.clone()))?;
            Ok(if job.status == JobStatus::Completed { job.result } else { None })
        })
        .await
    }

    async fn wait_for_work(&self, req: WaitForWorkRequest) -> Result<()> {
        wait::wait_for_work(self, &req.queues, req.timeout_ms).await
    }

    async fn wait_for_job(&self, req: WaitForJobRequest) -> Result<()> {
        wait::wait_for_job(self, &req.id, req.timeout_ms).await
    }
}
