//! [`Flows`] for [`PgStore`], and the per-edge failure policies every dependency path applies.
//!
//! Every `job_deps` row carries its [`EdgePolicy`] code (migration 10; older edges read 0, the
//! plain `depends_on` meaning). What a finished dependency means for the job waiting on it is
//! decided here once for the crate: where a new or re-decided job stands over its edges
//! ([`standing`], used by enqueue and by removals), which waiting dependents a completed job
//! releases ([`PgStore::release_step`], every edge settled per [`edge_settled`]), and what a
//! job that failed for good does to each dependent ([`PgStore::failure_step`], each edge
//! applying [`EdgePolicy::on_child_failed`]). The cascade in `apply.rs` runs those two steps
//! until nothing changes; the rules themselves are core's, and the SQL predicate for a
//! settled edge is built from [`edge_settled`] rather than restated.

use std::collections::{BTreeMap, HashSet};

use flexiq_core::flow::{edge_settled, ChildFailure, EdgePolicy};
use flexiq_core::standing::EdgeRead;
pub(crate) use flexiq_core::standing::Standing;
use flexiq_core::start::DependencyClass;
use flexiq_core::store::{
    ChildDependency, Dependencies, DependenciesRequest, Flows, RemoveChildDependencyRequest,
};
use flexiq_core::transition::{transition, Event};
use flexiq_core::{Error, JobStatus, Result};
use uuid::Uuid;

use crate::apply::{Change, Effects};
use crate::db::{jid, uid};
use crate::row::{code, loaded, state_cols, status, Loaded};
use crate::store::PgStore;

/// Every edge policy, plain edges first.
const POLICIES: [EdgePolicy; 5] = [
    EdgePolicy::CancelDependent,
    EdgePolicy::FailParent,
    EdgePolicy::ContinueParent,
    EdgePolicy::IgnoreDependency,
    EdgePolicy::RemoveDependency,
];

/// The stored code of an edge policy.
pub(crate) fn policy_code(p: EdgePolicy) -> i16 {
    i16::from(p.code())
}

/// Reads a stored edge policy code.
pub(crate) fn policy_of(code: i16) -> Result<EdgePolicy> {
    u8::try_from(code)
        .map_err(|_| crate::error::corrupt(format!("dependency policy code {code}")))
        .and_then(EdgePolicy::from_code)
}

/// SQL true when the edge aliased `edge` (a `job_deps` row) is settled by its dependency
/// aliased `dep` (a `jobs` row): the `(policy, status)` pairs [`edge_settled`] accepts.
pub(crate) fn settled(edge: &str, dep: &str) -> String {
    let pairs: Vec<String> = POLICIES
        .iter()
        .flat_map(|p| JobStatus::ALL.iter().map(move |s| (*p, *s)))
        .filter(|(p, s)| edge_settled(*p, *s))
        .map(|(p, s)| format!("({}, {})", policy_code(p), code(s)))
        .collect();
    format!("({edge}.policy, {dep}.status) IN ({})", pairs.join(", "))
}

/// SQL true when every edge of the job aliased `job` is settled. A dependency whose row is
/// gone from `jobs` (archived or purged, so finished) has no say, as before edges had policies.
fn all_settled(job: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM {{S}}.job_deps d2 JOIN {{S}}.jobs j2 ON j2.id = d2.depends_on \
         WHERE d2.job_id = {job}.id AND NOT {})",
        settled("d2", "j2")
    )
}

/// Deletes the edges `($1[i] -> $2[i])` (dependency, dependent) and drops those dependencies
/// from the dependents' `depends_on` lists, keeping the order of the rest.
const CUT_EDGES: &str =
    "WITH cut AS (DELETE FROM {S}.job_deps d USING unnest($1::uuid[], $2::uuid[]) AS u(dep, job) \
      WHERE d.depends_on = u.dep AND d.job_id = u.job RETURNING d.depends_on, d.job_id) \
    UPDATE {S}.jobs j SET depends_on = ARRAY( \
      SELECT x FROM unnest(j.depends_on) WITH ORDINALITY AS t(x, o) WHERE x <> ALL(g.deps) ORDER BY o) \
    FROM (SELECT job_id, array_agg(depends_on) AS deps FROM cut GROUP BY job_id) AS g WHERE j.id = g.job_id";

