//! The fair claim of workflow jobs: up to one job per worker of the claim, of the served
//! workflows, with running jobs capped per fairness group and groups served round-robin.
//!
//! Claims from queues without limits run in one round trip (`workflow_claim_free.rs`). This
//! file holds the entry point and the transactional path taken when a requested queue has a
//! rate limit or concurrency cap (or had one a moment ago, see `LimitedHint`). There, a claim
//! with a cap takes a transaction-scoped advisory lock keyed by schema and namespace first, so
//! fair claimers of a namespace run one at a time: each counts the running jobs per group (a
//! fresh statement after the lock sees every earlier fair claim committed) and no two can take
//! a group past its cap. Pause, rate limits and concurrency caps are the claim path's own
//! (`claim.rs`: the limited queues' state rows locked, their grants computed for every worker
//! and tokens settled), and the claimed jobs go through the same transition and write as any
//! claim, so acks, heartbeats, fences and the job counts cannot tell a fair claim from another.
//!
//! Without a cap the path takes the best jobs in one statement, each queue bounded by its
//! grant. With a cap it makes the single claims in a row the contract describes, one search
//! and one lock per pick: the search is one statement over `jobs_fair_claim` (namespace,
//! queue, group, priority, run_at, id on claimable rows), a recursive loose index scan walking
//! the distinct groups after the cursor in byte order (`COLLATE "C"`, as the other stores
//! compare keys), each step one index descent per queue, skipping groups at their cap
//! (counting this claim's picks), and stopping at the first group whose best job is due and
//! served. The chosen job is then locked with `SKIP LOCKED` (an ordinary claim may hold it);
//! when it is taken the search runs again without it. A queue leaves the search when its grant
//! is used up, and the cursor moves to the last pick's group in the same transaction.

use std::collections::HashMap;

use flexiq_core::cursor::fingerprint;
use flexiq_core::store::ClaimFairRequest;
use flexiq_core::transition::{transition, Event};
use flexiq_core::{ClaimedJob, Error, Fence, Result};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::apply::{Change, Effects};
use crate::claim::LOCK_LIMITED;
use crate::db::{jid, Conn};
use crate::row::{job, loaded, state_cols};
use crate::store::PgStore;

/// How many times a fair claim searches again after its chosen job was taken under it.
const MAX_SEARCHES: usize = 32;

/// A job's fairness group, as the fair index holds it.
pub(crate) const GROUP: &str = "coalesce(j.group_key, '') COLLATE \"C\"";

/// Served (workflow, version) pairs, `$a`/`$b` the workflow ids and versions (NULL: any).
pub(crate) fn served(a: u32, b: u32) -> String {
    format!(
        "(cardinality(${a}::text[]) = 0 OR EXISTS (SELECT 1 FROM unnest(${a}::text[], ${b}::text[]) AS s(w, v) \
           WHERE s.w = j.task AND (s.v IS NULL OR s.v = j.workflow_version)))"
    )
}

/// The best `$6` due, served jobs without fairness, from queues `$2` each bounded by its grant
/// in `$7`: `$3` now, `$4`/`$5` served.
fn best_sql() -> String {
    format!(
        "SELECT {cols} FROM unnest($2::text[], $7::int8[]) AS qs(queue, cap) CROSS JOIN LATERAL \
           (SELECT * FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = qs.queue AND j.status IN (0, 6) AND j.workflow_run_id IS NOT NULL \
              AND j.run_at <= $3 AND {served} \
            ORDER BY j.priority DESC, j.run_at, j.id LIMIT qs.cap FOR UPDATE SKIP LOCKED) AS j \
         ORDER BY j.priority DESC, j.run_at, j.id LIMIT $6",
        cols = state_cols("j"),
        served = served(4, 5),
    )
}

