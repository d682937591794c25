//! [`Flows`] and the per-edge failure policies behind them.
//!
//! Every `job_deps` row carries its [`EdgePolicy`] code (schema version 7; older edges read 0,
//! the plain `depends_on` meaning). What a finished dependency means for the job waiting on it
//! is decided here once for the whole crate: where a new or re-evaluated job stands over its
//! edges ([`standing`]), the release of dependents when a job completes
//! ([`release_dependents`]), and the walk over dependents when a job fails for good
//! ([`on_failed`]), each edge applying [`EdgePolicy::on_child_failed`]. The rules themselves
//! ([`edge_settled`], [`ChildClass`]) are core's; this file reads the rows they need and fires
//! the events through the state machine.

use flexiq_core::flow::{edge_settled, ChildFailure, EdgePolicy};
use flexiq_core::standing::EdgeRead;
pub(crate) use flexiq_core::standing::Standing;
use flexiq_core::start::DependencyClass;
use flexiq_core::store::{
    ChildDependency, Dependencies, DependenciesRequest, Flows, RemoveChildDependencyRequest,
};
use flexiq_core::transition::{transition, Event};
use flexiq_core::{Error, JobId, JobStatus, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::apply::{fire, write_next, Extras};
use crate::error::SqlResultExt;
use crate::removal::{dependents_of, unflag_dependents};
use crate::row::{job_exists, load_state};
use crate::writer::WriteCtx;
use crate::SqliteStore;

/// The dependents of job `?1` with the policy of each edge.
pub(crate) const DEPENDENTS_WITH_POLICY: &str = "SELECT job_id, policy FROM job_deps WHERE dep_id = ?1";

/// The edges of job `?1` in dependency-id order, with each dependency's status from the hot
/// table or the archive (NULL when it is gone from both).
pub(crate) const EDGES_OF: &str = "SELECT d.dep_id, d.policy, COALESCE(
        (SELECT j.status FROM jobs j WHERE j.id = d.dep_id),
        (SELECT a.status FROM archived_jobs a WHERE a.id = d.dep_id))
    FROM job_deps d WHERE d.job_id = ?1 ORDER BY d.dep_id";

/// One page of job `?1`'s edges: dependencies with an id above `?2`, in id order.
pub(crate) const EDGE_PAGE: &str =
    "SELECT dep_id, policy FROM job_deps WHERE job_id = ?1 AND dep_id > ?2 ORDER BY dep_id LIMIT ?3";

/// A dependency as `get_dependencies` lists it, from the hot table or the archive.
const CHILD: &str = "SELECT queue, task, status, result, last_error FROM jobs WHERE id = ?1 AND ns = ?2
    UNION ALL SELECT queue, task, status, result, last_error FROM archived_jobs WHERE id = ?1 AND ns = ?2
    LIMIT 1";

/// The last error of a job of `ns`, from the hot table or the archive.
const LAST_ERROR: &str = "SELECT last_error FROM jobs WHERE id = ?1 AND ns = ?2
    UNION ALL SELECT last_error FROM archived_jobs WHERE id = ?1 AND ns = ?2 LIMIT 1";

/// One dependency edge of a job, as the rules read it.
#[derive(Debug, Clone)]
pub(crate) struct Edge {
    /// The dependency's id.
    pub(crate) dep: String,
    /// The edge's policy.
    pub(crate) policy: EdgePolicy,
    /// The dependency's status; `None` when it is gone.
    pub(crate) status: Option<JobStatus>,
}

impl Edge {
    /// The edge as core's rules read it.
    pub(crate) fn read(&self) -> EdgeRead<'_> {
        EdgeRead { dep: &self.dep, policy: self.policy, status: self.status }
    }

    /// Whether the dependency failed under `remove_dependency`, so the edge is not kept.
    pub(crate) fn dropped(&self) -> bool {
        self.read().dropped()
    }
}

fn policy_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<EdgePolicy> {
    let code: u8 = r.get(i)?;
    EdgePolicy::from_code(code).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Integer, Box::new(e))
    })
}

/// The edges of job `id`, in dependency-id order.
pub(crate) fn edges_of(conn: &Connection, id: &str) -> Result<Vec<Edge>> {
    let mut stmt = conn.prepare_cached(EDGES_OF).db()?;
    let rows = stmt
        .query_map([id], |r| Ok((r.get::<_, String>(0)?, policy_at(r, 1)?, r.get::<_, Option<u8>>(2)?)))
        .db()?;
    let mut out = Vec::new();
    for row in rows {
        let (dep, policy, code) = row.db()?;
        out.push(Edge { dep, policy, status: code.map(JobStatus::from_code).transpose()? });
    }
    Ok(out)
}