/// One dependency edge of a job, with its dependency as read in the transaction.
#[derive(Debug, Clone)]
pub(crate) struct EdgeView {
    /// The dependency.
    pub(crate) dep: Uuid,
    /// The edge's policy.
    pub(crate) policy: EdgePolicy,
    /// The dependency's status.
    pub(crate) status: JobStatus,
    /// The dependency's last error.
    pub(crate) error: Option<String>,
}

/// Where a job with `edges` (in dependency order) stands: core's
/// [`standing`](flexiq_core::standing::standing) over the statuses and errors read in the
/// transaction.
pub(crate) fn standing(edges: impl IntoIterator<Item = EdgeView>) -> Result<Standing> {
    let edges: Vec<(String, EdgeView)> =
        edges.into_iter().map(|e| (e.dep.hyphenated().to_string(), e)).collect();
    let read = edges.iter().map(|(dep, e)| EdgeRead { dep, policy: e.policy, status: Some(e.status) });
    flexiq_core::standing::standing(read, |i| Ok(edges[i].1.error.clone()))
}

/// The transitions of `events` on their locked jobs; refused ones (the job moved on) are skipped.
fn decide(events: Vec<(Loaded, Event)>, now: i64) -> Vec<Change> {
    events
        .into_iter()
        .filter_map(|(l, ev)| transition(&l.state, &ev, now).ok().map(|next| Change::new(l, next)))
        .collect()
}

impl PgStore {
    /// The waiting dependents of `from` (jobs that just completed) whose every edge is now
    /// settled, locked in id order, released.
    pub(crate) async fn release_step(
        &self,
        c: &crate::db::Conn,
        from: &[Uuid],
        now: i64,
    ) -> Result<Vec<Change>> {
        let ns: &str = &self.ns;
        let sql = self.sql(&format!(
            "SELECT {} FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.status = 7 \
             AND j.id IN (SELECT job_id FROM {{S}}.job_deps WHERE depends_on = ANY($2)) AND {} \
             ORDER BY j.id FOR UPDATE OF j",
            state_cols("j"),
            all_settled("j")
        ));
        let rows = c.rows("release dependents", &sql, &[&ns, &from]).await?;
        let events =
            rows.iter().map(|r| Ok((loaded(r, 0)?, Event::DependenciesMet))).collect::<Result<_>>()?;
        Ok(decide(events, now))
    }

    /// Of the locked jobs `ids`, the waiting ones whose every edge is settled.
    async fn settled_of(&self, c: &crate::db::Conn, ids: &[Uuid]) -> Result<HashSet<Uuid>> {
        if ids.is_empty() {
            return Ok(HashSet::new());
        }
        let sql = self.sql(&format!(
            "SELECT j.id FROM {{S}}.jobs j WHERE j.id = ANY($1) AND j.status = 7 AND {}",
            all_settled("j")
        ));
        Ok(c.rows("check dependencies", &sql, &[&ids]).await?.iter().map(|r| r.get(0)).collect())
    }

