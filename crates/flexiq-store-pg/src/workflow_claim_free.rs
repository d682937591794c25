//! Fair claims from queues without a rate limit or concurrency cap, for every worker of the
//! claim in one round trip.
//!
//! Hosts dequeue together (the runtime combines their claims), so what a claim costs is what
//! limits the host loop; the transactional path (`workflow_claim.rs`) pays a round trip per
//! lookup and per pick. Here, as for plain claims in `claim_free.rs`, the state machine is
//! asked once what a claim writes and one statement finds, locks (`FOR UPDATE SKIP LOCKED`),
//! writes and returns the jobs, each row checked against `transition(Event::Claim)` after.
//! The statement goes out in one flight with `BEGIN` and `COMMIT`; its transaction commits
//! without waiting for the WAL flush (as every claim does, see `Conn::begin_relaxed`) and runs
//! it on its cached generic plan, since planning this statement afresh costs more than
//! running it. Its plan is the same for any parameters: every lookup is an index descent.
//!
//! - Fairness off: the best `n` jobs (priority, `run_at`, id) over the per-queue claim index,
//!   the k-th stamped with the k-th worker.
//! - With a group cap: the namespace's advisory lock goes out in the same flight, as its own
//!   statement so that the claim's snapshot is taken after it and sees every fair claim
//!   committed before (no two claimers take a group past its cap). The statement walks the
//!   groups with claimable rows in byte order from after the cursor, wrapping (a recursive
//!   loose index scan over `jobs_fair_claim`, one index descent per group and queue), and
//!   gives each group its availability: how many of its due, served jobs it could give,
//!   bounded by its cap minus its running jobs and by the places left. The walk stops once
//!   `n` groups can give a job. The claim is then the rounds single claims in a row would
//!   make: round r takes the r-th job of every group with at least r available, in walk
//!   order, so the k-th pick is the k-th (round, position) pair. Each group's share is locked
//!   in one index descent, and the cursor moves to the last pick's group in the same
//!   statement.
//!
//! Both statements claim nothing when an eligible queue has limits, and say so: the caller
//! then takes the transactional path.

use flexiq_core::store::ClaimFairRequest;
use flexiq_core::{ClaimedJob, Result};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::claim_free::{claim_effect, claimed_from_rows, limited_seen};
use crate::complete::{completes_sql, Completes};
use crate::db::Conn;
use crate::error::pg;
use crate::row::job_cols;
use crate::store::PgStore;
use crate::workflow_claim::{fair_lock_key, served, GROUP};

/// Whether a requested, unpaused queue has limits (`lim.limited`), and the requested queues
/// without limits (`qs`, none when one has limits).
const LIMITED: &str = "lim AS (SELECT EXISTS (SELECT 1 FROM {S}.queues q WHERE q.namespace = $1 \
      AND q.queue = ANY($2::text[]) AND NOT q.paused AND (q.rate_count IS NOT NULL OR q.concurrency IS NOT NULL)) \
      AS limited), \
    qs AS (SELECT q.queue FROM {S}.queues q WHERE q.namespace = $1 AND q.queue = ANY($2::text[]) AND NOT q.paused \
      AND q.rate_count IS NULL AND q.concurrency IS NULL AND NOT (SELECT limited FROM lim))";

/// Claimable workflow rows of queue `qs.queue`, due and served.
fn claimable() -> String {
    format!(
        "j.namespace = $1 AND j.queue = qs.queue AND j.status IN (0, 6) AND j.workflow_run_id IS NOT NULL \
         AND j.run_at <= $3 AND {}",
        served(8, 9)
    )
}

/// Writes the claim of the candidates `c` (id, st0, at0, seq0, n), the n-th stamped with the
/// n-th worker. The rows are found by primary key whatever the plan's guess at how many
/// candidates there are (a generic plan guesses many, and would scan the table to join them).
fn write_claims() -> String {
    format!(
        "u AS (UPDATE {{S}}.jobs j SET status = $5, attempt = j.attempt + $6, started_at = $3, finished_at = NULL, \
            heartbeat_at = NULL, worker_id = ($7::text[])[c.n], claim_seq = j.claim_seq + 1 \
            FROM c WHERE j.id = ANY(ARRAY(SELECT c.id FROM c)) AND j.id = c.id \
            RETURNING {cols}, c.st0, c.at0, c.seq0, c.n)",
        cols = job_cols("j"),
    )
}

/// The best `$4` jobs without fairness. Parameters: `$1` namespace, `$2` queues, `$3` now,
/// `$4` workers, `$5`/`$6` the claim's status and attempt step, `$7` worker ids, `$8`/`$9`
/// served pairs; with `completes`, the completions of `completes_sql` from `$10`.
pub(crate) fn best_free_sql(completes: bool) -> String {
    format!(
        "WITH {lim}, {done}\
         c AS (SELECT j.id, j.status AS st0, j.attempt AS at0, j.claim_seq AS seq0, \
              (row_number() OVER (ORDER BY j.priority DESC, j.run_at, j.id))::int4 AS n \
            FROM qs CROSS JOIN LATERAL \
              (SELECT j.id, j.status, j.attempt, j.claim_seq, j.priority, j.run_at FROM {{S}}.jobs j WHERE {claimable} \
               ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4 FOR UPDATE SKIP LOCKED) AS j \
            ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4), \
         {write} \
         {out}",
        lim = LIMITED,
        done = completes_prefix(completes.then_some(10)),
        claimable = claimable(),
        write = write_claims(),
        out = output(completes),
    )
}

