//! Claiming on the writer thread: pause, concurrency caps, token-bucket rate limits, then
//! priority, `run_at` and id order, each job moved by the state machine. A revoked task's
//! jobs that are already pending are claimed like any other: revocation only refuses new
//! enqueues.

use flexiq_core::store::{ClaimRequest, QueueConfig};
use flexiq_core::transition::{transition, Event};
use flexiq_core::{ClaimedJob, Error, Fence, Job, JobStatus, RateLimit, Result, TokenBucket};
use rusqlite::{Connection, OptionalExtension};

use crate::apply::apply_claims;
use crate::error::SqlResultExt;
use crate::row::{fill_deps, job_from_row, Loaded, JOB_COLS, JOB_COL_COUNT};
use crate::writer::WriteCtx;

/// A queue's persisted controls and bucket.
#[derive(Debug, Default)]
pub(crate) struct QueueRow {
    pub(crate) paused: bool,
    pub(crate) rate: Option<RateLimit>,
    pub(crate) bucket: Option<TokenBucket>,
    pub(crate) concurrency: Option<u32>,
    /// Stalls a job of the queue may recover from (`None`: the default budget).
    pub(crate) max_stalled: Option<u32>,
}

impl QueueRow {
    /// The controls as core names them.
    pub(crate) fn config(&self) -> QueueConfig {
        QueueConfig {
            paused: self.paused,
            rate_limit: self.rate,
            concurrency: self.concurrency,
            max_stalled_count: self.max_stalled,
        }
    }
}

/// Reads a queue's controls (defaults for an unknown queue).
pub(crate) fn queue_row(conn: &Connection, ns: &str, queue: &str) -> Result<QueueRow> {
    conn.prepare_cached(
        "SELECT paused, rate_count, rate_per_ms, tokens, tokens_at, concurrency, max_stalled_count
         FROM queue_state WHERE ns = ?1 AND queue = ?2",
    )
    .db()?
    .query_row((ns, queue), |r| {
        let count: Option<u32> = r.get(1)?;
        let per_ms: Option<u64> = r.get(2)?;
        let tokens: Option<f64> = r.get(3)?;
        let at: Option<i64> = r.get(4)?;
        Ok(QueueRow {
            paused: r.get(0)?,
            rate: count.zip(per_ms).map(|(count, per_ms)| RateLimit { count, per_ms }),
            bucket: tokens.zip(at).map(|(tokens, updated_at)| TokenBucket { tokens, updated_at }),
            concurrency: r.get(5)?,
            max_stalled: r.get(6)?,
        })
    })
    .optional()
    .db()
    .map(Option::unwrap_or_default)
}

/// Claimable queues of `ns` (those with pending or suspended jobs).
pub(crate) fn claimable_queues(conn: &Connection, ns: &str) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT DISTINCT queue FROM queue_counts WHERE ns = ?1 AND status IN (0, 6) AND n > 0",
        )
        .db()?;
    let rows = stmt.query_map([ns], |r| r.get(0)).db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}

/// The columns a claim reads of a candidate row, from `jobs` (see [`candidate_from_row`]).
pub(crate) fn candidate_select() -> String {
    format!("SELECT has_dependents, {JOB_COLS}, rowid FROM jobs")
}

/// The claim query of one queue: claimable rows due by `now`, in claim order.
pub(crate) fn claim_sql() -> String {
    format!(
        "{} WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6) AND run_at <= ?3
         ORDER BY priority DESC, run_at, id LIMIT ?4",
        candidate_select()
    )
}

/// A claimable row read for a claim.
pub(crate) struct Candidate {
    /// Index of its queue in the claim's queue list.
    pub(crate) queue: usize,
    rowid: i64,
    has_dependents: bool,
    /// The job as read.
    pub(crate) job: Job,
    has_deps: bool,
}

