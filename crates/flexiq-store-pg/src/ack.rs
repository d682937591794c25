//! Fenced acks, heartbeats and lease expiry.
//!
//! An ack batch locks its jobs in id order (so concurrent batches cannot deadlock), lets the
//! state machine judge every fence, and writes all accepted outcomes with one UPDATE plus their
//! side effects in the same flight as `COMMIT`.

use std::collections::HashMap;

use flexiq_core::store::{Ack, AckKind, HeartbeatReply, QueueConfig};
use flexiq_core::transition::{transition, Event, Refusal};
use flexiq_core::{AckOutcome, Fence, JobId, Result};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::apply::{Change, Effects};
use crate::complete::Completes;
use crate::db::{i64_of, jid, uid, Conn};
use crate::row::{loaded, state_cols, Loaded, STATE_COL_COUNT};
use crate::store::PgStore;

/// Locks jobs by id alone, returning their namespace last, after the state columns: the primary
/// key is then the only index that can serve the statement, whatever the table's statistics
/// say (with `namespace = $1` beside it, a table never analyzed got a plan that read the
/// whole namespace from a listing index for every ack batch). Ids are unique across
/// namespaces; rows of another namespace are dropped by [`in_namespace`].
fn lock_sql(store: &PgStore) -> String {
    store.sql(&format!(
        "SELECT {}, namespace FROM {{S}}.jobs WHERE id = ANY($1) ORDER BY id FOR UPDATE",
        crate::row::STATE_COLS
    ))
}

/// The rows of `lock_sql` that belong to namespace `ns`.
fn in_namespace<'a>(
    rows: &'a [tokio_postgres::Row],
    ns: &'a str,
) -> impl Iterator<Item = &'a tokio_postgres::Row> {
    rows.iter().filter(move |r| r.get::<_, &str>(r.len() - 1) == ns)
}

impl PgStore {
    pub(crate) async fn ack_jobs(&self, acks: Vec<Ack>, now: i64) -> Result<Vec<AckOutcome>> {
        if acks.is_empty() {
            return Ok(Vec::new());
        }
        match Completes::of(&acks, now)? {
            Some(completes) => self.complete_jobs(acks, completes, now).await,
            None => self.ack_judged(acks, now).await,
        }
    }

    /// Acks with each row locked and judged by the state machine (two flights).
    pub(crate) async fn ack_judged(&self, acks: Vec<Ack>, now: i64) -> Result<Vec<AckOutcome>> {
        let c = self.conn().await?;
        let mut fx = Effects::default();
        let outcomes = c
            .tx_lazy(async {
                let (outcomes, changes) = self.lock_and_judge(&c, acks, now).await?;
                self.write_and_commit(&c, &changes, now, false, &mut fx).await?;
                Ok(outcomes)
            })
            .await?;
        self.announce(&fx);
        Ok(outcomes)
    }

    /// Begins a transaction on `c`, locks the acked jobs and lets the state machine judge each
    /// fence: one outcome per ack in order, and the changes to write (in id order), unwritten.
    pub(crate) async fn lock_and_judge(
        &self,
        c: &Conn,
        acks: Vec<Ack>,
        now: i64,
    ) -> Result<(Vec<AckOutcome>, Vec<Change>)> {
        let ids: Vec<Uuid> = acks.iter().map(|a| uid(&a.job_id)).collect::<Result<_>>()?;
        let ns: &str = &self.ns;
        let st = c.prep("ack", &lock_sql(self)).await?;
        let params: [&(dyn ToSql + Sync); 1] = [&ids];
        let (_, rows) = futures::try_join!(c.begin(), async {
            c.query(&st, &params).await.map_err(|e| crate::error::pg("ack", e))
        })?;
        let mut state: HashMap<Uuid, Loaded> = HashMap::with_capacity(rows.len());
        for r in in_namespace(&rows, ns) {
            let l = loaded(r, 0)?;
            state.insert(l.id, l);
        }
        let mut decided: HashMap<Uuid, Change> = HashMap::new();
        let mut outcomes = Vec::with_capacity(acks.len());
        for (ack, id) in acks.into_iter().zip(&ids) {
            let Some(l) = state.get_mut(id) else {
                outcomes.push(AckOutcome::Superseded);
                continue;
            };
            let (event, result) = match ack.kind {
                AckKind::Complete { result } => (Event::Complete { fence: ack.fence }, Some(result)),
                AckKind::Fail { error, retryable } => {
                    (Event::Fail { fence: ack.fence, error, retryable }, None)
                }
                AckKind::Suspend { until } => (Event::Suspend { fence: ack.fence, until }, None),
                AckKind::Defer { until, reason } => (Event::Defer { fence: ack.fence, until, reason }, None),
                AckKind::Cancel { reason } => (Event::CancelRunning { fence: ack.fence, reason }, None),
            };
            match transition(&l.state, &event, now) {
                Ok(next) => {
                    let before = l.clone();
                    l.state.status = next.status;
                    l.state.attempt = next.attempt;
                    let mut ch = Change::new(before, next);
                    ch.result = result;
                    decided.insert(*id, ch);
                    outcomes.push(AckOutcome::Acknowledged);
                }
                Err(Refusal::Superseded) | Err(Refusal::Illegal { .. }) => {
                    outcomes.push(AckOutcome::Superseded)
                }
            }
        }
        let mut changes: Vec<Change> = decided.into_values().collect();
        changes.sort_by_key(|ch| ch.before.id);
        Ok((outcomes, changes))
    }