/// The completion CTEs (and a separating comma) when the statement completes jobs from `$p`.
fn completes_prefix(p: Option<u32>) -> String {
    p.map(|p| format!("{}, ", completes_sql(3, p))).unwrap_or_default()
}

/// The statement's rows: the claimed jobs in pick order (or one row without a job), then,
/// when it completes jobs, the ids it completed, then whether an eligible queue has limits.
fn output(completes: bool) -> String {
    let acked = if completes { "(SELECT array_agg(d.id) FROM done d) AS acked, " } else { "" };
    format!("SELECT u.*, {acked}lim.limited FROM lim LEFT JOIN u ON true ORDER BY u.n")
}

/// The first group of the eligible queues after `after` (an SQL expression; `None`: the first
/// group of all).
fn next_group(after: Option<&str>) -> String {
    let bound = after.map(|a| format!(" AND {GROUP} > {a}")).unwrap_or_default();
    format!(
        "(SELECT min(x.k) FROM qs CROSS JOIN LATERAL \
           (SELECT {GROUP} AS k FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = qs.queue \
              AND j.status IN (0, 6) AND j.workflow_run_id IS NOT NULL{bound} ORDER BY 1 LIMIT 1) AS x)"
    )
}

/// Up to `$4` jobs, round-robin over groups below cap `$10` (parameters as [`best_free_sql`],
/// the completions from `$11`), moving the namespace's cursor to the last pick's group. Each
/// walk step's lookups sit in `OFFSET 0` subqueries so that the planner keeps them apart:
/// pulled up, each would be evaluated again wherever its result is used. The jobs the
/// statement completes still read as running in its snapshot, so they leave the counts here.
pub(crate) fn fair_free_sql(completes: bool) -> String {
    let first = next_group(None);
    let running = format!(
        "SELECT {GROUP} AS k, count(*) AS n FROM {{S}}.jobs j \
         WHERE j.namespace = $1 AND j.queue = ANY($2::text[]) AND j.status = 1 GROUP BY 1"
    );
    let busy = if completes {
        format!(
            "SELECT b.k, sum(b.n)::int8 AS n FROM ({running} \
               UNION ALL SELECT d.k, -count(*) FROM done d WHERE d.queue = ANY($2::text[]) GROUP BY 1) AS b \
             GROUP BY 1"
        )
    } else {
        running
    };
    format!(
        "WITH RECURSIVE {lim}, {done}\
         busy AS MATERIALIZED ({busy}), \
         cur AS (SELECT (SELECT f.group_key FROM {{S}}.fair_cursors f WHERE f.namespace = $1) COLLATE \"C\" AS k), \
         walk(pos, k, wrapped, found, avail) AS ( \
             SELECT 0, cur.k, cur.k IS NULL, 0::int8, 0::int8 FROM cur \
           UNION ALL \
             SELECT w.pos + 1, nx.k, nx.wrapped, w.found + (a.avail > 0)::int4, a.avail FROM walk w \
             CROSS JOIN LATERAL (SELECT CASE WHEN w.k IS NULL THEN {first} ELSE {after} END AS k OFFSET 0) AS s \
             CROSS JOIN LATERAL (SELECT CASE WHEN s.k IS NULL AND NOT w.wrapped THEN {first} ELSE s.k END AS k, \
                 w.wrapped OR s.k IS NULL AS wrapped OFFSET 0) AS nx \
             CROSS JOIN LATERAL (SELECT least($10 - coalesce((SELECT b.n FROM busy b WHERE b.k = nx.k), 0), \
                 $4 - w.found) AS slots OFFSET 0) AS sl \
             CROSS JOIN LATERAL (SELECT CASE WHEN sl.slots <= 0 THEN 0::int8 ELSE least(sl.slots, \
                 (SELECT count(*) FROM qs CROSS JOIN LATERAL (SELECT 1 FROM {{S}}.jobs j WHERE {claimable} \
                    AND {GROUP} = nx.k LIMIT sl.slots) AS y)) END AS avail OFFSET 0) AS a \
             WHERE w.found < $4 AND nx.k IS NOT NULL \
               AND (NOT nx.wrapped OR (SELECT k FROM cur) IS NULL OR nx.k <= (SELECT k FROM cur))), \
         share AS (SELECT s.pos, s.k, count(*) AS m FROM \
              (SELECT w.pos, w.k, row_number() OVER (ORDER BY r.r, w.pos) AS idx \
               FROM walk w CROSS JOIN LATERAL generate_series(1::int8, w.avail) AS r(r) WHERE w.pos > 0) AS s \
            WHERE s.idx <= $4 GROUP BY s.pos, s.k), \
         picked AS (SELECT sh.pos, sh.k AS grp, p.* FROM share sh CROSS JOIN LATERAL \
              (SELECT j.* FROM qs CROSS JOIN LATERAL \
                 (SELECT j.id, j.status, j.attempt, j.claim_seq, j.priority, j.run_at FROM {{S}}.jobs j \
                  WHERE {claimable} AND {GROUP} = sh.k \
                  ORDER BY j.priority DESC, j.run_at, j.id LIMIT sh.m FOR UPDATE SKIP LOCKED) AS j \
               ORDER BY j.priority DESC, j.run_at, j.id LIMIT sh.m) AS p), \
         c AS (SELECT r.id, r.status AS st0, r.attempt AS at0, r.claim_seq AS seq0, r.grp, \
              (row_number() OVER (ORDER BY r.round, r.pos))::int4 AS n \
            FROM (SELECT p.*, row_number() OVER (PARTITION BY p.pos ORDER BY p.priority DESC, p.run_at, p.id) AS round \
                  FROM picked p) AS r \
            ORDER BY n LIMIT $4), \
         {write}, \
         moved AS (INSERT INTO {{S}}.fair_cursors (namespace, group_key) \
            SELECT $1, c.grp FROM c ORDER BY c.n DESC LIMIT 1 \
            ON CONFLICT (namespace) DO UPDATE SET group_key = excluded.group_key) \
         {out}",
        lim = LIMITED,
        done = completes_prefix(completes.then_some(11)),
        after = next_group(Some("w.k")),
        claimable = claimable(),
        write = write_claims(),
        out = output(completes),
    )
}

