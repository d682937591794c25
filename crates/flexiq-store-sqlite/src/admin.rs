//! [`Admin`]: clean, drain, obliterate, orphans, bulk retry, single removal and the rate-limit
//! window.
//!
//! Each operation is one write of the group commit (queued with `needs_counts`: obliterate
//! reads the queue's counters, and every removal must see the batch's metric rows written
//! first), and every removal goes through `removal::remove_jobs`. The row selections seek the
//! partial indexes of schema version 5 (finished rows by queue, status and finish time;
//! waiting rows by queue and creation), the claim index (pending and suspended rows of a
//! queue), the running index, or the listing index by creation for the pending and suspended
//! rows `clean` ages by `created_at`. Orphans are swept in `orphans.rs`.
//!
//! The removals an operator asks for write `removed` per job, before its row goes (so the
//! event carries its queue, task and attempt): `clean`, `drain` and `remove_job` (each child
//! too). `obliterate` writes one `removed` event on the queue with the count instead, as it
//! takes a queue apart rather than picking jobs. The orphan sweep removes no job.

use flexiq_core::events::EventKind;
use flexiq_core::store::{
    Admin, CleanRequest, DrainRequest, ObliterateRequest, RateLimitTtlRequest, RemoveJobRequest, Removed,
    RetryJobsRequest,
};
use flexiq_core::{Error, JobId, JobStatus, RateLimit, Result, TokenBucket};
use rusqlite::{Connection, Row};

use crate::claim::queue_row;
use crate::enqueue::live_unique;
use crate::error::SqlResultExt;
use crate::events_write;
use crate::removal::{delete_dead_letter, dependents_of, remove_archived, remove_jobs};
use crate::row::{deps_of, job_exists, load_state, loaded_from_row, Loaded, STATE_COLS};
use crate::wait::wall_clock_ms;
use crate::writer::WriteCtx;
use crate::{orphans, SqliteStore};

/// A queue's rows of one finished status (`?3`) finished by `?4`, oldest first.
pub(crate) fn clean_finished_sql() -> String {
    format!(
        "SELECT {STATE_COLS} FROM jobs WHERE ns = ?1 AND queue = ?2 AND status IN (2, 3, 4, 5)
           AND status = ?3 AND finished_at <= ?4 ORDER BY finished_at, id LIMIT ?5"
    )
}

/// A queue's pending or suspended rows (`?3`) created by `?4`, oldest first: the listing index
/// by creation, walked from the oldest row of the namespace (the `+` keeps the planner off the
/// claim index, which would need a sort).
pub(crate) fn clean_created_sql() -> String {
    format!(
        "SELECT {STATE_COLS} FROM jobs WHERE ns = ?1 AND created_at <= ?4 AND +queue = ?2 AND +status = ?3
         ORDER BY created_at, id LIMIT ?5"
    )
}

/// A queue's waiting rows created by `?4`, oldest first (`?3` is the waiting status, implied).
pub(crate) fn clean_waiting_sql() -> String {
    format!(
        "SELECT {STATE_COLS} FROM jobs WHERE ns = ?1 AND queue = ?2 AND status = 7 AND created_at <= ?4
           AND ?3 = 7 ORDER BY created_at, id LIMIT ?5"
    )
}

/// A queue's pending rows due by `?3`.
pub(crate) fn drain_sql() -> String {
    format!("SELECT {STATE_COLS} FROM jobs WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6) AND status = 0 AND run_at <= ?3")
}

/// A queue's rows of one finished status (`?3`), oldest finished first, with their unique key.
pub(crate) fn retry_sql() -> String {
    format!(
        "SELECT {STATE_COLS}, unique_key FROM jobs WHERE ns = ?1 AND queue = ?2 AND status IN (2, 3, 4, 5)
           AND status = ?3 ORDER BY finished_at, id LIMIT ?4"
    )
}