    pub(crate) async fn heartbeat_jobs(
        &self,
        jobs: Vec<(JobId, Fence)>,
        now: i64,
        record_start: bool,
    ) -> Result<Vec<HeartbeatReply>> {
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Uuid> = jobs.iter().map(|(id, _)| uid(id)).collect::<Result<_>>()?;
        let attempts: Vec<i32> = jobs.iter().map(|(_, f)| f.attempt as i32).collect();
        let started: Vec<i64> = jobs.iter().map(|(_, f)| f.started_at).collect();
        let seqs: Vec<i64> = jobs.iter().map(|(_, f)| f.claim_seq.min(i64::MAX as u64) as i64).collect();
        let ns: &str = &self.ns;
        // A started attempt's claim sequence goes into start_seq: its release is then a stall.
        let set =
            if record_start { "heartbeat_at = $2, start_seq = j.claim_seq" } else { "heartbeat_at = $2" };
        let sql = self.sql(&format!(
            "UPDATE {{S}}.jobs j SET {set} \
             FROM unnest($3::uuid[], $4::int4[], $5::int8[], $6::int8[]) AS u(id, attempt, started_at, claim_seq) \
             WHERE j.id = u.id AND j.namespace = $1 AND j.status = 1 AND j.attempt = u.attempt \
               AND j.started_at = u.started_at AND j.claim_seq = u.claim_seq \
             RETURNING j.id, j.cancel_requested"
        ));
        let c = self.conn().await?;
        let rows = c.rows("heartbeat", &sql, &[&ns, &now, &ids, &attempts, &started, &seqs]).await?;
        let renewed: HashMap<Uuid, bool> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        let flagged: Vec<Uuid> = ids.iter().filter(|id| !renewed.contains_key(id)).copied().collect();
        // A superseded attempt still learns whether cancellation was requested.
        let mut flags: HashMap<Uuid, bool> = HashMap::new();
        if !flagged.is_empty() {
            let sql =
                self.sql("SELECT id, cancel_requested FROM {S}.jobs WHERE namespace = $1 AND id = ANY($2)");
            flags = c
                .rows("heartbeat", &sql, &[&ns, &flagged])
                .await?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
        }
        let out = ids
            .iter()
            .map(|id| match renewed.get(id) {
                Some(cancel) => {
                    HeartbeatReply { outcome: AckOutcome::Acknowledged, cancel_requested: *cancel }
                }
                None => HeartbeatReply {
                    outcome: AckOutcome::Superseded,
                    cancel_requested: flags.get(id).copied().unwrap_or(false),
                },
            })
            .collect();
        Ok(out)
    }

    /// Applies the event `event_of` builds for each running job selected by `where_sql` (a
    /// condition on alias `j` with `$1` namespace and `$2` a cutoff), skipping rows other
    /// transactions hold. `extra` selects more columns after the state columns for `event_of`.
    async fn expire_running(
        &self,
        what: &str,
        where_sql: &str,
        extra: &str,
        cutoff: i64,
        event_of: impl Fn(&tokio_postgres::Row) -> Event + std::marker::Send + Sync,
        now: i64,
    ) -> Result<Vec<JobId>> {
        let c = self.conn().await?;
        let ns: &str = &self.ns;
        let mut fx = Effects::default();
        let sql = self.sql(&format!(
            "SELECT {}{extra} FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.status = 1 AND {where_sql} \
             ORDER BY j.id FOR UPDATE OF j SKIP LOCKED",
            state_cols("j")
        ));
        let ids = c
            .tx(async {
                let rows = c.rows(what, &sql, &[&ns, &cutoff]).await?;
                let mut changes = Vec::with_capacity(rows.len());
                for r in &rows {
                    let l = loaded(r, 0)?;
                    if let Ok(next) = transition(&l.state, &event_of(r), now) {
                        changes.push(Change::new(l, next));
                    }
                }
                let ids: Vec<JobId> = changes.iter().map(|ch| jid(ch.before.id)).collect();
                self.write_and_commit(&c, &changes, now, false, &mut fx).await?;
                Ok(ids)
            })
            .await?;
        self.announce(&fx);
        Ok(ids)
    }

