//! [`Schedulers`] for [`PgStore`]: job schedulers in the `job_schedulers` table (migration 11),
//! one row per (namespace, id) holding the rule and template as one JSON document
//! ([`SchedulerSpec::to_json`]) beside where the scheduler stands.
//!
//! Every decision is core's ([`plan_upsert`], [`plan_fire`]); this file reads, locks and writes.
//! An upsert first takes a transaction-scoped advisory lock on (schema, namespace, id), so two
//! first upserts of one id run one after the other and the second replaces what the first
//! created, then locks the row it replaces (`FOR UPDATE`), so a round firing that scheduler
//! commits first and the new plan starts from the slots it fired.
//!
//! A round is one transaction. It locks up to `limit` due rows, most overdue first, with
//! `FOR UPDATE SKIP LOCKED`: a second leader skips the schedulers the first is firing, and by
//! the time it could lock them they are no longer due. For each, the plan's next slot, last
//! slot and count are written only where the stored next slot is still the plan's
//! `expected_next_ms` (always so under the lock; the guard states the rule rather than trusts
//! it), and then the plan's jobs, each keyed by its slot, go through the checked enqueue path
//! (`PgStore::enqueue_checked`) inside the same transaction, so a slot is advanced past and
//! enqueued together or not at all.
//!
//! A refused enqueue (`flexiq_core::schedule::is_refusal`: a revoked task, a full queue, ...)
//! is rolled back to a savepoint taken just before it, and the scheduler is written as
//! `flexiq_core::schedule::plan_skip` says: moved past the refused slots with its count and
//! last slot unchanged (skipped slots do not count against a limit), no job enqueued for them,
//! no [`FiredSlot`] naming them; the round goes on with the next scheduler. Neither the scheduler nor the round stays stuck on a slot
//! that cannot fire; the slot is skipped, not retried. A backend failure rolls the whole round
//! back for a later round to repeat, and so does a stored spec that no longer reads (the error
//! names the scheduler, which can then be replaced or removed).

use flexiq_core::cursor::{fingerprint, Page};
use flexiq_core::schedule::{plan_fire, plan_upsert, JobScheduler, SchedulerSpec};
use flexiq_core::store::{
    schedulers_page, EnqueueRequest, FireSchedulersRequest, FiredSlot, ListSchedulersRequest, Schedulers,
    UpsertSchedulerRequest,
};
use flexiq_core::Result;
use tokio_postgres::Row;

use crate::db::{i64_of, Conn};
use crate::enqueue::TxScope;
use crate::error::corrupt;
use crate::store::PgStore;

/// The columns [`scheduler`] reads, in its order.
const COLS: &str = "id, spec, next_run_ms, last_run_ms, iterations, created_at, updated_at";

/// The savepoint a round takes before each scheduler's enqueue.
const SAVEPOINT: &str = "flexiq_scheduler_slot";

/// The advisory lock an upsert of scheduler `id` takes.
fn lock_key(schema: &str, ns: &str, id: &str) -> i64 {
    fingerprint(&["flexiq-scheduler", schema, ns, id]) as i64
}

/// Reads a row selected with [`COLS`].
fn scheduler(r: &Row) -> Result<JobScheduler> {
    let id: String = r.get(0);
    let spec = SchedulerSpec::from_json(&id, r.get(1))?;
    let iterations: i64 = r.get(4);
    let iterations = u64::try_from(iterations)
        .map_err(|_| corrupt(format!("iterations {iterations} of scheduler {id}")))?;
    Ok(JobScheduler {
        rule: spec.rule,
        template: spec.template,
        next_run_ms: r.get(2),
        last_run_ms: r.get(3),
        iterations,
        created_at: r.get(5),
        updated_at: r.get(6),
        id,
    })
}

/// What a round did.
#[derive(Default)]
struct Round {
    fired: Vec<FiredSlot>,
    /// A job was created (workers should look).
    created: bool,
}

