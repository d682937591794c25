//! [`Admin`] for [`PgStore`]: clean, drain, obliterate, retry of finished jobs and the
//! rate-limit window; removing one job (with its children) and orphans is in `admin_remove.rs`,
//! and every removal goes through `remove.rs`.
//!
//! Each operation is one transaction. Jobs are chosen in the order the operation promises
//! (oldest first, a page at a time) by an unlocked subquery, then locked in id order as acks
//! lock them, re-checking their status: a job that changed meanwhile (claimed, acked) drops
//! out instead of being removed in a state nobody chose. A queue's finished and waiting jobs
//! are found through `jobs_queue_finished_waiting` (migration 8), its pending, suspended and
//! running ones through the claim and running indexes; statuses are SQL literals so the
//! planner can match those partial indexes.
//!
//! `obliterate` locks the queue's state row as limited claims do, and reports what a call
//! removed as one queue-level `removed` event carrying the count; the other removals write one
//! `removed` event per job (`remove.rs`). The call that leaves the queue without jobs also
//! removes its archived copies, dead letters, metric rows, counter rows and its `queues` row
//! (pause, limits, token bucket, cap and registry). An enqueue whose registration ran just
//! before that and commits just after would leave a job in an unregistered queue, which claims
//! do not see; so after committing, a queue found with jobs again is registered again.

use std::collections::{BTreeMap, HashSet};

use flexiq_core::store::{
    Admin, CleanRequest, DrainRequest, ObliterateRequest, RateLimitTtlRequest, RemoveJobRequest, Removed,
    RetryJobsRequest,
};
use flexiq_core::{Error, JobId, JobStatus, RateLimit, Result, TokenBucket};
use uuid::Uuid;

use crate::apply::Effects;
use crate::claim::rate_of;
use crate::db::{i64_of, jid};
use crate::event_writes::queue_event_sql;
use crate::remove::{Report, Rows};
use crate::row::code;
use crate::store::PgStore;

/// The column a job of `status` ages by: finished jobs from when they finished, the others
/// from when they were created.
fn age_col(status: JobStatus) -> &'static str {
    if status.is_terminal() {
        "finished_at"
    } else {
        "created_at"
    }
}

/// The jobs a clean of `status` removes, locked: the oldest (`$4` at most) of queue `$2` in
/// namespace `$1` aged to `$3` or before. Returns each id and its age.
pub(crate) fn clean_sql(status: JobStatus) -> String {
    let (age, st) = (age_col(status), code(status));
    format!(
        "SELECT j.id, j.{age} FROM {{S}}.jobs j WHERE j.id IN ( \
           SELECT c.id FROM {{S}}.jobs c WHERE c.namespace = $1 AND c.queue = $2 AND c.status = {st} \
             AND c.{age} <= $3 ORDER BY c.{age}, c.id LIMIT $4) \
         AND j.status = {st} AND j.{age} <= $3 ORDER BY j.id FOR UPDATE OF j"
    )
}

/// The pending jobs of queue `$2` in namespace `$1` due by `$3`, locked.
const DRAIN: &str =
    "SELECT id FROM {S}.jobs WHERE namespace = $1 AND queue = $2 AND status = 0 AND run_at <= $3 \
    ORDER BY id FOR UPDATE";

/// A page (`$3` at most) of the jobs of queue `$2` in namespace `$1`, locked: one branch per
/// index that holds the queue's jobs, running ones only with `force`.
pub(crate) fn obliterate_sql(force: bool) -> String {
    let page = |statuses: &str| {
        format!(
            "(SELECT id FROM {{S}}.jobs WHERE namespace = $1 AND queue = $2 AND status {statuses} LIMIT $3)"
        )
    };
    let (running, not_running) = if force {
        (format!(" UNION ALL {}", page("= 1")), "")
    } else {
        (String::new(), " AND j.status <> 1")
    };
    format!(
        "SELECT j.id FROM {{S}}.jobs j WHERE j.id IN ({} UNION ALL {}{running} LIMIT $3) \
         AND j.namespace = $1 AND j.queue = $2{not_running} ORDER BY j.id FOR UPDATE OF j",
        page("IN (0, 6)"),
        page("IN (2, 3, 4, 5, 7)"),
    )
}