    /// What `failed` (jobs that just failed for good: failed, dead or cancelled) does to each
    /// dependent, by the policy of its edge: cancel it, fail it naming the child, release it,
    /// or settle (or remove) the edge and release it if nothing else holds it back. The
    /// dependents are locked in id order; the removed edges are deleted here, the transitions
    /// returned for the cascade to write.
    pub(crate) async fn failure_step(
        &self,
        c: &crate::db::Conn,
        failed: &[Uuid],
        now: i64,
    ) -> Result<Vec<Change>> {
        let ns: &str = &self.ns;
        let what = "apply dependency policies";
        let sql = self.sql(&format!(
            "SELECT d.depends_on, d.policy, f.last_error, {} FROM {{S}}.job_deps d \
             JOIN {{S}}.jobs j ON j.id = d.job_id LEFT JOIN {{S}}.jobs f ON f.id = d.depends_on \
             WHERE d.depends_on = ANY($2) AND j.namespace = $1 AND (j.status IN (0, 6, 7) OR d.policy = {}) \
             ORDER BY j.id, d.depends_on FOR UPDATE OF j",
            state_cols("j"),
            policy_code(EdgePolicy::RemoveDependency)
        ));
        let rows = c.rows(what, &sql, &[&ns, &failed]).await?;
        // Per dependent: the first event that ends it, whether a policy releases it, and
        // whether it should be checked once its edges settle.
        struct Verdict {
            job: Loaded,
            ends: Option<Event>,
            release: bool,
            check: bool,
        }
        let mut verdicts: BTreeMap<Uuid, Verdict> = BTreeMap::new();
        let (mut cut_dep, mut cut_job) = (Vec::new(), Vec::new());
        for r in &rows {
            let l = loaded(r, 3)?;
            let (dep, policy, error): (Uuid, EdgePolicy, Option<String>) =
                (r.get(0), policy_of(r.get(1))?, r.get(2));
            let v =
                verdicts.entry(l.id).or_insert(Verdict { job: l, ends: None, release: false, check: false });
            let child = dep.hyphenated().to_string();
            match policy.on_child_failed() {
                ChildFailure::CancelParent => {
                    v.ends.get_or_insert(Event::DependencyFailed { dependency: child });
                }
                ChildFailure::FailParent => {
                    v.ends.get_or_insert(Event::ChildFailed { child, error });
                }
                ChildFailure::ReleaseParent => v.release = true,
                ChildFailure::SettleEdge => v.check = true,
                ChildFailure::RemoveEdge => {
                    cut_dep.push(dep);
                    cut_job.push(v.job.id);
                    v.check = true;
                }
            }
        }
        if !cut_dep.is_empty() {
            c.exec(what, &self.sql(CUT_EDGES), &[&cut_dep, &cut_job]).await?;
        }
        let to_check: Vec<Uuid> = verdicts
            .values()
            .filter(|v| v.ends.is_none() && !v.release && v.check && v.job.state.status == JobStatus::Waiting)
            .map(|v| v.job.id)
            .collect();
        let ready = self.settled_of(c, &to_check).await?;
        let events = verdicts
            .into_values()
            .filter_map(|v| match (v.ends, v.release || ready.contains(&v.job.id)) {
                (Some(ev), _) => Some((v.job, ev)),
                (None, true) => Some((v.job, Event::DependenciesMet)),
                (None, false) => None,
            })
            .collect();
        Ok(decide(events, now))
    }

    async fn dependencies_page(&self, req: DependenciesRequest) -> Result<Dependencies> {
        req.validate()?;
        let parent = uid(&req.job_id).map_err(|_| Error::JobNotFound(req.job_id.clone()))?;
        let after = req.after.as_ref().map(uid).transpose()?;
        let ns: &str = &self.ns;
        let limit = i64::from(req.limit);
        let exists = self.sql(
            "SELECT EXISTS (SELECT 1 FROM {S}.jobs WHERE namespace = $1 AND id = $2) \
               OR EXISTS (SELECT 1 FROM {S}.archived_jobs WHERE namespace = $1 AND id = $2)",
        );
        // A child gone from both tables drops out of the join, so a full page still means
        // there may be more.
        let page = self.sql(
            "SELECT d.depends_on, d.policy, c.queue, c.task, c.status, c.result, c.last_error \
             FROM {S}.job_deps d CROSS JOIN LATERAL ( \
               (SELECT queue, task, status, result, last_error FROM {S}.jobs WHERE id = d.depends_on AND namespace = $1) \
               UNION ALL \
               (SELECT queue, task, status, result, last_error FROM {S}.archived_jobs \
                  WHERE id = d.depends_on AND namespace = $1) LIMIT 1) AS c \
             WHERE d.job_id = $2 AND d.namespace = $1 AND ($3::uuid IS NULL OR d.depends_on > $3) \
             ORDER BY d.depends_on LIMIT $4",
        );
        let c = self.conn().await?;
        let what = "read dependencies";
        if !c.rows(what, &exists, &[&ns, &parent]).await?[0].get::<_, bool>(0) {
            return Err(Error::JobNotFound(req.job_id));
        }
        let mut children = Vec::new();
        for r in c.rows(what, &page, &[&ns, &parent, &after, &limit]).await? {
            let st = status(r.get(4))?;
            let failed = DependencyClass::of(st) == DependencyClass::Failed;
            children.push(ChildDependency {
                id: jid(r.get(0)),
                queue: r.get(2),
                task: r.get(3),
                status: st,
                policy: policy_of(r.get(1))?,
                result: if st == JobStatus::Completed { r.get(5) } else { None },
                error: if failed { r.get(6) } else { None },
            });
        }
        Ok(Dependencies::from_page(children, req.limit))
    }