impl PgStore {
    async fn upsert_scheduler(&self, req: UpsertSchedulerRequest) -> Result<JobScheduler> {
        req.validate()?;
        let ns: &str = &self.ns;
        let what = format!("upsert scheduler {} in namespace {ns}", req.id);
        let lock = lock_key(self.schema(), ns, &req.id);
        let read = self.sql(&format!(
            "SELECT {COLS} FROM {{S}}.job_schedulers WHERE namespace = $1 AND id = $2 FOR UPDATE"
        ));
        let write = self.sql(
            "INSERT INTO {S}.job_schedulers \
               (namespace, id, spec, next_run_ms, last_run_ms, iterations, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (namespace, id) DO UPDATE SET spec = excluded.spec, next_run_ms = excluded.next_run_ms, \
               last_run_ms = excluded.last_run_ms, iterations = excluded.iterations, \
               created_at = excluded.created_at, updated_at = excluded.updated_at",
        );
        let c = self.conn().await?;
        c.tx(async {
            c.exec(&what, "SELECT pg_advisory_xact_lock($1)", &[&lock]).await?;
            let existing = c.opt(&what, &read, &[&ns, &req.id]).await?.map(|r| scheduler(&r)).transpose()?;
            let s = plan_upsert(existing.as_ref(), &req.id, req.rule, req.template, req.now)?;
            let spec = SchedulerSpec { rule: s.rule.clone(), template: s.template.clone() }.to_json();
            let iterations = i64_of("iterations", s.iterations)?;
            c.exec(
                &what,
                &write,
                &[
                    &ns,
                    &s.id,
                    &spec,
                    &s.next_run_ms,
                    &s.last_run_ms,
                    &iterations,
                    &s.created_at,
                    &s.updated_at,
                ],
            )
            .await?;
            Ok(s)
        })
        .await
    }

    async fn scheduler_by_id(&self, id: &str) -> Result<Option<JobScheduler>> {
        let ns: &str = &self.ns;
        let sql =
            self.sql(&format!("SELECT {COLS} FROM {{S}}.job_schedulers WHERE namespace = $1 AND id = $2"));
        let c = self.conn().await?;
        let what = format!("read scheduler {id} in namespace {ns}");
        c.opt(&what, &sql, &[&ns, &id]).await?.map(|r| scheduler(&r)).transpose()
    }

    async fn schedulers_after(&self, req: ListSchedulersRequest) -> Result<Page<JobScheduler>> {
        req.validate()?;
        let after = req.after_id()?;
        let ns: &str = &self.ns;
        let fetch = i64::from(req.limit) + 1;
        let sql = self.sql(&format!(
            "SELECT {COLS} FROM {{S}}.job_schedulers WHERE namespace = $1 AND ($2::text IS NULL OR id > $2) \
             ORDER BY id LIMIT $3"
        ));
        let c = self.conn().await?;
        let rows = c.rows("list schedulers", &sql, &[&ns, &after, &fetch]).await?;
        let rows = rows.iter().map(scheduler).collect::<Result<Vec<_>>>()?;
        Ok(schedulers_page(rows, req.limit))
    }

    async fn remove_scheduler(&self, id: &str) -> Result<bool> {
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.job_schedulers WHERE namespace = $1 AND id = $2");
        let c = self.conn().await?;
        Ok(c.exec(&format!("remove scheduler {id} in namespace {ns}"), &sql, &[&ns, &id]).await? > 0)
    }

    async fn scheduler_count(&self) -> Result<u64> {
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT count(*) FROM {S}.job_schedulers WHERE namespace = $1");
        let c = self.conn().await?;
        let n: i64 = c.rows("count schedulers", &sql, &[&ns]).await?[0].get(0);
        u64::try_from(n).map_err(|_| corrupt(format!("scheduler count {n}")))
    }

    async fn fire_round(&self, req: FireSchedulersRequest) -> Result<Vec<FiredSlot>> {
        req.validate()?;
        let ns: &str = &self.ns;
        let limit = i64::from(req.limit);
        let due = self.sql(&format!(
            "SELECT {COLS} FROM {{S}}.job_schedulers WHERE namespace = $1 AND next_run_ms <= $2 \
             ORDER BY next_run_ms, id LIMIT $3 FOR UPDATE SKIP LOCKED"
        ));
        let c = self.conn().await?;
        let round = c
            .tx(async {
                let rows = c.rows("fire schedulers", &due, &[&ns, &req.now, &limit]).await?;
                let mut round = Round::default();
                for r in &rows {
                    self.fire_one(&c, scheduler(r)?, req.now, &mut round).await?;
                }
                Ok(round)
            })
            .await?;
        if round.created {
            self.shared.hub.publish(&self.ns, true, &[]);
        } else if !round.fired.is_empty() {
            // Slots absorbed by their unique keys wrote only their events.
            self.shared.hub.publish_events(&self.ns);
        }
        Ok(round.fired)
    }

