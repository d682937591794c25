//! The fair claim of workflow jobs, on the writer thread.
//!
//! A fair claim takes one workflow job (a row with a run id) of the requested queues whose
//! task and definition version a host serves. Each queue is admitted as a plain claim admits
//! it (pause, concurrency cap, rate limit), and the chosen row goes through the same claim
//! transition as every claim, so its acks, heartbeats and fences are a plain claim's.
//!
//! With a group cap, the claim walks the groups that have claimable workflow rows (the
//! `jobs_fair` index, ordered by `COALESCE(group_key, '')`, so the default group is `''` and
//! sorts first) starting strictly after the namespace's cursor in `fair_cursor`, wrapping round
//! to the smallest and ending with the cursor's own group. It skips a group whose running jobs
//! in the requested queues reach the cap, takes the best due, served row of the first group
//! that has one, and stores that group as the new cursor in the same transaction. Each group
//! visited costs one seek per queue for the next group, one for its running count (grouped
//! rows through `jobs_group_running`; the default group's as the queue's running counter minus
//! the grouped rows) and one for its best row, which scans past rows of that group that are
//! not yet due or not served. The single writer makes the count and the claim atomic, so
//! parallel claimers never take a group past its cap.

use flexiq_core::store::{ClaimFairRequest, WorkflowServes};
use flexiq_core::{ClaimedJob, Error, JobStatus, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::claim::{admit, candidate_from_row, candidate_select, take, Candidate, Grant};
use crate::error::SqlResultExt;
use crate::writer::WriteCtx;

/// Whether a row is one the host serves: parameter `?{p}` is a JSON array of `[workflow,
/// version or null]` pairs, or null to serve every workflow.
fn served(p: u8) -> String {
    format!(
        "(?{p} IS NULL OR EXISTS (SELECT 1 FROM json_each(?{p}) AS s
            WHERE s.value ->> 0 = jobs.task AND (s.value ->> 1 IS NULL OR s.value ->> 1 = jobs.wf_version)))"
    )
}

/// The best due (`?3` now), served (`?4`) workflow row of one queue.
pub(crate) fn best_sql() -> String {
    format!(
        "{} WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6) AND wf_run IS NOT NULL AND run_at <= ?3
           AND {}
         ORDER BY priority DESC, run_at, id LIMIT 1",
        candidate_select(),
        served(4)
    )
}

/// The best due (`?4` now), served (`?5`) workflow row of group `?3` of one queue.
pub(crate) fn best_in_group_sql() -> String {
    format!(
        "{} WHERE ns = ?1 AND queue = ?2 AND COALESCE(group_key, '') = ?3 AND status IN (0, 6)
           AND wf_run IS NOT NULL AND run_at <= ?4 AND {}
         ORDER BY priority DESC, run_at, id LIMIT 1",
        candidate_select(),
        served(5)
    )
}

/// The smallest group with claimable workflow rows in one queue.
pub(crate) const FIRST_GROUP: &str = "SELECT COALESCE(group_key, '') FROM jobs
    WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6) AND wf_run IS NOT NULL
    ORDER BY COALESCE(group_key, '') LIMIT 1";

/// The next group after `?3` with claimable workflow rows in one queue.
pub(crate) const NEXT_GROUP: &str = "SELECT COALESCE(group_key, '') FROM jobs
    WHERE ns = ?1 AND queue = ?2 AND COALESCE(group_key, '') > ?3 AND status IN (0, 6)
      AND wf_run IS NOT NULL
    ORDER BY COALESCE(group_key, '') LIMIT 1";

/// Running jobs of group `?3` (a group key) in one queue.
pub(crate) const GROUP_RUNNING: &str = "SELECT COUNT(*) FROM jobs
    WHERE ns = ?1 AND queue = ?2 AND group_key = ?3 AND status = 1 AND group_key IS NOT NULL";

/// Running jobs with any group key in one queue.
pub(crate) const GROUPED_RUNNING: &str = "SELECT COUNT(*) FROM jobs
    WHERE ns = ?1 AND queue = ?2 AND status = 1 AND group_key IS NOT NULL";

/// The group the namespace's last fair claim served.
pub(crate) const READ_CURSOR: &str = "SELECT group_key FROM fair_cursor WHERE ns = ?1";

const WRITE_CURSOR: &str = "INSERT INTO fair_cursor (ns, group_key) VALUES (?1, ?2)
    ON CONFLICT (ns) DO UPDATE SET group_key = excluded.group_key";

/// The served pairs as the JSON parameter of [`served`]; `None` serves every workflow.
fn served_param(serves: &[WorkflowServes]) -> Result<Option<String>> {
    if serves.is_empty() {
        return Ok(None);
    }
    let pairs: Vec<(&str, Option<&str>)> =
        serves.iter().map(|s| (s.workflow_id.as_str(), s.definition_version.as_deref())).collect();
    serde_json::to_string(&pairs).map(Some).map_err(|e| Error::backend(format!("served workflows: {e}")))
}

/// The requested queues and what each admits to this claim.
struct Queues<'a> {
    names: Vec<String>,
    grants: Vec<Grant>,
    served: &'a Option<String>,
    now: i64,
}