/// The first group of queues `$2` after `$3` (strictly, unless `from_start`, when `$3` is the
/// empty key and every group counts; with `bounded`, only groups up to `$4`) that is not full
/// (`$8`) and has a due (`$5`), served (`$6`/`$7`) job not in `$9`; returns (group, job id).
pub(crate) fn search_sql(from_start: bool, bounded: bool) -> String {
    let next = |after: &str, op: &str| {
        format!(
            "(SELECT min(x.k) FROM unnest($2::text[]) AS q(queue) CROSS JOIN LATERAL \
               (SELECT {GROUP} AS k FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = q.queue \
                  AND j.status IN (0, 6) AND j.workflow_run_id IS NOT NULL AND {GROUP} {op} {after} ORDER BY 1 LIMIT 1) AS x)"
        )
    };
    let first_op = if from_start { ">=" } else { ">" };
    let (bound_step, bound_out) =
        if bounded { (" AND g.k COLLATE \"C\" < $4", " AND g.k COLLATE \"C\" <= $4") } else { ("", "") };
    format!(
        "WITH RECURSIVE g(k) AS ( \
            SELECT {first} \
            UNION ALL \
            SELECT {step} FROM g WHERE g.k IS NOT NULL{bound_step}) \
         SELECT g.k, c.id, $4::text AS bound FROM g CROSS JOIN LATERAL \
           (SELECT j.id FROM unnest($2::text[]) AS q(queue) CROSS JOIN LATERAL \
              (SELECT j.id, j.priority, j.run_at FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = q.queue \
                 AND j.status IN (0, 6) AND j.workflow_run_id IS NOT NULL AND {GROUP} = g.k AND j.run_at <= $5 AND {served} \
                 AND j.id <> ALL($9::uuid[]) \
               ORDER BY j.priority DESC, j.run_at, j.id LIMIT 1) AS j \
            ORDER BY j.priority DESC, j.run_at, j.id LIMIT 1) AS c \
         WHERE g.k IS NOT NULL{bound_out} AND NOT (g.k COLLATE \"C\" = ANY($8::text[])) \
         LIMIT 1",
        first = next("$3::text COLLATE \"C\"", first_op),
        step = next("g.k", ">"),
        served = served(6, 7),
    )
}

/// Locks a job the search chose, unless another transaction holds it or claimed it.
fn take_sql() -> String {
    format!(
        "SELECT {} FROM {{S}}.jobs j WHERE j.id = $1 AND j.status IN (0, 6) AND j.workflow_run_id IS NOT NULL AND j.run_at <= $2 FOR UPDATE SKIP LOCKED",
        state_cols("j")
    )
}

/// The fair claim's advisory lock key: one per schema and namespace.
pub(crate) fn fair_lock_key(schema: &str, ns: &str) -> i64 {
    fingerprint(&["flexiq-fair-claim", schema, ns]) as i64
}

/// What a claim matches: queues, served pairs and the clock.
struct Scope<'a> {
    queues: Vec<String>,
    workflows: Vec<&'a str>,
    versions: Vec<Option<&'a str>>,
    now: i64,
}

/// What the transactional path may still take from each eligible queue: `None` for a queue
/// without limits, else what is left of its grant.
struct Grants(Vec<(String, Option<u32>)>);

impl Grants {
    /// The queues that can give one more job, in name order.
    fn open(&self) -> Vec<String> {
        self.0.iter().filter(|(_, g)| g.is_none_or(|g| g > 0)).map(|(q, _)| q.clone()).collect()
    }

    /// Counts one job taken from `queue`.
    fn take(&mut self, queue: &str) {
        if let Some((_, Some(g))) = self.0.iter_mut().find(|(q, _)| q == queue) {
            *g = g.saturating_sub(1);
        }
    }
}

impl PgStore {
    pub(crate) async fn claim_fair_jobs(&self, req: ClaimFairRequest) -> Result<Vec<ClaimedJob>> {
        req.validate()?;
        if !self.fair_limited.recent(req.now) {
            if let Some(claimed) = self.claim_fair_free(&req).await? {
                self.announce_claimed(&claimed);
                return Ok(claimed);
            }
            self.fair_limited.seen(req.now);
        }
        self.claim_fair_locked(req).await
    }

