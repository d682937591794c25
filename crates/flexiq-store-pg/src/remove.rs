//! Removing jobs with everything kept about them: the one path every removal takes (`clean`,
//! `drain`, `obliterate` and `remove_job` in `admin.rs`, `delete_stages` in `workflow.rs`), so
//! no caller can forget a side table and no half-removed job is ever visible.
//!
//! The caller locks the rows in its transaction (in id order, `FOR UPDATE`, as acks lock
//! them); [`PgStore::remove_locked`] then, in the same transaction:
//!
//! - frees the dependents ([`PgStore::unlink_dependents`]): every job outside the removal that
//!   named a removed job drops the edge and its `depends_on` entry, and a waiting one is
//!   decided again over the edges it still has (`flows::standing`, each edge's policy), exactly
//!   as if the removed job had never been a dependency (all settled: pending; one failed under
//!   a policy that ends it: cancelled or failed by the state machine, whose cascade then runs
//!   as for any failure);
//! - deletes the history (errors, logs, partials, replay records of the job, its dead-letter
//!   entry, its metric rows), the dedup keys it holds and the rows, in one statement. The count
//!   triggers of migration 5 take the rows off the per-(queue, status) counts in that
//!   statement, and unique-key and workflow (run, stage) holds are index entries of the row,
//!   so they go with it. With [`Report::EachJob`] the same statement writes each removed
//!   job's `removed` event (`obliterate` reports its removal as one queue event instead).
//!
//! A running job's row can go too (`obliterate` with force, `delete_stages`): its worker's
//! late ack finds no row and is `Superseded`.

use std::collections::HashMap;

use flexiq_core::transition::{transition, Event};
use flexiq_core::{JobStatus, Result};
use uuid::Uuid;

use crate::apply::{Change, Effects};
use crate::db::Conn;
use crate::flows::{policy_of, standing, EdgeView, Standing};
use crate::row::{loaded, state_cols, status, Loaded};
use crate::store::PgStore;

/// Which table the removed rows live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rows {
    /// Live jobs.
    Live,
    /// Archived copies (finished jobs that archival moved out of `jobs`).
    Archived,
}

impl Rows {
    fn table(self) -> &'static str {
        match self {
            Rows::Live => "jobs",
            Rows::Archived => "archived_jobs",
        }
    }
}

/// Whether a removal writes a `removed` event per job removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// One event per job, at the removal's time.
    EachJob,
    /// None: the caller reports the removal its own way, or it is not an operator's.
    Silent,
}

/// Deletes rows `$1` of namespace `$2` from `table` with their history, and when `$4` is set
/// writes their `removed` events at `$3`; returns each removed row's id and status. Metric
/// rows are found by the (namespace, queue, job) they name.
pub(crate) fn remove_sql(table: &str) -> String {
    let events = crate::event_writes::removed_sql("$2", "j", "$3", "$4");
    format!(
        "WITH e AS (DELETE FROM {{S}}.job_errors WHERE job_id = ANY($1)), \
         l AS (DELETE FROM {{S}}.task_logs WHERE job_id = ANY($1)), \
         p AS (DELETE FROM {{S}}.job_partials WHERE job_id = ANY($1)), \
         r AS (DELETE FROM {{S}}.replays WHERE original_job_id = ANY($1)), \
         d AS (DELETE FROM {{S}}.dead_letters WHERE original_job_id = ANY($1)), \
         k AS (DELETE FROM {{S}}.dedup_keys WHERE namespace = $2 AND job_id = ANY($1)), \
         j AS (DELETE FROM {{S}}.{table} WHERE id = ANY($1) AND namespace = $2 \
           RETURNING id, queue, status, task, attempt), \
         m AS (DELETE FROM {{S}}.task_metrics t USING j WHERE t.namespace = $2 AND t.queue = j.queue AND t.job_id = j.id), \
         ev AS ({events}) \
         SELECT id, status FROM j"
    )
}

/// Locks, in id order, the jobs outside `$1` that depend on one of `$1`.
const LOCK_DEPENDENTS: &str = "SELECT {cols} FROM {S}.jobs j \
    WHERE j.id IN (SELECT job_id FROM {S}.job_deps WHERE depends_on = ANY($1)) AND j.id <> ALL($1) \
    ORDER BY j.id FOR UPDATE OF j";

/// Every edge to or from one of `$1`.
const DELETE_EDGES: &str = "DELETE FROM {S}.job_deps WHERE depends_on = ANY($1) OR job_id = ANY($1)";

/// Drops `$1` from the `depends_on` lists of jobs `$2`, keeping the order of the rest.
const DROP_FROM_LISTS: &str = "UPDATE {S}.jobs j SET depends_on = ARRAY( \
      SELECT x FROM unnest(j.depends_on) WITH ORDINALITY AS t(x, o) WHERE x <> ALL($1) ORDER BY o) \
    WHERE j.id = ANY($2)";

