//! The fair claim of workflow jobs: one job of the served workflows, with running jobs capped
//! per fairness group and groups served round-robin.
//!
//! A fair claim takes a transaction-scoped advisory lock keyed by schema and namespace first,
//! so fair claimers of a namespace run one at a time: each counts the running jobs per group
//! (a fresh statement after the lock sees every earlier fair claim committed) and no two can
//! take a group past its cap. Pause, rate limits and concurrency caps are the claim path's
//! own (`claim.rs`: the limited queues' state rows locked, their grants computed and tokens
//! settled), and the claimed job goes through the same transition and write as any claim, so
//! acks, heartbeats, fences and the job counts cannot tell a fair claim from another.
//!
//! The search is one statement over `jobs_fair_claim` (namespace, queue, group, priority,
//! run_at, id on claimable rows): a recursive loose index scan walks the distinct groups after
//! the namespace's cursor in byte order (`COLLATE "C"`, as the other stores compare keys), each
//! step one index descent per queue, skipping groups at their cap, and stops at the first
//! group whose best job is due and served. A claim costs O(groups skipped), not O(backlog).
//! The chosen job is then locked with `SKIP LOCKED` (an ordinary claim may hold it); when it
//! is taken the search runs again without it. The served group becomes the new cursor in the
//! same transaction.

use flexiq_core::cursor::fingerprint;
use flexiq_core::store::ClaimFairRequest;
use flexiq_core::transition::{transition, Event};
use flexiq_core::{ClaimedJob, Fence, Result};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::apply::{Change, Effects};
use crate::claim::LOCK_LIMITED;
use crate::db::Conn;
use crate::row::{job, loaded, state_cols};
use crate::store::PgStore;

/// How many times a fair claim searches again after its chosen job was taken under it.
const MAX_SEARCHES: usize = 32;

/// A job's fairness group, as the fair index holds it.
const GROUP: &str = "coalesce(j.group_key, '') COLLATE \"C\"";

/// Served (workflow, version) pairs, `$a`/`$b` the workflow ids and versions (NULL: any).
fn served(a: u32, b: u32) -> String {
    format!(
        "(cardinality(${a}::text[]) = 0 OR EXISTS (SELECT 1 FROM unnest(${a}::text[], ${b}::text[]) AS s(w, v) \
           WHERE s.w = j.task AND (s.v IS NULL OR s.v = j.workflow_version)))"
    )
}