/// The jobs depending on `id`, with each edge's policy.
fn dependents_with_policy(conn: &Connection, id: &str) -> Result<Vec<(String, EdgePolicy)>> {
    let mut stmt = conn.prepare_cached(DEPENDENTS_WITH_POLICY).db()?;
    let rows = stmt.query_map([id], |r| Ok((r.get(0)?, policy_at(r, 1)?))).db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}

fn last_error(conn: &Connection, ns: &str, id: &str) -> Result<Option<String>> {
    let e: Option<Option<String>> =
        conn.prepare_cached(LAST_ERROR).db()?.query_row((id, ns), |r| r.get(0)).optional().db()?;
    Ok(e.flatten())
}

/// Where a job with `edges` stands (core's [`standing`](flexiq_core::standing::standing)),
/// reading a `fail_parent` dependency's last error when it decides.
pub(crate) fn standing(conn: &Connection, ns: &str, edges: &[Edge]) -> Result<Standing> {
    flexiq_core::standing::standing(edges.iter().map(Edge::read), |i| last_error(conn, ns, &edges[i].dep))
}

/// Whether every edge of job `id` is settled ([`edge_settled`]); a dependency gone from the
/// store holds its dependent back, as it did before edges had policies.
pub(crate) fn all_settled(conn: &Connection, id: &str) -> Result<bool> {
    Ok(edges_of(conn, id)?.iter().all(|e| e.status.is_some_and(|s| edge_settled(e.policy, s))))
}

/// Clears the dependencies flag of `id` once it has no edge left.
pub(crate) fn unflag_deps(conn: &Connection, id: &str) -> Result<()> {
    conn.prepare_cached(
        "UPDATE jobs SET has_deps = 0 WHERE id = ?1 AND has_deps = 1
           AND NOT EXISTS (SELECT 1 FROM job_deps WHERE job_id = ?1)",
    )
    .db()?
    .execute([id])
    .db()?;
    Ok(())
}

/// Fires `event` on `st` straight through the state machine (a refused one is skipped); true
/// when the job failed for good and has dependents of its own to walk.
fn step(ctx: &mut WriteCtx<'_>, ns: &str, st: &crate::row::Loaded, event: &Event, now: i64) -> Result<bool> {
    let Ok(next) = transition(&st.job_state(), event, now) else { return Ok(false) };
    write_next(ctx, ns, st, &next, now, Extras::default())?;
    Ok(st.has_dependents && next.cancel_dependents)
}

/// After `root` completed: each waiting dependent whose edges are now all settled becomes
/// claimable.
pub(crate) fn release_dependents(ctx: &mut WriteCtx<'_>, ns: &str, root: &str, now: i64) -> Result<()> {
    for dep in dependents_of(ctx.conn, root)? {
        let Some(st) = load_state(ctx.conn, ns, &dep)? else { continue };
        if st.status == JobStatus::Waiting && all_settled(ctx.conn, &dep)? {
            step(ctx, ns, &st, &Event::DependenciesMet, now)?;
        }
    }
    Ok(())
}

/// After `root` failed for good (failed, dead or cancelled): each edge on it applies its
/// policy to the dependent, and every dependent that fails in turn (cancelled or failed) is
/// walked the same way, with its own edges' policies.
pub(crate) fn on_failed(ctx: &mut WriteCtx<'_>, ns: &str, root: &str, now: i64) -> Result<()> {
    let mut work = vec![root.to_string()];
    while let Some(id) = work.pop() {
        let mut error: Option<Option<String>> = None;
        let mut cut = false;
        for (dep, policy) in dependents_with_policy(ctx.conn, &id)? {
            let Some(st) = load_state(ctx.conn, ns, &dep)? else { continue };
            let failure = policy.on_child_failed();
            if failure == ChildFailure::RemoveEdge {
                ctx.conn
                    .prepare_cached("DELETE FROM job_deps WHERE job_id = ?1 AND dep_id = ?2")
                    .db()?
                    .execute((&dep, &id))
                    .db()?;
                unflag_deps(ctx.conn, &dep)?;
                cut = true;
            }
            let event = match failure {
                ChildFailure::CancelParent => Event::DependencyFailed { dependency: id.clone() },
                ChildFailure::FailParent => {
                    if error.is_none() {
                        error = Some(last_error(ctx.conn, ns, &id)?);
                    }
                    Event::ChildFailed { child: id.clone(), error: error.clone().flatten() }
                }
                ChildFailure::ReleaseParent => Event::DependenciesMet,
                ChildFailure::SettleEdge | ChildFailure::RemoveEdge => {
                    if st.status != JobStatus::Waiting || !all_settled(ctx.conn, &dep)? {
                        continue;
                    }
                    Event::DependenciesMet
                }
            };
            if step(ctx, ns, &st, &event, now)? {
                work.push(dep);
            }
        }
        if cut {
            unflag_dependents(ctx.conn, &id)?;
        }
    }
    Ok(())
}