/// The edges jobs `$1` still have, each job's in its `depends_on` order, with each
/// dependency's status and last error. A dependency whose row is gone (archived or purged, so
/// finished) has no say, as in the release cascade.
const REMAINING: &str =
    "SELECT d.job_id, d.depends_on, d.policy, x.status, x.last_error FROM {S}.job_deps d \
    JOIN {S}.jobs j ON j.id = d.job_id JOIN {S}.jobs x ON x.id = d.depends_on WHERE d.job_id = ANY($1) \
    ORDER BY d.job_id, array_position(j.depends_on, d.depends_on), d.depends_on";

/// What dropping the edges to some jobs changes: the edges deleted and the dependents' decided
/// transitions, written by [`PgStore::write_freed`].
pub(crate) struct Unlinked {
    pub(crate) edges: u64,
    pub(crate) changes: Vec<Change>,
}

impl PgStore {
    /// Removes the locked rows `ids` of `rows` (of this namespace) with their history and frees
    /// their dependents, inside the open transaction; returns the ids of the removed rows.
    pub(crate) async fn remove_locked(
        &self,
        c: &Conn,
        (rows, report): (Rows, Report),
        ids: &[Uuid],
        now: i64,
        fx: &mut Effects,
    ) -> Result<Vec<Uuid>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ns: &str = &self.ns;
        let freed = self.unlink_dependents(c, ids, now).await?;
        let each = report == Report::EachJob;
        let gone =
            c.rows("remove jobs", &self.sql(&remove_sql(rows.table())), &[&ids, &ns, &now, &each]).await?;
        let mut removed = Vec::with_capacity(gone.len());
        for r in &gone {
            removed.push(r.get::<_, Uuid>(0));
            // A removed running job frees a slot of its queue's concurrency cap.
            fx.work |= status(r.get(1))? == JobStatus::Running;
        }
        fx.jobs.extend(&removed);
        self.write_freed(c, freed.changes, now, fx).await?;
        Ok(removed)
    }

    /// Drops every edge to or from `gone` and the entries naming them in their dependents'
    /// `depends_on`, and decides again each waiting dependent from what it still depends on.
    /// The dependents are locked; the decisions are written by [`PgStore::write_freed`], after
    /// the caller has removed the rows of `gone`.
    pub(crate) async fn unlink_dependents(&self, c: &Conn, gone: &[Uuid], now: i64) -> Result<Unlinked> {
        let what = "free dependents";
        let lock = self.sql(&LOCK_DEPENDENTS.replace("{cols}", &state_cols("j")));
        let dependents: Vec<Loaded> =
            c.rows(what, &lock, &[&gone]).await?.iter().map(|r| loaded(r, 0)).collect::<Result<_>>()?;
        let edges = c.exec(what, &self.sql(DELETE_EDGES), &[&gone]).await?;
        if dependents.is_empty() {
            return Ok(Unlinked { edges, changes: Vec::new() });
        }
        let all: Vec<Uuid> = dependents.iter().map(|l| l.id).collect();
        c.exec(what, &self.sql(DROP_FROM_LISTS), &[&gone, &all]).await?;
        let waiting: Vec<Loaded> =
            dependents.into_iter().filter(|l| l.state.status == JobStatus::Waiting).collect();
        if waiting.is_empty() {
            return Ok(Unlinked { edges, changes: Vec::new() });
        }
        let ids: Vec<Uuid> = waiting.iter().map(|l| l.id).collect();
        let mut left: HashMap<Uuid, Vec<EdgeView>> = HashMap::new();
        for r in c.rows(what, &self.sql(REMAINING), &[&ids]).await? {
            let edge = EdgeView {
                dep: r.get(1),
                policy: policy_of(r.get(2))?,
                status: status(r.get(3))?,
                error: r.get(4),
            };
            left.entry(r.get(0)).or_default().push(edge);
        }
        let mut changes = Vec::new();
        for l in waiting {
            let event = match standing(left.remove(&l.id).unwrap_or_default())? {
                Standing::Ready => Event::DependenciesMet,
                Standing::Waiting => continue,
                Standing::Fails(ev) => ev,
            };
            let next = transition(&l.state, &event, now).map_err(|r| r.into_error(&l.state.id))?;
            changes.push(Change::new(l, next));
        }
        Ok(Unlinked { edges, changes })
    }

    /// Writes the dependents' transitions decided by [`PgStore::unlink_dependents`], with the
    /// cascade a cancelled one starts, inside the open transaction.
    pub(crate) async fn write_freed(
        &self,
        c: &Conn,
        changes: Vec<Change>,
        now: i64,
        fx: &mut Effects,
    ) -> Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        fx.note(&changes);
        self.write(c, &changes, now, false, false).await?;
        if Self::needs_cascade(&changes) {
            self.cascade(c, &changes, now, fx).await?;
        }
        Ok(())
    }
}