    /// The transactional path, for claims that may meet limited queues.
    pub(crate) async fn claim_fair_locked(&self, req: ClaimFairRequest) -> Result<Vec<ClaimedJob>> {
        let ns: &str = &self.ns;
        let now = req.now;
        let n = req.workers.len() as u32;
        let what = "fair claim";
        let free_sql = self.sql(
            "SELECT queue FROM {S}.queues WHERE namespace = $1 AND queue = ANY($2) AND NOT paused \
             AND rate_count IS NULL AND concurrency IS NULL",
        );
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let claimed = c
            .tx_lazy(async {
                c.begin_relaxed().await?;
                if req.group_cap.is_some() {
                    let key = fair_lock_key(self.schema(), ns);
                    c.exec(what, "SELECT pg_advisory_xact_lock($1)", &[&key]).await?;
                }
                let limited_rows = c.rows(what, &self.sql(LOCK_LIMITED), &[&ns, &req.queues]).await?;
                let mut limited = self.limited_caps(&c, &limited_rows, n, now).await?;
                let mut grants: Vec<(String, Option<u32>)> = c
                    .rows(what, &free_sql, &[&ns, &req.queues])
                    .await?
                    .iter()
                    .map(|r| (r.get(0), None))
                    .collect();
                grants.extend(
                    limited.iter().filter(|l| l.granted > 0).map(|l| (l.queue.clone(), Some(l.granted))),
                );
                grants.sort();
                let mut grants = Grants(grants);
                let scope = Scope {
                    queues: grants.open(),
                    workflows: req.serves.iter().map(|s| s.workflow_id.as_str()).collect(),
                    versions: req.serves.iter().map(|s| s.definition_version.as_deref()).collect(),
                    now,
                };
                let rows = match (scope.queues.is_empty(), req.group_cap) {
                    (true, _) => Vec::new(),
                    (false, None) => self.best_jobs(&c, &scope, &grants, n).await?,
                    (false, Some(cap)) => self.fair_jobs(&c, &req.queues, scope, &mut grants, cap, n).await?,
                };
                let mut changes = Vec::with_capacity(rows.len());
                for (r, worker) in rows.iter().zip(&req.workers) {
                    let l = loaded(r, 0)?;
                    let next =
                        transition(&l.state, &Event::Claim, now).map_err(|x| x.into_error(&l.state.id))?;
                    let mut ch = Change::new(l, next);
                    ch.worker = Some(worker.clone());
                    changes.push(ch);
                }
                if !limited.is_empty() {
                    self.settle_tokens(&c, &mut limited, &changes, now).await?;
                }
                let order: Vec<Uuid> = changes.iter().map(|ch| ch.before.id).collect();
                let updated = self.write_and_commit(&c, &changes, now, true, &mut fx).await?;
                let mut by_id: HashMap<Uuid, Row> =
                    updated.into_iter().map(|r| (r.get::<_, Uuid>(0), r)).collect();
                let mut out = Vec::with_capacity(order.len());
                for id in order {
                    let r = by_id.remove(&id).ok_or_else(|| {
                        Error::backend(format!("fair claim of job {} wrote no row", jid(id)))
                    })?;
                    let j = job(&r)?;
                    let fence = Fence { attempt: j.attempt, started_at: now, claim_seq: j.claim_seq };
                    out.push(ClaimedJob { job: j, fence });
                }
                Ok(out)
            })
            .await?;
        self.shared.hub.publish(&self.ns, false, &fx.jobs);
        Ok(claimed)
    }

    /// The best `n` jobs without fairness, each queue within its grant, locked.
    async fn best_jobs(&self, c: &Conn, scope: &Scope<'_>, grants: &Grants, n: u32) -> Result<Vec<Row>> {
        let ns: &str = &self.ns;
        let caps: Vec<i64> = scope
            .queues
            .iter()
            .map(|q| {
                let g = grants.0.iter().find(|(name, _)| name == q).and_then(|(_, g)| *g);
                i64::from(g.unwrap_or(n).min(n))
            })
            .collect();
        c.rows(
            "fair claim",
            &self.sql(&best_sql()),
            &[&ns, &scope.queues, &scope.now, &scope.workflows, &scope.versions, &i64::from(n), &caps],
        )
        .await
    }

