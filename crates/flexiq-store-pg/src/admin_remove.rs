//! Removing one job (optionally with its children), and removing orphans: history rows whose
//! job is gone. Both go through `remove.rs`.
//!
//! A job's children are the jobs it depends on; with `remove_children` the removal takes,
//! transitively, each child whose every dependent is in the removal. The set is computed, its
//! new members locked, and computed again until a computation finds nothing unlocked: a new
//! dependent of a locked job needs that job's row lock (enqueue takes it), so the last
//! computation is still true at commit.
//!
//! A job is gone when its row is in neither `jobs` nor `archived_jobs`: an archived job keeps
//! its errors, logs, partials, edges and dedup keys. Dead letters and metric rows are not orphans: they
//! outlive their jobs by design, each with its own retention window. Partials carry no
//! namespace, so an orphaned partial of any namespace is removed; every other table is swept
//! in this handle's namespace only. An edge to a gone dependency frees its dependent the way a
//! removal does.

use std::collections::{HashMap, HashSet};

use flexiq_core::store::{RemoveJobRequest, Removed};
use flexiq_core::{Error, JobStatus, Result};
use uuid::Uuid;

use crate::apply::Effects;
use crate::db::{jid, Conn};
use crate::remove::{Report, Rows};
use crate::row::status;
use crate::store::PgStore;
use crate::wait::wall_ms;

/// Locks jobs `$2` of namespace `$1` in id order.
const LOCK: &str =
    "SELECT id, status FROM {S}.jobs WHERE namespace = $1 AND id = ANY($2) ORDER BY id FOR UPDATE";

/// The jobs that jobs `$2` depend on, outside `$2`, every dependent of which is in `$2`.
const CHILDREN: &str =
    "SELECT DISTINCT d.depends_on FROM {S}.job_deps d JOIN {S}.jobs c ON c.id = d.depends_on \
    WHERE d.namespace = $1 AND d.job_id = ANY($2) AND d.depends_on <> ALL($2) \
      AND NOT EXISTS (SELECT 1 FROM {S}.job_deps e JOIN {S}.jobs p ON p.id = e.job_id \
        WHERE e.depends_on = d.depends_on AND e.job_id <> ALL($2)) \
    ORDER BY d.depends_on";

/// Whether the job `col` names is gone.
fn gone(col: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM {{S}}.jobs j WHERE j.id = {col}) \
         AND NOT EXISTS (SELECT 1 FROM {{S}}.archived_jobs a WHERE a.id = {col})"
    )
}

/// The gone jobs that jobs of namespace `$1` depend on.
fn gone_dependencies_sql() -> String {
    format!(
        "SELECT DISTINCT x.depends_on FROM {{S}}.job_deps x WHERE x.namespace = $1 AND {}",
        gone("x.depends_on")
    )
}

/// Deletes the history rows of gone jobs (edges by their dependent, dedup keys by their
/// holder); returns how many.
pub(crate) fn orphans_sql() -> String {
    let sweep = |table: &str, col: &str, scoped: bool| {
        let ns = if scoped { "x.namespace = $1 AND " } else { "" };
        format!("DELETE FROM {{S}}.{table} x WHERE {ns}{} RETURNING 1", gone(&format!("x.{col}")))
    };
    format!(
        "WITH e AS ({}), l AS ({}), p AS ({}), r AS ({}), d AS ({}), k AS ({}) \
         SELECT (SELECT count(*) FROM e) + (SELECT count(*) FROM l) + (SELECT count(*) FROM p) \
           + (SELECT count(*) FROM r) + (SELECT count(*) FROM d) + (SELECT count(*) FROM k)",
        sweep("job_errors", "job_id", true),
        sweep("task_logs", "job_id", true),
        sweep("job_partials", "job_id", false),
        sweep("replays", "original_job_id", true),
        sweep("job_deps", "job_id", true),
        sweep("dedup_keys", "job_id", true),
    )
}