impl Queues<'_> {
    /// Indexes of the queues that may give a job.
    fn open(&self) -> impl Iterator<Item = usize> + '_ {
        self.grants.iter().enumerate().filter(|(_, g)| g.budget > 0).map(|(i, _)| i)
    }

    /// The best row over the open queues by priority, then `run_at`, then id; `group` limits
    /// it to one group.
    fn best(&self, conn: &Connection, ns: &str, group: Option<&str>) -> Result<Option<Candidate>> {
        let sql = if group.is_some() { best_in_group_sql() } else { best_sql() };
        let mut stmt = conn.prepare_cached(&sql).db()?;
        let mut best: Option<Candidate> = None;
        for qi in self.open() {
            let q = &self.names[qi];
            let row = match group {
                Some(g) => stmt.query_row((ns, q, g, self.now, self.served), |r| candidate_from_row(r, qi)),
                None => stmt.query_row((ns, q, self.now, self.served), |r| candidate_from_row(r, qi)),
            }
            .optional()
            .db()?;
            let Some(c) = row else { continue };
            let better = best.as_ref().is_none_or(|b| {
                (std::cmp::Reverse(c.job.priority), c.job.run_at, &c.job.id)
                    < (std::cmp::Reverse(b.job.priority), b.job.run_at, &b.job.id)
            });
            if better {
                best = Some(c);
            }
        }
        Ok(best)
    }

    /// The smallest group over the open queues after `after` (from the start when `None`).
    fn next_group(&self, conn: &Connection, ns: &str, after: Option<&str>) -> Result<Option<String>> {
        let mut next: Option<String> = None;
        for qi in self.open() {
            let q = &self.names[qi];
            let g: Option<String> = match after {
                None => conn.prepare_cached(FIRST_GROUP).db()?.query_row((ns, q), |r| r.get(0)),
                Some(a) => conn.prepare_cached(NEXT_GROUP).db()?.query_row((ns, q, a), |r| r.get(0)),
            }
            .optional()
            .db()?;
            if let Some(g) = g {
                if next.as_ref().is_none_or(|n| g < *n) {
                    next = Some(g);
                }
            }
        }
        Ok(next)
    }

    /// Running jobs of `group` over every requested queue (open or not).
    fn running(&self, ctx: &WriteCtx<'_>, ns: &str, group: &str) -> Result<i64> {
        let mut n = 0;
        for q in &self.names {
            if group.is_empty() {
                let grouped: i64 =
                    ctx.conn.prepare_cached(GROUPED_RUNNING).db()?.query_row((ns, q), |r| r.get(0)).db()?;
                n += ctx.count(ns, q, JobStatus::Running)? - grouped;
            } else {
                let in_group: i64 = ctx
                    .conn
                    .prepare_cached(GROUP_RUNNING)
                    .db()?
                    .query_row((ns, q, group), |r| r.get(0))
                    .db()?;
                n += in_group;
            }
        }
        Ok(n)
    }

    /// The first group after `cursor` (wrapping, the cursor's own group last) below `cap`
    /// running jobs that has a due, served row, and that row.
    fn fair(
        &self,
        ctx: &WriteCtx<'_>,
        ns: &str,
        cap: u32,
        cursor: Option<&str>,
    ) -> Result<Option<Candidate>> {
        let mut after: Option<String> = cursor.map(str::to_string);
        let mut wrapped = cursor.is_none();
        loop {
            let group = match self.next_group(ctx.conn, ns, after.as_deref())? {
                Some(g) if wrapped && cursor.is_some_and(|c| g.as_str() > c) => return Ok(None),
                Some(g) => g,
                None if wrapped => return Ok(None),
                None => {
                    wrapped = true;
                    after = None;
                    continue;
                }
            };
            if self.running(ctx, ns, &group)? < i64::from(cap) {
                if let Some(c) = self.best(ctx.conn, ns, Some(&group))? {
                    return Ok(Some(c));
                }
            }
            after = Some(group);
        }
    }
}

/// Claims one workflow job of `ns` (see the module docs).
pub(crate) fn claim_fair(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    req: &ClaimFairRequest,
) -> Result<Option<ClaimedJob>> {
    let now = req.now;
    let mut names = req.queues.clone();
    names.sort();
    names.dedup();
    let served = served_param(&req.serves)?;
    let mut grants = Vec::with_capacity(names.len());
    for q in &names {
        grants.push(admit(ctx, ns, q, 1, now)?);
    }
    let queues = Queues { names, grants, served: &served, now };
    let found = if queues.open().next().is_none() {
        None
    } else if let Some(cap) = req.group_cap {
        let cursor: Option<String> =
            ctx.conn.prepare_cached(READ_CURSOR).db()?.query_row([ns], |r| r.get(0)).optional().db()?;
        queues.fair(ctx, ns, cap, cursor.as_deref())?
    } else {
        queues.best(ctx.conn, ns, None)?
    };
    let Queues { names, grants, .. } = queues;
    for (qi, grant) in grants.into_iter().enumerate() {
        let used = u32::from(found.as_ref().is_some_and(|c| c.queue == qi));
        grant.settle(ctx.conn, ns, &names[qi], used)?;
    }
    let Some(found) = found else { return Ok(None) };
    let group = found.job.group_key.clone().unwrap_or_default();
    let claimed = take(ctx, ns, vec![found], now, &req.worker_id)?.pop();
    if claimed.is_some() && req.group_cap.is_some() {
        ctx.conn.prepare_cached(WRITE_CURSOR).db()?.execute((ns, &group)).db()?;
    }
    Ok(claimed)
}