    /// Up to `n` jobs as that many single claims in a row would take them: each the best job
    /// of the first group after the cursor that is below `cap` running jobs in `counted`
    /// queues (counting the jobs already picked), locked; the cursor moves to the last pick's
    /// group.
    async fn fair_jobs(
        &self,
        c: &Conn,
        counted: &[String],
        mut scope: Scope<'_>,
        grants: &mut Grants,
        cap: u32,
        n: u32,
    ) -> Result<Vec<Row>> {
        let ns: &str = &self.ns;
        let what = "fair claim";
        // Only groups this claim could fill matter: those with at least cap - n running.
        let busy_sql = self.sql(&format!(
            "SELECT {GROUP}, count(*) FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = ANY($2) AND j.status = 1 \
             GROUP BY 1 HAVING count(*) >= $3"
        ));
        let floor = (i64::from(cap) - i64::from(n)).max(1);
        let mut running: HashMap<String, i64> = c
            .rows(what, &busy_sql, &[&ns, &counted, &floor])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let cursor_sql = self.sql("SELECT group_key FROM {S}.fair_cursors WHERE namespace = $1");
        let mut cursor: Option<String> = c.opt(what, &cursor_sql, &[&ns]).await?.map(|r| r.get(0));
        let take = self.sql(&take_sql());
        // Jobs this claim took or found taken: the search passes over them.
        let mut passed: Vec<Uuid> = Vec::new();
        let mut out = Vec::new();
        while out.len() < n as usize && !scope.queues.is_empty() {
            let full: Vec<&str> =
                running.iter().filter(|(_, k)| **k >= i64::from(cap)).map(|(g, _)| g.as_str()).collect();
            let Some((group, row)) =
                self.pick(c, &scope, cursor.as_deref(), &full, &mut passed, &take).await?
            else {
                break;
            };
            let l = loaded(&row, 0)?;
            passed.push(l.id);
            grants.take(&l.queue);
            *running.entry(group.clone()).or_default() += 1;
            cursor = Some(group);
            out.push(row);
            scope.queues = grants.open();
        }
        if let Some(group) = &cursor {
            if !out.is_empty() {
                let store = self.sql(
                    "INSERT INTO {S}.fair_cursors (namespace, group_key) VALUES ($1, $2) \
                     ON CONFLICT (namespace) DO UPDATE SET group_key = excluded.group_key",
                );
                c.exec(what, &store, &[&ns, group]).await?;
            }
        }
        Ok(out)
    }

    /// One single claim's pick: the best job of the first group after `cursor` (wrapping)
    /// that is not `full`, locked, with its group; jobs found taken join `passed`.
    async fn pick(
        &self,
        c: &Conn,
        scope: &Scope<'_>,
        cursor: Option<&str>,
        full: &[&str],
        passed: &mut Vec<Uuid>,
        take: &str,
    ) -> Result<Option<(String, Row)>> {
        let ns: &str = &self.ns;
        let what = "fair claim";
        // After the cursor to the last group, then from the first group up to the cursor:
        // (from_start, bounded, after).
        let passes: Vec<(bool, bool, &str)> = match cursor {
            Some(k) => vec![(false, false, k), (true, true, "")],
            None => vec![(true, false, "")],
        };
        let bound = cursor.unwrap_or_default();
        for (from_start, bounded, after) in passes {
            let search = self.sql(&search_sql(from_start, bounded));
            for _ in 0..MAX_SEARCHES {
                let found = c
                    .opt(
                        what,
                        &search,
                        &[
                            &ns,
                            &scope.queues,
                            &after,
                            &bound,
                            &scope.now,
                            &scope.workflows,
                            &scope.versions,
                            &full,
                            &*passed,
                        ],
                    )
                    .await?;
                let Some(f) = found else { break };
                let (group, id): (String, Uuid) = (f.get(0), f.get(1));
                if let Some(row) = c.opt(what, take, &[&id, &scope.now]).await? {
                    return Ok(Some((group, row)));
                }
                passed.push(id);
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_wrapping_search_is_bounded_by_the_cursor() {
        assert!(search_sql(true, true).contains("<= $4"));
        assert!(!search_sql(true, false).contains("<= $4"));
        assert!(search_sql(false, false).contains("> $3"));
        assert!(search_sql(true, false).contains(">= $3"));
    }
}