/// Builds a [`Candidate`] of queue `queue` from a row of [`candidate_select`].
pub(crate) fn candidate_from_row(r: &rusqlite::Row<'_>, queue: usize) -> rusqlite::Result<Candidate> {
    let (job, has_deps) = job_from_row(r, 1)?;
    Ok(Candidate { queue, rowid: r.get(1 + JOB_COL_COUNT)?, has_dependents: r.get(0)?, job, has_deps })
}

fn candidates(
    conn: &Connection,
    ns: &str,
    qi: usize,
    queue: &str,
    now: i64,
    limit: u32,
) -> Result<Vec<Candidate>> {
    let mut stmt = conn.prepare_cached(&claim_sql()).db()?;
    let rows = stmt.query_map((ns, queue, now, limit), |r| candidate_from_row(r, qi)).db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}

fn save_bucket(conn: &Connection, ns: &str, queue: &str, b: TokenBucket) -> Result<()> {
    conn.prepare_cached("UPDATE queue_state SET tokens = ?3, tokens_at = ?4 WHERE ns = ?1 AND queue = ?2")
        .db()?
        .execute((ns, queue, b.tokens, b.updated_at))
        .db()?;
    Ok(())
}

/// What one queue admits to a claim: how many jobs it may give, and the rate bucket they were
/// taken from (settled once the claim knows how many it used).
pub(crate) struct Grant {
    /// Jobs the queue may give (0 when paused, at its concurrency cap or out of tokens).
    pub(crate) budget: u32,
    /// The queue's bucket after granting, and how many tokens were granted.
    bucket: Option<(TokenBucket, u32)>,
}

/// Asks queue `queue` of `ns` for up to `limit` jobs: pause, concurrency cap, then rate limit.
/// Needs an operation queued with `needs_counts` (it reads the running count).
pub(crate) fn admit(ctx: &WriteCtx<'_>, ns: &str, queue: &str, limit: u32, now: i64) -> Result<Grant> {
    let row = queue_row(ctx.conn, ns, queue)?;
    if row.paused {
        return Ok(Grant { budget: 0, bucket: None });
    }
    let mut budget = limit;
    if let Some(cap) = row.concurrency {
        let running = ctx.count(ns, queue, JobStatus::Running)?;
        budget = budget.min(u32::try_from((i64::from(cap) - running).max(0)).unwrap_or(0));
    }
    if budget == 0 {
        return Ok(Grant { budget, bucket: None });
    }
    let Some(rate) = row.rate else { return Ok(Grant { budget, bucket: None }) };
    let mut bucket = row.bucket.unwrap_or_else(|| TokenBucket::full(rate, now));
    let granted = bucket.take(rate, budget, now);
    Ok(Grant { budget: granted, bucket: Some((bucket, granted)) })
}

impl Grant {
    /// Gives back the tokens granted beyond the `used` jobs and saves the queue's bucket.
    pub(crate) fn settle(self, conn: &Connection, ns: &str, queue: &str, used: u32) -> Result<()> {
        let Some((mut bucket, granted)) = self.bucket else { return Ok(()) };
        bucket.tokens += f64::from(granted.saturating_sub(used));
        save_bucket(conn, ns, queue, bucket)
    }
}

/// Claims up to `req.limit` jobs of `ns`.
pub(crate) fn claim(ctx: &mut WriteCtx<'_>, ns: &str, req: &ClaimRequest) -> Result<Vec<ClaimedJob>> {
    let conn: &Connection = ctx.conn;
    let mut queues = if req.queues.is_empty() { claimable_queues(conn, ns)? } else { req.queues.clone() };
    queues.sort();
    queues.dedup();
    let now = req.now;
    let mut found: Vec<Candidate> = Vec::new();
    let mut grants: Vec<Grant> = Vec::with_capacity(queues.len());
    for (qi, q) in queues.iter().enumerate() {
        let grant = admit(ctx, ns, q, req.limit, now)?;
        if grant.budget > 0 {
            found.extend(candidates(conn, ns, qi, q, now, grant.budget)?);
        }
        grants.push(grant);
    }
    if queues.len() > 1 {
        found.sort_by(|a, b| {
            b.job
                .priority
                .cmp(&a.job.priority)
                .then(a.job.run_at.cmp(&b.job.run_at))
                .then(a.job.id.cmp(&b.job.id))
        });
        found.truncate(req.limit as usize);
    }
    for (qi, grant) in grants.into_iter().enumerate() {
        let used = found.iter().filter(|c| c.queue == qi).count() as u32;
        grant.settle(conn, ns, &queues[qi], used)?;
    }
    take(ctx, ns, found, now, Claimers::One(&req.worker_id))
}