/// The jobs a retry of `status` moves, locked: the first `$3` of queue `$2` in namespace `$1`
/// by (finished_at, id), leaving out a job whose unique key a live job holds now (it would
/// hold the key twice). Returns each id, when it finished and its unique key.
pub(crate) fn retry_sql(status: JobStatus) -> String {
    let st = code(status);
    format!(
        "SELECT j.id, j.finished_at, j.unique_key FROM {{S}}.jobs j WHERE j.id IN ( \
           SELECT c.id FROM {{S}}.jobs c WHERE c.namespace = $1 AND c.queue = $2 AND c.status = {st} \
             AND (c.unique_key IS NULL OR NOT EXISTS (SELECT 1 FROM {{S}}.jobs l WHERE l.namespace = $1 \
               AND l.unique_key = c.unique_key AND l.status IN (0, 1, 6, 7))) \
           ORDER BY c.finished_at, c.id LIMIT $3) \
         AND j.status = {st} ORDER BY j.id FOR UPDATE OF j"
    )
}

/// Puts jobs `$1` back to pending at `$2` in place: a fresh attempt and stall budget, nothing
/// of the finished run left (the claim sequence stays, so a fence of that run never matches again),
/// and no dead-letter entry.
const RESET: &str = "WITH d AS (DELETE FROM {S}.dead_letters WHERE original_job_id = ANY($1)) \
    UPDATE {S}.jobs SET status = 0, run_at = $2, attempt = 0, started_at = NULL, heartbeat_at = NULL, \
      finished_at = NULL, worker_id = NULL, result = NULL, last_error = NULL, progress = NULL, \
      cancel_requested = false, stall_count = 0 \
    WHERE id = ANY($1)";

/// The jobs of queue `$2` in namespace `$1`, as the counter rows sum them.
const JOBS_LEFT: &str =
    "SELECT coalesce(sum(n), 0)::int8 FROM {S}.job_counts WHERE namespace = $1 AND queue = $2";

