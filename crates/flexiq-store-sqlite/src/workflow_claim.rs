//! The fair claim of workflow jobs, on the writer thread.
//!
//! A fair claim takes up to one workflow job (a row with a run id) per worker from the
//! requested queues, of tasks and definition versions a host serves. Each queue is admitted
//! once for the whole batch as a plain claim admits it (pause, concurrency cap, rate limit,
//! asking for as many jobs as there are workers), and every pick draws on that grant, so a
//! batch never takes more than the queue allows. The chosen rows go through the same claim
//! transition as every claim, so their acks, heartbeats and fences are a plain claim's.
//!
//! A batch takes the jobs that that many single claims in a row would take. Nothing is written
//! until the picks are done, so what a single claim would read again (the group walk, each
//! group's running count, the queue grants, the cursor) is kept in memory and moved by each
//! pick: a pick adds one to its group's running count and its queue's use, and moves the
//! cursor to its group; the next best row of that group and queue is read after the picked
//! one, in claim order, when the walk comes back to it.
//!
//! With a group cap, each pick walks the groups that have claimable workflow rows (the
//! `jobs_fair` index, ordered by `COALESCE(group_key, '')`, so the default group is `''` and
//! sorts first) starting strictly after the cursor (first the namespace's `fair_cursor`, then
//! the group of the batch's previous pick), wrapping round to the smallest and ending with the
//! cursor's own group. It skips a group whose running jobs in the requested queues reach the
//! cap and takes the best due, served row of the first group that has one. The batch stores
//! its last pick's group as the new cursor in the same transaction. The first visit of a group
//! costs one seek per queue for the next group, one for its running count (grouped rows through
//! `jobs_group_running`; the default group's as the queue's running counter minus the grouped
//! rows) and one for its best row, which scans past rows of that group that are not yet due or
//! not served; later visits in the batch cost one seek for the row after a pick. Without a cap
//! the batch reads each queue's best rows once, as many as its grant, and keeps the best. The
//! single writer makes the counts and the claims atomic, so parallel claimers never take a
//! group past its cap.

use std::collections::HashMap;