/// Reads one page of `req.job_id`'s dependencies, skipping children gone from the store and
/// reading on until the page is full or the edges run out, so a short page is the last.
fn dependencies(conn: &Connection, ns: &str, req: &DependenciesRequest) -> Result<Dependencies> {
    let parent = req.job_id.as_str();
    if !job_exists(conn, ns, parent)? {
        return Err(Error::JobNotFound(req.job_id.clone()));
    }
    let limit = req.limit as usize;
    let mut after = req.after.as_ref().map_or_else(String::new, |a| a.to_string());
    let mut page = Vec::with_capacity(limit);
    while page.len() < limit {
        let want = limit - page.len();
        let edges: Vec<(String, EdgePolicy)> = {
            let mut stmt = conn.prepare_cached(EDGE_PAGE).db()?;
            let rows =
                stmt.query_map((parent, &after, want as i64), |r| Ok((r.get(0)?, policy_at(r, 1)?))).db()?;
            rows.collect::<rusqlite::Result<_>>().db()?
        };
        let exhausted = edges.len() < want;
        for (child, policy) in edges {
            if let Some(c) = child_dependency(conn, ns, &child, policy)? {
                page.push(c);
            }
            after = child;
        }
        if exhausted {
            break;
        }
    }
    Ok(Dependencies::from_page(page, req.limit))
}

fn child_dependency(
    conn: &Connection,
    ns: &str,
    id: &str,
    policy: EdgePolicy,
) -> Result<Option<ChildDependency>> {
    type Row = (String, String, u8, Option<Vec<u8>>, Option<String>);
    let row: Option<Row> = conn
        .prepare_cached(CHILD)
        .db()?
        .query_row((id, ns), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .optional()
        .db()?;
    let Some((queue, task, code, result, error)) = row else { return Ok(None) };
    let status = JobStatus::from_code(code)?;
    let failed = DependencyClass::of(status) == DependencyClass::Failed;
    Ok(Some(ChildDependency {
        id: JobId::from_trusted(id),
        queue,
        task,
        status,
        policy,
        result: if status == JobStatus::Completed { result } else { None },
        error: if failed { error } else { None },
    }))
}

/// Cuts every edge on the unfinished child `req.child_id`; each dependent left waiting with
/// only settled edges becomes claimable.
fn remove_child_dependency(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    req: &RemoveChildDependencyRequest,
) -> Result<bool> {
    let child = req.child_id.as_str();
    let Some(st) = load_state(ctx.conn, ns, child)? else {
        if job_exists(ctx.conn, ns, child)? {
            // Only its archived copy is left, and archived jobs are finished.
            return Ok(false);
        }
        return Err(Error::JobNotFound(req.child_id.clone()));
    };
    if st.status.is_terminal() {
        return Ok(false);
    }
    let dependents = dependents_of(ctx.conn, child)?;
    if dependents.is_empty() {
        return Ok(false);
    }
    ctx.conn.prepare_cached("DELETE FROM job_deps WHERE dep_id = ?1").db()?.execute([child]).db()?;
    unflag_dependents(ctx.conn, child)?;
    for dep in dependents {
        unflag_deps(ctx.conn, &dep)?;
        let Some(parent) = load_state(ctx.conn, ns, &dep)? else { continue };
        if parent.status == JobStatus::Waiting && all_settled(ctx.conn, &dep)? {
            fire(ctx, ns, &parent, &Event::DependenciesMet, req.now, Extras::default())?;
        }
    }
    Ok(true)
}

#[async_trait::async_trait]
impl Flows for SqliteStore {
    async fn get_dependencies(&self, req: DependenciesRequest) -> Result<Dependencies> {
        req.validate()?;
        let ns = self.ns();
        self.read(move |conn| dependencies(conn, &ns, &req)).await
    }

    async fn remove_child_dependency(&self, req: RemoveChildDependencyRequest) -> Result<bool> {
        let ns = self.ns();
        self.write_small(false, move |ctx| remove_child_dependency(ctx, &ns, &req)).await
    }
}