/// Milliseconds from `now` until the limiter grants a claim: the smallest wait after which
/// [`TokenBucket::take`] (the claim path's arithmetic) grants one token. A bucket as the claim
/// path leaves it holds at least none, so one window (`per_ms`) past its last refill always
/// refills a token.
fn wait_for_token(lim: RateLimit, bucket: TokenBucket, now: i64) -> u64 {
    let grants = |wait: i64| {
        let mut b = bucket;
        b.take(lim, 1, now.saturating_add(wait)) == 1
    };
    if grants(0) {
        return 0;
    }
    let window = i64::try_from(lim.per_ms).unwrap_or(i64::MAX);
    let mut hi = bucket.updated_at.saturating_sub(now).max(0).saturating_add(window);
    if !grants(hi) {
        return hi as u64;
    }
    let mut lo = 0;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if grants(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi as u64
}

impl PgStore {
    async fn clean_jobs(&self, req: CleanRequest) -> Result<Vec<JobId>> {
        req.validate()?;
        let ns: &str = &self.ns;
        let cutoff = req.now.saturating_sub(i64_of("grace ms", req.grace_ms)?);
        let (limit, now) = (i64::from(req.limit), req.now);
        let sql = self.sql(&clean_sql(req.status));
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let ids = c
            .tx(async {
                let mut aged: Vec<(i64, Uuid)> = c
                    .rows("clean", &sql, &[&ns, &req.queue, &cutoff, &limit])
                    .await?
                    .iter()
                    .map(|r| (r.get(1), r.get(0)))
                    .collect();
                aged.sort();
                let ids: Vec<Uuid> = aged.iter().map(|a| a.1).collect();
                let removed: HashSet<Uuid> = self
                    .remove_locked(&c, (Rows::Live, Report::EachJob), &ids, now, &mut fx)
                    .await?
                    .into_iter()
                    .collect();
                Ok(ids.into_iter().filter(|id| removed.contains(id)).map(jid).collect())
            })
            .await?;
        self.announce(&fx);
        Ok(ids)
    }

    async fn drain_jobs(&self, req: DrainRequest) -> Result<u64> {
        req.validate()?;
        let ns: &str = &self.ns;
        let due_by = if req.include_delayed { i64::MAX } else { req.now };
        let sql = self.sql(DRAIN);
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let n = c
            .tx(async {
                let ids: Vec<Uuid> = c
                    .rows("drain", &sql, &[&ns, &req.queue, &due_by])
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                Ok(self.remove_locked(&c, (Rows::Live, Report::EachJob), &ids, req.now, &mut fx).await?.len()
                    as u64)
            })
            .await?;
        self.announce(&fx);
        Ok(n)
    }

    async fn obliterate_queue(&self, req: ObliterateRequest) -> Result<u64> {
        req.validate()?;
        let ns: &str = &self.ns;
        let (queue, now, count) = (&req.queue, req.now, i64::from(req.count));
        let what = "obliterate queue";
        let lock_queue = self.sql("SELECT 1 FROM {S}.queues WHERE namespace = $1 AND queue = $2 FOR UPDATE");
        let running =
            self.sql("SELECT count(*) FROM {S}.jobs WHERE namespace = $1 AND queue = $2 AND status = 1");
        let page = self.sql(&obliterate_sql(req.force));
        let left_sql = self.sql(JOBS_LEFT);
        // One queue-level event for the jobs this call removed.
        let report = self.sql(&queue_event_sql(
            "removed",
            "$1",
            "(SELECT $2::text AS queue) AS q",
            "$3::int8",
            "jsonb_build_object('count', $4::int8)",
        ));
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let (left, unregistered) = c
            .tx(async {
                c.rows(what, &lock_queue, &[&ns, queue]).await?;
                if !req.force {
                    let busy: i64 = c.rows(what, &running, &[&ns, queue]).await?[0].get(0);
                    if busy > 0 {
                        return Err(Error::Conflict(format!(
                            "queue {queue} has {busy} running jobs: obliterate with force to remove them too"
                        )));
                    }
                }
                let ids: Vec<Uuid> =
                    c.rows(what, &page, &[&ns, queue, &count]).await?.iter().map(|r| r.get(0)).collect();
                let removed =
                    self.remove_locked(&c, (Rows::Live, Report::Silent), &ids, now, &mut fx).await?;
                if !removed.is_empty() {
                    let n = removed.len() as i64;
                    c.exec(what, &report, &[&ns, queue, &now, &n]).await?;
                }
                let left: i64 = c.rows(what, &left_sql, &[&ns, queue]).await?[0].get(0);
                if left > 0 {
                    return Ok((left, false));
                }
                self.remove_queue_traces(&c, queue, now, &mut fx).await
            })
            .await?;
        self.announce(&fx);
        if !unregistered {
            return Ok(left.max(0) as u64);
        }
        // Jobs committed into the queue since it was counted empty: claims only see registered
        // queues, so register it again.
        let c = self.conn().await?;
        let after: i64 = c.rows(what, &left_sql, &[&ns, queue]).await?[0].get(0);
        if after > 0 {
            let register =
                self.sql("INSERT INTO {S}.queues (namespace, queue) VALUES ($1, $2) ON CONFLICT DO NOTHING");
            c.exec(what, &register, &[&ns, queue]).await?;
            self.announce(&Effects { work: true, jobs: Vec::new() });
        }
        Ok(after.max(0) as u64)
    }

    /// What is left of a queue without jobs: archived copies (with their history), dead
    /// letters, metric rows, counter rows and its `queues` row. Returns the jobs counted in
    /// the queue after all (committed since it was counted empty; the registry then stays)
    /// and whether the `queues` row went.
    async fn remove_queue_traces(
        &self,
        c: &crate::db::Conn,
        queue: &str,
        now: i64,
        fx: &mut Effects,
    ) -> Result<(i64, bool)> {
        let ns: &str = &self.ns;
        let what = "obliterate queue";
        let archived = self.sql(
            "SELECT id FROM {S}.archived_jobs WHERE namespace = $1 AND queue = $2 ORDER BY id FOR UPDATE",
        );
        let ids: Vec<Uuid> =
            c.rows(what, &archived, &[&ns, &queue]).await?.iter().map(|r| r.get(0)).collect();
        self.remove_locked(c, (Rows::Archived, Report::Silent), &ids, now, fx).await?;
        for table in ["dead_letters", "task_metrics"] {
            let sql = self.sql(&format!("DELETE FROM {{S}}.{table} WHERE namespace = $1 AND queue = $2"));
            c.exec(what, &sql, &[&ns, &queue]).await?;
        }
        // Every backend's counter rows of the queue go; a row another transaction was writing
        // is deleted as that transaction committed it, so what it counted is put back in slot 0.
        let counters =
            self.sql("DELETE FROM {S}.job_counts WHERE namespace = $1 AND queue = $2 RETURNING status, n");
        let mut sums: BTreeMap<i16, i64> = BTreeMap::new();
        for r in c.rows(what, &counters, &[&ns, &queue]).await? {
            *sums.entry(r.get(0)).or_default() += r.get::<_, i64>(1);
        }
        sums.retain(|_, n| *n != 0);
        if !sums.is_empty() {
            let (st, n): (Vec<i16>, Vec<i64>) = sums.into_iter().unzip();
            let restore = self.sql(
                "INSERT INTO {S}.job_counts AS c (namespace, queue, status, slot, n) \
                 SELECT $1, $2, s, 0, n FROM unnest($3::int2[], $4::int8[]) AS u(s, n) \
                 ON CONFLICT (namespace, queue, status, slot) DO UPDATE SET n = c.n + excluded.n",
            );
            c.exec(what, &restore, &[&ns, &queue, &st, &n]).await?;
            return Ok((n.iter().sum(), false));
        }
        let unregister = self.sql("DELETE FROM {S}.queues WHERE namespace = $1 AND queue = $2");
        c.exec(what, &unregister, &[&ns, &queue]).await?;
        Ok((0, true))
    }

    async fn retry_finished(&self, req: RetryJobsRequest) -> Result<u64> {
        req.validate()?;
        let ns: &str = &self.ns;
        let (count, now) = (i64::from(req.count), req.now);
        let pick = self.sql(&retry_sql(req.status));
        let reset = self.sql(RESET);
        let c = self.conn().await?;
        let ids = c
            .tx(async {
                let mut rows: Vec<(Option<i64>, Uuid, Option<String>)> = c
                    .rows("retry jobs", &pick, &[&ns, &req.queue, &count])
                    .await?
                    .iter()
                    .map(|r| (r.get(1), r.get(0), r.get(2)))
                    .collect();
                rows.sort();
                // Of the jobs sharing a unique key, the oldest takes it back.
                let mut keys = HashSet::new();
                let ids: Vec<Uuid> = rows
                    .into_iter()
                    .filter(|(_, _, k)| k.as_ref().is_none_or(|k| keys.insert(k.clone())))
                    .map(|r| r.1)
                    .collect();
                if !ids.is_empty() {
                    c.exec("retry jobs", &reset, &[&ids, &now]).await?;
                }
                Ok(ids)
            })
            .await?;
        let n = ids.len() as u64;
        self.announce(&Effects { work: n > 0, jobs: ids });
        Ok(n)
    }

    async fn limit_ttl(&self, req: RateLimitTtlRequest) -> Result<u64> {
        req.validate()?;
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT queue, rate_count, rate_per_ms, tokens, tokens_at FROM {S}.queues WHERE namespace = $1 AND queue = $2",
        );
        let c = self.conn().await?;
        let Some(r) = c.opt("rate limit ttl", &sql, &[&ns, &req.queue]).await? else { return Ok(0) };
        Ok(match rate_of(&r, 1, req.now) {
            Some((lim, bucket)) => wait_for_token(lim, bucket, req.now),
            None => 0,
        })
    }
}