impl PgStore {
    /// Claims for every worker of `req` from unlimited queues in one round trip. `None` when
    /// an eligible queue has limits: nothing was claimed and the transactional path must run.
    pub(crate) async fn claim_fair_free(&self, req: &ClaimFairRequest) -> Result<Option<Vec<ClaimedJob>>> {
        let c = self.conn().await?;
        let rows = c.tx_lazy(self.free_flight(&c, req, None, c.begin_relaxed_generic())).await?;
        if limited_seen(&rows) {
            return Ok(None);
        }
        claimed_from_rows(&rows, req.now).map(Some)
    }

    /// Sends `opening` (the transaction's `BEGIN`, or a setting of one already open), the
    /// namespace's advisory lock when `req` has a cap, the claim statement (completing
    /// `completes` first, see `complete.rs`) and `COMMIT` in one flight on `c`;
    /// returns the statement's rows (see [`limited_seen`]).
    pub(crate) async fn free_flight(
        &self,
        c: &Conn,
        req: &ClaimFairRequest,
        completes: Option<&Completes>,
        opening: impl std::future::Future<Output = Result<()>>,
    ) -> Result<Vec<Row>> {
        let (st, step) = claim_effect(req.now)?;
        let ns: &str = &self.ns;
        let n = req.workers.len() as i64;
        let workflows: Vec<&str> = req.serves.iter().map(|s| s.workflow_id.as_str()).collect();
        let versions: Vec<Option<&str>> =
            req.serves.iter().map(|s| s.definition_version.as_deref()).collect();
        let cap = req.group_cap.map(i64::from);
        let what = "fair claim";
        let mut params: Vec<&(dyn ToSql + Sync)> =
            vec![&ns, &req.queues, &req.now, &n, &st, &step, &req.workers, &workflows, &versions];
        let (stmt, lock) = match &cap {
            None => (c.prep(what, &self.sql(&best_free_sql(completes.is_some()))).await?, None),
            Some(cap) => {
                params.push(cap);
                let lock = c.prep(what, "SELECT pg_advisory_xact_lock($1)").await?;
                (c.prep(what, &self.sql(&fair_free_sql(completes.is_some()))).await?, Some(lock))
            }
        };
        if let Some(done) = completes {
            params.extend(done.params());
        }
        let key = fair_lock_key(self.schema(), ns);
        let (_, _, rows, _) = futures::try_join!(
            opening,
            async {
                match &lock {
                    Some(lock) => c.execute(lock, &[&key]).await.map_err(|e| pg(what, e)),
                    None => Ok(0),
                }
            },
            async { c.query(&stmt, &params).await.map_err(|e| pg(what, e)) },
            c.commit(),
        )?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn params(sql: &str) -> BTreeSet<u32> {
        sql.split('$')
            .skip(1)
            .filter_map(|p| p.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
            .collect()
    }

    #[test]
    fn each_statement_uses_every_parameter_it_is_given() {
        assert_eq!(params(&best_free_sql(false)), (1..=9).collect());
        assert_eq!(params(&fair_free_sql(false)), (1..=10).collect());
        assert_eq!(params(&best_free_sql(true)), (1..=14).collect());
        assert_eq!(params(&fair_free_sql(true)), (1..=15).collect());
    }

    #[test]
    fn only_the_capped_claim_takes_the_cursor_and_moves_it() {
        assert!(fair_free_sql(false).contains("fair_cursors"));
        assert!(!best_free_sql(true).contains("fair_cursors"));
    }
}