/// The best due, served job of queues `$2` without fairness: `$3` now, `$4`/`$5` served.
fn best_sql() -> String {
    format!(
        "SELECT {cols} FROM unnest($2::text[]) AS qs(queue) CROSS JOIN LATERAL \
           (SELECT * FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = qs.queue AND j.status IN (0, 6) AND j.workflow_run_id IS NOT NULL \
              AND j.run_at <= $3 AND {served} \
            ORDER BY j.priority DESC, j.run_at, j.id LIMIT 1 FOR UPDATE SKIP LOCKED) AS j \
         ORDER BY j.priority DESC, j.run_at, j.id LIMIT 1",
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
fn fair_lock_key(schema: &str, ns: &str) -> i64 {
    fingerprint(&["flexiq-fair-claim", schema, ns]) as i64
}

/// What a claim matches: queues, served pairs and the clock.
struct Scope<'a> {
    queues: Vec<String>,
    workflows: Vec<&'a str>,
    versions: Vec<Option<&'a str>>,
    now: i64,
}

impl PgStore {
    pub(crate) async fn claim_fair_job(&self, req: ClaimFairRequest) -> Result<Option<ClaimedJob>> {
        req.validate()?;
        let ns: &str = &self.ns;
        let now = req.now;
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
                let mut limited = self.limited_caps(&c, &limited_rows, 1, now).await?;
                let mut queues: Vec<String> =
                    c.rows(what, &free_sql, &[&ns, &req.queues]).await?.iter().map(|r| r.get(0)).collect();
                queues.extend(limited.iter().filter(|l| l.granted > 0).map(|l| l.queue.clone()));
                queues.sort();
                let scope = Scope {
                    queues,
                    workflows: req.serves.iter().map(|s| s.workflow_id.as_str()).collect(),
                    versions: req.serves.iter().map(|s| s.definition_version.as_deref()).collect(),
                    now,
                };
                let row = match (scope.queues.is_empty(), req.group_cap) {
                    (true, _) => None,
                    (false, None) => self.best_job(&c, &scope).await?,
                    (false, Some(cap)) => self.fair_job(&c, &req.queues, &scope, cap).await?,
                };
                let mut changes = Vec::with_capacity(1);
                if let Some(r) = &row {
                    let l = loaded(r, 0)?;
                    let next =
                        transition(&l.state, &Event::Claim, now).map_err(|x| x.into_error(&l.state.id))?;
                    let mut ch = Change::new(l, next);
                    ch.worker = Some(req.worker_id.clone());
                    changes.push(ch);
                }
                if !limited.is_empty() {
                    self.settle_tokens(&c, &mut limited, &changes, now).await?;
                }
                let updated = self.write_and_commit(&c, &changes, now, true, &mut fx).await?;
                match updated.first() {
                    None => Ok(None),
                    Some(r) => {
                        let j = job(r)?;
                        let fence = Fence { attempt: j.attempt, started_at: now, claim_seq: j.claim_seq };
                        Ok(Some(ClaimedJob { job: j, fence }))
                    }
                }
            })
            .await?;
        self.shared.hub.publish(&self.ns, false, &fx.jobs);
        Ok(claimed)
    }

    /// The best job without fairness, locked.
    async fn best_job(&self, c: &Conn, scope: &Scope<'_>) -> Result<Option<Row>> {
        let ns: &str = &self.ns;
        c.opt(
            "fair claim",
            &self.sql(&best_sql()),
            &[&ns, &scope.queues, &scope.now, &scope.workflows, &scope.versions],
        )
        .await
    }

    /// The best job of the first group after the cursor that is below `cap` running jobs in
    /// `counted` queues, locked; the cursor moves to its group.
    async fn fair_job(
        &self,
        c: &Conn,
        counted: &[String],
        scope: &Scope<'_>,
        cap: u32,
    ) -> Result<Option<Row>> {
        let ns: &str = &self.ns;
        let what = "fair claim";
        let full_sql = self.sql(&format!(
            "SELECT {GROUP} FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = ANY($2) AND j.status = 1 \
             GROUP BY 1 HAVING count(*) >= $3"
        ));
        let full: Vec<String> = c
            .rows(what, &full_sql, &[&ns, &counted, &i64::from(cap)])
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let cursor_sql = self.sql("SELECT group_key FROM {S}.fair_cursors WHERE namespace = $1");
        let cursor: Option<String> = c.opt(what, &cursor_sql, &[&ns]).await?.map(|r| r.get(0));
        // After the cursor to the last group, then from the first group up to the cursor:
        // (from_start, bounded, after).
        let passes: Vec<(bool, bool, String)> = match &cursor {
            Some(k) => vec![(false, false, k.clone()), (true, true, String::new())],
            None => vec![(true, false, String::new())],
        };
        let bound = cursor.clone().unwrap_or_default();
        let take = self.sql(&take_sql());
        let mut skipped: Vec<Uuid> = Vec::new();
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
                            &skipped,
                        ],
                    )
                    .await?;
                let Some(f) = found else { break };
                let (group, id): (String, Uuid) = (f.get(0), f.get(1));
                if let Some(row) = c.opt(what, &take, &[&id, &scope.now]).await? {
                    let store = self.sql(
                        "INSERT INTO {S}.fair_cursors (namespace, group_key) VALUES ($1, $2) \
                         ON CONFLICT (namespace) DO UPDATE SET group_key = excluded.group_key",
                    );
                    c.exec(what, &store, &[&ns, &group]).await?;
                    return Ok(Some(row));
                }
                skipped.push(id);
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