#[async_trait::async_trait]
impl Admin for PgStore {
    async fn clean(&self, req: CleanRequest) -> Result<Vec<JobId>> {
        self.clean_jobs(req).await
    }

    async fn drain(&self, req: DrainRequest) -> Result<u64> {
        self.drain_jobs(req).await
    }

    async fn obliterate(&self, req: ObliterateRequest) -> Result<u64> {
        self.obliterate_queue(req).await
    }

    async fn remove_orphans(&self) -> Result<u64> {
        self.remove_orphan_rows().await
    }

    async fn retry_jobs(&self, req: RetryJobsRequest) -> Result<u64> {
        self.retry_finished(req).await
    }

    async fn remove_job(&self, req: RemoveJobRequest) -> Result<Removed> {
        self.remove_one(req).await
    }

    async fn rate_limit_ttl(&self, req: RateLimitTtlRequest) -> Result<u64> {
        self.limit_ttl(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_what_the_claim_path_refills() {
        let lim = RateLimit::parse("1/s").unwrap();
        let mut b = TokenBucket::full(lim, 0);
        assert_eq!(wait_for_token(lim, b, 0), 0, "a full bucket grants now");
        assert_eq!(b.take(lim, 1, 0), 1);
        assert_eq!(wait_for_token(lim, b, 100), 900);
        assert_eq!(wait_for_token(lim, b, 1_000), 0);
        let ten = RateLimit::parse("10/m").unwrap();
        let mut b = TokenBucket::full(ten, 0);
        assert_eq!(b.take(ten, 10, 0), 10);
        let wait = wait_for_token(ten, b, 0);
        assert_eq!(wait, 6_000);
        assert_eq!({ b }.take(ten, 1, wait as i64), 1);
        assert_eq!({ b }.take(ten, 1, wait as i64 - 1), 0);
        let ahead = TokenBucket { tokens: 0.0, updated_at: 5_000 };
        assert_eq!(wait_for_token(lim, ahead, 4_000), 2_000, "a bucket refilled ahead of this clock");
    }
}