    /// Fires the due slots of `s` (locked by the round) inside the round's transaction.
    async fn fire_one(&self, c: &Conn, s: JobScheduler, now: i64, round: &mut Round) -> Result<()> {
        let Some(plan) = plan_fire(&s, now)? else { return Ok(()) };
        let skip = flexiq_core::schedule::plan_skip(&s, &plan, now)?;
        let ns: &str = &self.ns;
        let what = format!("fire scheduler {} in namespace {ns}", s.id);
        let advance = self.sql(
            "UPDATE {S}.job_schedulers SET next_run_ms = $3, last_run_ms = $4, iterations = $5 \
             WHERE namespace = $1 AND id = $2 AND next_run_ms = $6",
        );
        let iterations = i64_of("iterations", plan.iterations)?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
            [&ns, &s.id, &plan.next_run_ms, &plan.last_run_ms, &iterations, &plan.expected_next_ms];
        if c.exec(&what, &advance, &params).await? == 0 {
            // Another round moved it on first: its slots are that round's.
            return Ok(());
        }
        if plan.fire.is_empty() {
            return Ok(());
        }
        let slots: Vec<i64> = plan.fire.iter().map(|(slot, _)| *slot).collect();
        let jobs = plan.fire.into_iter().map(|(_, job)| job).collect();
        let savepoint = |verb: &str| format!("{verb} {SAVEPOINT}");
        c.batch_execute(&savepoint("SAVEPOINT")).await.map_err(|e| crate::error::pg(&what, e))?;
        let req = EnqueueRequest { jobs, max_pending: None, now };
        let enqueued = match req.validate() {
            Ok(()) => self.enqueue_checked(c, req, TxScope::Caller).await,
            Err(e) => Err(e),
        };
        match enqueued {
            Ok((out, _)) => {
                c.batch_execute(&savepoint("RELEASE SAVEPOINT"))
                    .await
                    .map_err(|e| crate::error::pg(&what, e))?;
                round.created |= out.iter().any(|e| e.created);
                round.fired.extend(slots.into_iter().zip(out).map(|(slot_ms, e)| FiredSlot {
                    scheduler_id: s.id.clone(),
                    slot_ms,
                    job_id: e.id,
                }));
            }
            Err(e) if flexiq_core::schedule::is_refusal(&e) => {
                c.batch_execute(&savepoint("ROLLBACK TO SAVEPOINT"))
                    .await
                    .map_err(|e| crate::error::pg(&what, e))?;
                // The row is locked by the round and was advanced above: write the skip over it.
                let skip_sql = self.sql(
                    "UPDATE {S}.job_schedulers SET next_run_ms = $3, last_run_ms = $4, iterations = $5 \
                     WHERE namespace = $1 AND id = $2",
                );
                let skipped = i64_of("iterations", skip.iterations)?;
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                    [&ns, &s.id, &skip.next_run_ms, &skip.last_run_ms, &skipped];
                c.exec(&what, &skip_sql, &params).await?;
                tracing::warn!(
                    scheduler = %s.id,
                    namespace = ns,
                    ?slots,
                    error = %e,
                    "flexiq scheduler skipped refused slots"
                );
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Schedulers for PgStore {
    async fn upsert_job_scheduler(&self, req: UpsertSchedulerRequest) -> Result<JobScheduler> {
        self.upsert_scheduler(req).await
    }

    async fn get_job_scheduler(&self, id: &str) -> Result<Option<JobScheduler>> {
        self.scheduler_by_id(id).await
    }

    async fn list_job_schedulers(&self, req: ListSchedulersRequest) -> Result<Page<JobScheduler>> {
        self.schedulers_after(req).await
    }

    async fn remove_job_scheduler(&self, id: &str) -> Result<bool> {
        self.remove_scheduler(id).await
    }

    async fn count_job_schedulers(&self) -> Result<u64> {
        self.scheduler_count().await
    }

    async fn fire_due_schedulers(&self, req: FireSchedulersRequest) -> Result<Vec<FiredSlot>> {
        self.fire_round(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_differ_per_schema_namespace_and_id() {
        let base = lock_key("s", "ns", "id");
        assert_ne!(base, lock_key("s2", "ns", "id"));
        assert_ne!(base, lock_key("s", "ns2", "id"));
        assert_ne!(base, lock_key("s", "ns", "id2"));
    }
}