use flexiq_core::store::{ClaimFairRequest, WorkflowServes};
use flexiq_core::{ClaimedJob, Error, JobId, JobStatus, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::claim::{admit, candidate_from_row, candidate_select, take, Candidate, Claimers};
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

/// The best `?5` due (`?3` now), served (`?4`) workflow rows of one queue, in claim order.
pub(crate) fn best_sql() -> String {
    format!(
        "{} WHERE ns = ?1 AND queue = ?2 AND status IN (0, 6) AND wf_run IS NOT NULL AND run_at <= ?3
           AND {}
         ORDER BY priority DESC, run_at, id LIMIT ?5",
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

/// The best row of [`best_in_group_sql`] after the row with priority `?6`, `run_at` `?7` and
/// id `?8` in claim order: the next one once that row was picked.
pub(crate) fn next_in_group_sql() -> String {
    format!(
        "{} WHERE ns = ?1 AND queue = ?2 AND COALESCE(group_key, '') = ?3 AND status IN (0, 6)
           AND wf_run IS NOT NULL AND run_at <= ?4
           AND (priority < ?6 OR (priority = ?6 AND (run_at > ?7 OR (run_at = ?7 AND id > ?8))))
           AND {}
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

/// A row's place in claim order: priority (higher first), then `run_at`, then id.
type ClaimKey = (std::cmp::Reverse<i32>, i64, JobId);

fn claim_key(c: &Candidate) -> ClaimKey {
    (std::cmp::Reverse(c.job.priority), c.job.run_at, c.job.id.clone())
}

/// What the batch knows of the best unpicked row of one queue in one group.
enum Head {
    /// Not read yet.
    Unread,
    /// Read: the row, or `None` when the group has no more in that queue.
    Read(Option<Box<Candidate>>),
    /// The row with this key was picked; the next one is read after it.
    After(ClaimKey),
}

/// What the batch knows of one group.
struct Group {
    /// Running jobs over every requested queue, this batch's picks included.
    running: i64,
    /// The best unpicked row of each requested queue, by queue index.
    heads: Vec<Head>,
}

/// The requested queues, what each still admits to this batch, and what the batch has read.
struct Batch<'a> {
    names: Vec<String>,
    /// Jobs each queue may still give this batch.
    left: Vec<u32>,
    served: &'a Option<String>,
    now: i64,
    /// The group after each group (`None`: before the first) with claimable rows.
    links: HashMap<Option<String>, Option<String>>,
    groups: HashMap<String, Group>,
}

impl Batch<'_> {
    /// Indexes of the queues that may still give a job.
    fn open(&self) -> impl Iterator<Item = usize> + '_ {
        self.left.iter().enumerate().filter(|(_, n)| **n > 0).map(|(i, _)| i)
    }

    /// The best rows over the open queues by claim order, at most `want` and at most each
    /// queue's grant from it.
    fn best(&self, conn: &Connection, ns: &str, want: usize) -> Result<Vec<Candidate>> {
        let mut stmt = conn.prepare_cached(&best_sql()).db()?;
        let mut found: Vec<Candidate> = Vec::new();
        for qi in self.open() {
            let q = &self.names[qi];
            let rows = stmt
                .query_map((ns, q, self.now, self.served, self.left[qi]), |r| candidate_from_row(r, qi))
                .db()?;
            for row in rows {
                found.push(row.db()?);
            }
        }
        found.sort_by_cached_key(claim_key);
        found.truncate(want);
        Ok(found)
    }

    /// The smallest group over the queues open when first asked after `after` (from the start
    /// when `None`). Groups only lose rows while the batch runs (to its own picks, which the
    /// walk finds spent), so the first answer stands.
    fn next_group(&mut self, conn: &Connection, ns: &str, after: Option<&str>) -> Result<Option<String>> {
        let key = after.map(str::to_string);
        if let Some(next) = self.links.get(&key) {
            return Ok(next.clone());
        }
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
        self.links.insert(key, next.clone());
        Ok(next)
    }

    /// Running jobs of `group` over every requested queue (open or not), as stored.
    fn stored_running(&self, ctx: &WriteCtx<'_>, ns: &str, group: &str) -> Result<i64> {
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

    /// What the batch knows of `group`, its running count read on the first visit.
    fn group(&mut self, ctx: &WriteCtx<'_>, ns: &str, group: &str) -> Result<&mut Group> {
        if !self.groups.contains_key(group) {
            let running = self.stored_running(ctx, ns, group)?;
            let heads = self.names.iter().map(|_| Head::Unread).collect();
            self.groups.insert(group.to_string(), Group { running, heads });
        }
        self.groups.get_mut(group).ok_or_else(|| Error::backend(format!("fair claim lost group {group:?}")))
    }

    /// Reads the head of queue `qi` in `group` if the batch has not yet.
    fn read_head(&mut self, conn: &Connection, ns: &str, group: &str, qi: usize) -> Result<()> {
        let (q, now, served) = (&self.names[qi], self.now, self.served);
        let Some(g) = self.groups.get_mut(group) else { return Ok(()) };
        let row = match &g.heads[qi] {
            Head::Read(_) => return Ok(()),
            Head::Unread => conn
                .prepare_cached(&best_in_group_sql())
                .db()?
                .query_row((ns, q, group, now, served), |r| candidate_from_row(r, qi)),
            Head::After((std::cmp::Reverse(priority), run_at, id)) => {
                conn.prepare_cached(&next_in_group_sql()).db()?.query_row(
                    rusqlite::params![ns, q, group, now, served, priority, run_at, id.as_str()],
                    |r| candidate_from_row(r, qi),
                )
            }
        }
        .optional()
        .db()?;
        g.heads[qi] = Head::Read(row.map(Box::new));
        Ok(())
    }

    /// Picks the best unpicked row of `group` over the open queues, counting it as running.
    fn pick_in(&mut self, ctx: &WriteCtx<'_>, ns: &str, group: &str) -> Result<Option<Candidate>> {
        self.group(ctx, ns, group)?;
        let open: Vec<usize> = self.open().collect();
        for &qi in &open {
            self.read_head(ctx.conn, ns, group, qi)?;
        }
        let g = self.group(ctx, ns, group)?;
        let mut best: Option<(usize, ClaimKey)> = None;
        for &qi in &open {
            if let Head::Read(Some(c)) = &g.heads[qi] {
                let key = claim_key(c);
                if best.as_ref().is_none_or(|(_, b)| key < *b) {
                    best = Some((qi, key));
                }
            }
        }
        let Some((qi, key)) = best else { return Ok(None) };
        let Head::Read(picked) = std::mem::replace(&mut g.heads[qi], Head::After(key)) else {
            return Ok(None);
        };
        g.running += 1;
        Ok(picked.map(|c| *c))
    }

    /// The next pick under `cap`: the best row of the first group after `cursor` (wrapping, the
    /// cursor's own group last) below the cap that has one, and that group.
    fn fair(
        &mut self,
        ctx: &WriteCtx<'_>,
        ns: &str,
        cap: u32,
        cursor: Option<&str>,
    ) -> Result<Option<(Candidate, String)>> {
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
            if self.group(ctx, ns, &group)?.running < i64::from(cap) {
                if let Some(c) = self.pick_in(ctx, ns, &group)? {
                    return Ok(Some((c, group)));
                }
            }
            after = Some(group);
        }
    }

    /// Up to `want` picks under `cap` from `cursor` on, and the group of the last one.
    fn fair_picks(
        &mut self,
        ctx: &WriteCtx<'_>,
        ns: &str,
        cap: u32,
        want: usize,
        mut cursor: Option<String>,
    ) -> Result<(Vec<Candidate>, Option<String>)> {
        let mut found = Vec::with_capacity(want);
        while found.len() < want && self.open().next().is_some() {
            let Some((c, group)) = self.fair(ctx, ns, cap, cursor.as_deref())? else { break };
            self.left[c.queue] -= 1;
            found.push(c);
            cursor = Some(group);
        }
        Ok((found, cursor))
    }
}

/// Claims up to one workflow job of `ns` per worker of `req` (see the module docs).
pub(crate) fn claim_fair(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    req: &ClaimFairRequest,
) -> Result<Vec<ClaimedJob>> {
    let now = req.now;
    let want = req.workers.len();
    let ask = u32::try_from(want).unwrap_or(u32::MAX);
    let mut names = req.queues.clone();
    names.sort();
    names.dedup();
    let served = served_param(&req.serves)?;
    let mut grants = Vec::with_capacity(names.len());
    for q in &names {
        grants.push(admit(ctx, ns, q, ask, now)?);
    }
    let left = grants.iter().map(|g| g.budget).collect();
    let mut batch =
        Batch { names, left, served: &served, now, links: HashMap::new(), groups: HashMap::new() };
    let mut cursor_to_write = None;
    let found = if batch.open().next().is_none() {
        Vec::new()
    } else if let Some(cap) = req.group_cap {
        let cursor: Option<String> =
            ctx.conn.prepare_cached(READ_CURSOR).db()?.query_row([ns], |r| r.get(0)).optional().db()?;
        let (found, last) = batch.fair_picks(ctx, ns, cap, want, cursor)?;
        if !found.is_empty() {
            cursor_to_write = last;
        }
        found
    } else {
        batch.best(ctx.conn, ns, want)?
    };
    let Batch { names, .. } = batch;
    for (qi, grant) in grants.into_iter().enumerate() {
        let used = found.iter().filter(|c| c.queue == qi).count() as u32;
        grant.settle(ctx.conn, ns, &names[qi], used)?;
    }
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let claimed = take(ctx, ns, found, now, Claimers::of(&req.workers))?;
    if let Some(group) = cursor_to_write.filter(|_| !claimed.is_empty()) {
        ctx.conn.prepare_cached(WRITE_CURSOR).db()?.execute((ns, &group)).db()?;
    }
    Ok(claimed)
}