impl PgStore {
    /// Locks `ids` of this namespace, noting each one's status; ids already noted are skipped.
    async fn lock_into(&self, c: &Conn, ids: &[Uuid], locked: &mut HashMap<Uuid, JobStatus>) -> Result<()> {
        let ns: &str = &self.ns;
        for r in c.rows("remove job", &self.sql(LOCK), &[&ns, &ids]).await? {
            locked.insert(r.get(0), status(r.get(1))?);
        }
        Ok(())
    }

    /// The children of `root` to remove with it, in the order they were found.
    async fn children_of(&self, c: &Conn, root: Uuid) -> Result<Vec<Uuid>> {
        let ns: &str = &self.ns;
        let sql = self.sql(CHILDREN);
        let mut set = vec![root];
        loop {
            let found: Vec<Uuid> =
                c.rows("remove job", &sql, &[&ns, &set]).await?.iter().map(|r| r.get(0)).collect();
            if found.is_empty() {
                return Ok(set.split_off(1));
            }
            set.extend(found);
        }
    }

    pub(crate) async fn remove_one(&self, req: RemoveJobRequest) -> Result<Removed> {
        let Ok(root) = Uuid::parse_str(req.job_id.as_str()) else {
            return Err(Error::JobNotFound(req.job_id));
        };
        let now = req.now;
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let set = c
            .tx(async {
                let mut locked = HashMap::new();
                self.lock_into(&c, &[root], &mut locked).await?;
                let Some(&root_status) = locked.get(&root) else {
                    return Err(Error::JobNotFound(req.job_id.clone()));
                };
                if root_status == JobStatus::Running {
                    return Err(Error::Conflict(format!(
                        "job {} is running: cancel it or let it finish before removing it",
                        req.job_id
                    )));
                }
                let mut set = vec![root];
                if req.remove_children {
                    let mut tried: HashSet<Uuid> = HashSet::from([root]);
                    let children = loop {
                        let children = self.children_of(&c, root).await?;
                        let new: Vec<Uuid> =
                            children.iter().filter(|id| tried.insert(**id)).copied().collect();
                        if new.is_empty() {
                            break children;
                        }
                        self.lock_into(&c, &new, &mut locked).await?;
                    };
                    // A child removed by someone else meanwhile is not there to remove.
                    set.extend(children.into_iter().filter(|id| locked.contains_key(id)));
                }
                if let Some(busy) = set.iter().find(|id| locked.get(id) == Some(&JobStatus::Running)) {
                    return Err(Error::Conflict(format!(
                        "job {} is running: it cannot be removed as a child of job {}",
                        jid(*busy),
                        req.job_id
                    )));
                }
                self.remove_locked(&c, (Rows::Live, Report::EachJob), &set, now, &mut fx).await?;
                Ok(set)
            })
            .await?;
        self.announce(&fx);
        Ok(Removed { jobs: set.into_iter().map(jid).collect() })
    }

    pub(crate) async fn remove_orphan_rows(&self) -> Result<u64> {
        let ns: &str = &self.ns;
        let now = wall_ms();
        let deps = self.sql(&gone_dependencies_sql());
        let sweep = self.sql(&orphans_sql());
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let n = c
            .tx(async {
                let gone: Vec<Uuid> =
                    c.rows("remove orphans", &deps, &[&ns]).await?.iter().map(|r| r.get(0)).collect();
                let mut n = 0;
                if !gone.is_empty() {
                    let unlinked = self.unlink_dependents(&c, &gone, now).await?;
                    n += unlinked.edges;
                    self.write_freed(&c, unlinked.changes, now, &mut fx).await?;
                }
                let swept: i64 = c.rows("remove orphans", &sweep, &[&ns]).await?[0].get(0);
                Ok(n + swept.max(0) as u64)
            })
            .await?;
        self.announce(&fx);
        Ok(n)
    }
}