    async fn cut_child(&self, req: RemoveChildDependencyRequest) -> Result<bool> {
        let child = uid(&req.child_id).map_err(|_| Error::JobNotFound(req.child_id.clone()))?;
        let ns: &str = &self.ns;
        let now = req.now;
        let what = "remove child dependency";
        let lock_child = self.sql("SELECT status FROM {S}.jobs WHERE namespace = $1 AND id = $2 FOR UPDATE");
        let archived = self.sql("SELECT 1 FROM {S}.archived_jobs WHERE namespace = $1 AND id = $2");
        let lock_dependents = self.sql(&format!(
            "SELECT {} FROM {{S}}.jobs j WHERE j.id IN (SELECT job_id FROM {{S}}.job_deps WHERE depends_on = $1) \
             ORDER BY j.id FOR UPDATE OF j",
            state_cols("j")
        ));
        let cut = self.sql(
            "WITH cut AS (DELETE FROM {S}.job_deps WHERE depends_on = $1 RETURNING job_id), \
             f AS (UPDATE {S}.jobs SET has_dependents = false WHERE id = $1) \
             UPDATE {S}.jobs j SET depends_on = array_remove(j.depends_on, $1) FROM cut WHERE j.id = cut.job_id \
             RETURNING j.id",
        );
        let count = self.sql("SELECT count(*) FROM {S}.job_deps WHERE depends_on = $1");
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let cut_any = c
            .tx(async {
                let Some(r) = c.opt(what, &lock_child, &[&ns, &child]).await? else {
                    // Only an archived copy is left, and archived jobs are finished.
                    if c.opt(what, &archived, &[&ns, &child]).await?.is_some() {
                        return Ok(false);
                    }
                    return Err(Error::JobNotFound(req.child_id.clone()));
                };
                if status(r.get(0))?.is_terminal() {
                    return Ok(false);
                }
                if c.rows(what, &count, &[&child]).await?[0].get::<_, i64>(0) == 0 {
                    return Ok(false);
                }
                let dependents: Vec<Loaded> = c
                    .rows(what, &lock_dependents, &[&child])
                    .await?
                    .iter()
                    .map(|r| loaded(r, 0))
                    .collect::<Result<_>>()?;
                c.rows(what, &cut, &[&child]).await?;
                let waiting: Vec<Uuid> = dependents
                    .iter()
                    .filter(|l| l.state.status == JobStatus::Waiting)
                    .map(|l| l.id)
                    .collect();
                let ready = self.settled_of(&c, &waiting).await?;
                let events = dependents
                    .into_iter()
                    .filter(|l| ready.contains(&l.id))
                    .map(|l| (l, Event::DependenciesMet))
                    .collect();
                let changes = decide(events, now);
                self.write_freed(&c, changes, now, &mut fx).await?;
                Ok(true)
            })
            .await?;
        self.announce(&fx);
        Ok(cut_any)
    }
}

#[async_trait::async_trait]
impl Flows for PgStore {
    async fn get_dependencies(&self, req: DependenciesRequest) -> Result<Dependencies> {
        self.dependencies_page(req).await
    }

    async fn remove_child_dependency(&self, req: RemoveChildDependencyRequest) -> Result<bool> {
        self.cut_child(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settled_predicate_lists_what_core_settles() {
        let sql = settled("d", "j");
        assert!(sql.contains("(0, 2)") && sql.contains("(3, 4)") && sql.contains("(2, 5)"), "{sql}");
        assert!(!sql.contains("(0, 3)") && !sql.contains("(1, 4)") && !sql.contains("(4, 5)"), "{sql}");
    }
}