/// Who the jobs of one claim go to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Claimers<'a> {
    /// Every job to one worker.
    One(&'a str),
    /// The n-th job to the n-th worker (at least as many workers as jobs).
    Each(&'a [String]),
}

impl<'a> Claimers<'a> {
    /// The worker of the claim's `n`-th job; `None` past the last worker.
    pub(crate) fn nth(self, n: usize) -> Option<&'a str> {
        match self {
            Claimers::One(w) => Some(w),
            Claimers::Each(ws) => ws.get(n).map(String::as_str),
        }
    }

    /// [`Claimers::One`] when every worker is the same one, so the claim writes with one shape.
    pub(crate) fn of(workers: &'a [String]) -> Self {
        match workers.first() {
            Some(w) if workers.iter().all(|o| o == w) => Claimers::One(w),
            _ => Claimers::Each(workers),
        }
    }
}

/// Moves each candidate through the state machine's claim and writes the claims: attempt and
/// claim sequence up by one, started and heartbeat now, the worker stamped, counters moved.
/// Every claim of this crate, plain or fair, ends here, so their jobs ack and heartbeat alike.
/// The n-th job claimed goes to `workers.nth(n)`.
pub(crate) fn take(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    found: Vec<Candidate>,
    now: i64,
    workers: Claimers<'_>,
) -> Result<Vec<ClaimedJob>> {
    let mut claimed = Vec::with_capacity(found.len());
    let mut decided = Vec::with_capacity(found.len());
    for c in found {
        let mut job = c.job;
        let st = Loaded {
            rowid: c.rowid,
            id: job.id.to_string(),
            queue: job.queue.clone(),
            task: job.task.clone(),
            status: job.status,
            attempt: job.attempt,
            max_retries: job.max_retries,
            started_at: job.started_at,
            claim_seq: job.claim_seq,
            stall_count: job.stall_count,
            backoff: job.backoff,
            has_dependents: c.has_dependents,
            cancel_requested: job.cancel_requested,
        };
        let Ok(next) = transition(&st.job_state(), &Event::Claim, now) else { continue };
        let claim_seq = next.claim_seq.ok_or_else(|| {
            Error::backend(format!("the claim of job {} was given no claim sequence", job.id))
        })?;
        job.status = next.status;
        job.attempt = next.attempt;
        job.started_at = next.started_at;
        job.heartbeat_at = next.started_at;
        let worker = workers.nth(claimed.len()).ok_or_else(|| {
            Error::backend(format!("job {} was claimed for place {} with no worker", job.id, claimed.len()))
        })?;
        job.worker_id = Some(worker.to_string());
        job.claim_seq = claim_seq;
        let fence = Fence { attempt: next.attempt, started_at: now, claim_seq };
        claimed.push((ClaimedJob { job, fence }, c.has_deps));
        decided.push((st, next));
    }
    apply_claims(ctx, ns, &decided, now, workers)?;
    let (jobs, flags): (Vec<_>, Vec<_>) = claimed.into_iter().map(|(c, d)| ((c.job, d), c.fence)).unzip();
    let jobs = fill_deps(ctx.conn, jobs)?;
    Ok(jobs.into_iter().zip(flags).map(|(job, fence)| ClaimedJob { job, fence }).collect())
}