    /// Releases the running jobs whose lease lapsed before `now - stale_after_ms`; each job
    /// stalls against its own queue's budget (the default when the queue sets none), unless no
    /// heartbeat reported its start (`start_seq` behind its claim sequence): then it was still
    /// buffered and gets the attempt back without a stall. A workflow stage started when its
    /// host dequeued it: no buffer stands in between.
    pub(crate) async fn release_stale_jobs(&self, stale_after_ms: u64, now: i64) -> Result<Vec<JobId>> {
        let cutoff = now.saturating_sub(i64_of("stale window ms", stale_after_ms)?);
        let budget = ", (SELECT q.max_stalled_count FROM {S}.queues q \
            WHERE q.namespace = j.namespace AND q.queue = j.queue), \
            (j.start_seq = j.claim_seq OR j.workflow_run_id IS NOT NULL)";
        let released = self
            .expire_running(
                "release stale jobs",
                "coalesce(j.heartbeat_at, j.started_at) < $2",
                budget,
                cutoff,
                |r| {
                    let max: Option<i32> = r.get(STATE_COL_COUNT);
                    let config = QueueConfig {
                        max_stalled_count: max.map(|m| m.max(0) as u32),
                        ..QueueConfig::default()
                    };
                    let started: bool = r.get(STATE_COL_COUNT + 1);
                    Event::HeartbeatLost { max_stalled: config.stall_budget(), started }
                },
                now,
            )
            .await?;
        // The periodic sweep also folds the job counts of backends that have gone.
        self.fold_counts().await?;
        Ok(released)
    }

    pub(crate) async fn expire_runaway_jobs(&self, cap_ms: u64, now: i64) -> Result<Vec<JobId>> {
        let cutoff = now.saturating_sub(i64_of("absolute cap ms", cap_ms)?);
        self.expire_running(
            "expire runaway jobs",
            "j.started_at < $2",
            "",
            cutoff,
            |_| Event::RunawayExpired,
            now,
        )
        .await
    }

    /// Loads one job under lock and applies `event` when the state machine allows it; returns
    /// whether it applied, or `None` when the job is unknown.
    pub(crate) async fn apply_one(&self, id: &JobId, event: Event, now: i64) -> Result<Option<bool>> {
        let u = uid(id)?;
        let c = self.conn().await?;
        let ns: &str = &self.ns;
        let mut fx = Effects::default();
        let sql = lock_sql(self);
        let applied = c
            .tx(async {
                let rows = c.rows("update job", &sql, &[&vec![u]]).await?;
                let Some(r) = in_namespace(&rows, ns).next() else { return Ok(None) };
                let l = loaded(r, 0)?;
                match transition(&l.state, &event, now) {
                    Ok(next) => {
                        let changes = [Change::new(l, next)];
                        self.write_and_commit(&c, &changes, now, false, &mut fx).await?;
                        Ok(Some(true))
                    }
                    Err(_) => Ok(Some(false)),
                }
            })
            .await?;
        self.announce(&fx);
        Ok(applied)
    }

    pub(crate) async fn request_cancel_job(&self, id: &JobId, now: i64) -> Result<bool> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql(
            "UPDATE {S}.jobs SET cancel_requested = true WHERE namespace = $1 AND id = $2 AND status = 1 RETURNING id",
        );
        let flagged = {
            let c = self.conn().await?;
            c.opt("request cancel", &sql, &[&ns, &u]).await?.is_some()
        };
        if flagged {
            self.announce(&Effects { work: false, jobs: vec![u] });
            return Ok(true);
        }
        match self.apply_one(id, Event::Cancel, now).await? {
            None => Err(flexiq_core::Error::JobNotFound(id.clone())),
            Some(applied) => Ok(applied),
        }
    }
}