/// The passes of an obliterate page, each up to `?3` rows of queue `?2`: (what, SQL).
pub(crate) fn obliterate_sqls() -> [(&'static str, String); 4] {
    let head = format!("SELECT {STATE_COLS} FROM jobs WHERE ns = ?1");
    [
        ("claimable", format!("{head} AND queue = ?2 AND status IN (0, 6) LIMIT ?3")),
        ("waiting", format!("{head} AND queue = ?2 AND status = 7 LIMIT ?3")),
        ("finished", format!("{head} AND queue = ?2 AND status IN (2, 3, 4, 5) LIMIT ?3")),
        ("running", format!("{head} AND status = 1 AND queue = ?2 LIMIT ?3")),
    ]
}

/// A queue's archived copies.
pub(crate) const ARCHIVED_OF_QUEUE: &str = "SELECT id FROM archived_jobs WHERE ns = ?1 AND queue = ?2";

/// The removal of a queue's dead letters.
pub(crate) const DEAD_LETTERS_OF_QUEUE: &str = "DELETE FROM dead_letters WHERE ns = ?1 AND queue = ?2";

/// The retry of one row in place: pending now, attempt 0, no stalls, nothing of its runs left.
/// The id and the claim sequence stay.
const RETRY: &str =
    "UPDATE jobs SET status = 0, attempt = 0, stall_count = 0, run_at = ?2, started_at = NULL,
    heartbeat_at = NULL, finished_at = NULL, worker_id = NULL, result = NULL, last_error = NULL,
    progress = NULL, cancel_requested = 0 WHERE rowid = ?1";

fn states(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<Vec<Loaded>> {
    let mut stmt = conn.prepare_cached(sql).db()?;
    let rows = stmt.query_map(params, loaded_from_row).db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}

fn to_ms(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn clean(ctx: &mut WriteCtx<'_>, ns: &str, req: &CleanRequest) -> Result<Vec<JobId>> {
    let cutoff = req.now.saturating_sub(to_ms(req.grace_ms));
    let sql = match req.status {
        s if s.is_terminal() => clean_finished_sql(),
        JobStatus::Waiting => clean_waiting_sql(),
        _ => clean_created_sql(),
    };
    let params = (ns, &req.queue, req.status.code(), cutoff, req.limit);
    let gone = states(ctx.conn, &sql, params)?;
    events_write::removed(ctx.conn, ns, &gone, req.now)?;
    remove_jobs(ctx, ns, &gone, req.now)?;
    Ok(gone.into_iter().map(|g| JobId::from_trusted(g.id)).collect())
}

fn drain(ctx: &mut WriteCtx<'_>, ns: &str, req: &DrainRequest) -> Result<u64> {
    let due = if req.include_delayed { i64::MAX } else { req.now };
    let gone = states(ctx.conn, &drain_sql(), (ns, &req.queue, due))?;
    events_write::removed(ctx.conn, ns, &gone, req.now)?;
    remove_jobs(ctx, ns, &gone, req.now)?;
    Ok(gone.len() as u64)
}

/// The queue's live jobs as its counters (this write's changes included) have them.
fn live_jobs(ctx: &WriteCtx<'_>, ns: &str, queue: &str) -> Result<u64> {
    let mut n = 0;
    for st in JobStatus::ALL {
        n += ctx.count(ns, queue, st)?.max(0);
    }
    Ok(n as u64)
}

fn obliterate(ctx: &mut WriteCtx<'_>, ns: &str, req: &ObliterateRequest) -> Result<u64> {
    let q = req.queue.as_str();
    let running = ctx.count(ns, q, JobStatus::Running)?;
    if running > 0 && !req.force {
        return Err(Error::Conflict(format!(
            "queue {q} has {running} running jobs: obliterate it with force to remove them too"
        )));
    }
    let mut budget = req.count;
    let mut removed = 0;
    for (_, sql) in obliterate_sqls() {
        if budget == 0 {
            break;
        }
        let gone = states(ctx.conn, &sql, (ns, q, budget))?;
        remove_jobs(ctx, ns, &gone, req.now)?;
        removed += gone.len();
        budget = budget.saturating_sub(u32::try_from(gone.len()).unwrap_or(u32::MAX));
    }
    if removed > 0 {
        let data = serde_json::json!({ "count": removed });
        events_write::queue_event(ctx.conn, ns, EventKind::Removed, q, &data, req.now)?;
    }
    let left = live_jobs(ctx, ns, q)?;
    if left == 0 {
        let archived: Vec<String> = {
            let mut stmt = ctx.conn.prepare_cached(ARCHIVED_OF_QUEUE).db()?;
            let rows = stmt.query_map((ns, q), |r| r.get(0)).db()?;
            rows.collect::<rusqlite::Result<_>>().db()?
        };
        remove_archived(ctx, ns, &archived, req.now)?;
        for sql in [DEAD_LETTERS_OF_QUEUE, "DELETE FROM queue_state WHERE ns = ?1 AND queue = ?2"] {
            ctx.conn.prepare_cached(sql).db()?.execute((ns, q)).db()?;
        }
        ctx.forget_queue_counts(ns, q)?;
    }
    Ok(left)
}

fn retry_row(r: &Row<'_>) -> rusqlite::Result<(Loaded, Option<String>)> {
    Ok((loaded_from_row(r)?, r.get(14)?))
}

fn retry_jobs(ctx: &mut WriteCtx<'_>, ns: &str, req: &RetryJobsRequest) -> Result<u64> {
    let rows: Vec<(Loaded, Option<String>)> = {
        let mut stmt = ctx.conn.prepare_cached(&retry_sql()).db()?;
        let rows = stmt.query_map((ns, &req.queue, req.status.code(), req.count), retry_row).db()?;
        rows.collect::<rusqlite::Result<_>>().db()?
    };
    for (st, key) in &rows {
        let conn = ctx.conn;
        if let Some(key) = key {
            if let Some(holder) = live_unique(conn, ns, key)? {
                return Err(Error::Conflict(format!(
                    "job {} cannot run again: its unique key {key} is held by live job {holder}",
                    st.id
                )));
            }
        }
        conn.prepare_cached(RETRY).db()?.execute((st.rowid, req.now)).db()?;
        delete_dead_letter(conn, ns, &st.id)?;
        ctx.count_delta(ns, &st.queue, st.status, -1);
        ctx.count_delta(ns, &st.queue, JobStatus::Pending, 1);
        ctx.job_changed(&st.id);
        ctx.wake_work();
    }
    Ok(rows.len() as u64)
}

/// The job and, with `children`, every job it depends on (transitively) whose dependents are
/// all in the set; the job first. Rows already archived are not children.
fn removal_set(conn: &Connection, ns: &str, root: Loaded, children: bool) -> Result<Vec<Loaded>> {
    let mut set = vec![root];
    let mut grew = children;
    while grew {
        grew = false;
        let mut i = 0;
        while i < set.len() {
            for d in deps_of(conn, &set[i].id)? {
                if set.iter().any(|s| s.id == d.as_str()) {
                    continue;
                }
                let dependents = dependents_of(conn, d.as_str())?;
                if dependents.iter().all(|p| set.iter().any(|s| &s.id == p)) {
                    if let Some(child) = load_state(conn, ns, d.as_str())? {
                        set.push(child);
                        grew = true;
                    }
                }
            }
            i += 1;
        }
    }
    Ok(set)
}

fn remove_job(ctx: &mut WriteCtx<'_>, ns: &str, req: &RemoveJobRequest) -> Result<Removed> {
    let id = req.job_id.as_str();
    let Some(root) = load_state(ctx.conn, ns, id)? else {
        if job_exists(ctx.conn, ns, id)? {
            // Only its archived copy is left: that goes, with its history.
            events_write::removed_archived(ctx.conn, ns, id, req.now)?;
            remove_archived(ctx, ns, &[id.to_string()], req.now)?;
            return Ok(Removed { jobs: vec![req.job_id.clone()] });
        }
        return Err(Error::JobNotFound(req.job_id.clone()));
    };
    let set = removal_set(ctx.conn, ns, root, req.remove_children)?;
    if let Some(running) = set.iter().find(|s| s.status == JobStatus::Running) {
        let what = if running.id == id { String::new() } else { format!(" (a child of job {id})") };
        return Err(Error::Conflict(format!(
            "job {}{what} is running: cancel it or let it finish before removing it",
            running.id
        )));
    }
    events_write::removed(ctx.conn, ns, &set, req.now)?;
    remove_jobs(ctx, ns, &set, req.now)?;
    Ok(Removed { jobs: set.into_iter().map(|s| JobId::from_trusted(s.id)).collect() })
}

/// Milliseconds from `now` until `bucket` grants a claim under `rate`: the claim path's own
/// [`TokenBucket::take`] decides, on copies of the bucket, starting from the refill estimate.
fn ms_until_grant(rate: RateLimit, bucket: TokenBucket, now: i64) -> u64 {
    let grants_at = |t: i64| {
        let mut b = bucket;
        b.take(rate, 1, t) == 1
    };
    if grants_at(now) {
        return 0;
    }
    let from = now.max(bucket.updated_at);
    let mut refilled = bucket;
    refilled.take(rate, 0, from);
    let need = ((1.0 - refilled.tokens) / rate.tokens_per_ms()).ceil().max(0.0);
    let mut at = from.saturating_add(need as i64);
    // The estimate is off by rounding at most: step to the first instant the bucket grants.
    while at > now + 1 && grants_at(at - 1) {
        at -= 1;
    }
    while !grants_at(at) && at < i64::MAX {
        at += 1;
    }
    u64::try_from(at - now).unwrap_or(0)
}

#[async_trait::async_trait]
impl Admin for SqliteStore {
    async fn clean(&self, req: CleanRequest) -> Result<Vec<JobId>> {
        req.validate()?;
        let ns = self.ns();
        self.write(true, move |ctx| clean(ctx, &ns, &req)).await
    }

    async fn drain(&self, req: DrainRequest) -> Result<u64> {
        req.validate()?;
        let ns = self.ns();
        self.write(true, move |ctx| drain(ctx, &ns, &req)).await
    }

    async fn obliterate(&self, req: ObliterateRequest) -> Result<u64> {
        req.validate()?;
        let ns = self.ns();
        self.write(true, move |ctx| obliterate(ctx, &ns, &req)).await
    }

    async fn remove_orphans(&self) -> Result<u64> {
        let ns = self.ns();
        self.write(true, move |ctx| orphans::remove(ctx, &ns, wall_clock_ms())).await
    }

    async fn retry_jobs(&self, req: RetryJobsRequest) -> Result<u64> {
        req.validate()?;
        let ns = self.ns();
        self.write(true, move |ctx| retry_jobs(ctx, &ns, &req)).await
    }

    async fn remove_job(&self, req: RemoveJobRequest) -> Result<Removed> {
        let ns = self.ns();
        self.write(true, move |ctx| remove_job(ctx, &ns, &req)).await
    }

    async fn rate_limit_ttl(&self, req: RateLimitTtlRequest) -> Result<u64> {
        req.validate()?;
        let (ns, RateLimitTtlRequest { queue, now }) = (self.ns(), req);
        self.read(move |conn| {
            let row = queue_row(conn, &ns, &queue)?;
            let Some(rate) = row.rate else { return Ok(0) };
            let bucket = row.bucket.unwrap_or_else(|| TokenBucket::full(rate, now));
            Ok(ms_until_grant(rate, bucket, now))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_the_first_instant_the_claim_path_grants() {
        let rate = RateLimit::parse("1/s").unwrap();
        let empty = TokenBucket { tokens: 0.0, updated_at: 0 };
        assert_eq!(ms_until_grant(rate, empty, 0), 1_000);
        assert_eq!(ms_until_grant(rate, empty, 100), 900);
        assert_eq!(ms_until_grant(rate, empty, 1_000), 0);
        assert_eq!(ms_until_grant(rate, TokenBucket::full(rate, 0), 0), 0);
        let ahead = TokenBucket { tokens: 0.5, updated_at: 5_000 };
        assert_eq!(ms_until_grant(rate, ahead, 0), 5_500, "a bucket stamped ahead refills from its stamp");
        let slow = RateLimit::parse("7/h").unwrap();
        let wait = ms_until_grant(slow, TokenBucket { tokens: 0.0, updated_at: 0 }, 0);
        let mut b = TokenBucket { tokens: 0.0, updated_at: 0 };
        let mut before = b;
        assert_eq!(before.take(slow, 1, wait as i64 - 1), 0);
        assert_eq!(b.take(slow, 1, wait as i64), 1);
    }
}
