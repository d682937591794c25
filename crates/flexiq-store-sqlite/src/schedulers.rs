//! [`Schedulers`]: job schedulers in `job_schedulers` (schema version 8), one row per
//! (namespace, id) holding the rule and template as one JSON document beside the next slot,
//! the newest slot fired and the count.
//!
//! Every decision is core's ([`plan_upsert`], [`plan_fire`]); this file reads rows and writes
//! plans. An upsert reads the row and writes its plan in one write. A firing round is one write
//! on the single writer: it walks the due schedulers (`job_schedulers_due`, most overdue first)
//! and, for each, enqueues the plan's jobs through the same code path as
//! [`flexiq_core::store::JobStore::enqueue`] and moves the scheduler on, the update guarded by
//! the plan's `expected_next_ms`. Inside one writer the guard always holds; it is there for a
//! second process on the file, whose round runs in a transaction of its own after ours and
//! finds the slot moved (and each slot's unique key would hold its job anyway).
//!
//! Why a refused enqueue moves the scheduler on: a slot whose jobs the enqueue refuses (a
//! revoked task, or any other refusal about the jobs themselves: invalid, conflict, not found,
//! queue full) would be refused again next round, so keeping the slot would retry it forever
//! and, as the scan takes the most overdue first, starve every scheduler behind it. Each
//! scheduler's enqueue therefore runs in a savepoint of its own: on a refusal its writes are
//! undone, the slots are skipped (logged with the scheduler id and the error) and the
//! scheduler goes on to the slot after them, as a missed slot would; its count and last slot
//! stay, as no job was fired, and the other schedulers of the round fire as usual. A backend
//! error (the file, not the jobs) fails the whole round and writes nothing, so the next round
//! retries it. A row this build cannot read or plan (a spec from a newer build, say) is
//! skipped with a warning and left as it is, never rewritten, and does not count against the
//! round's limit, so it cannot starve the others either; an upsert of its id replaces it,
//! keeping its count and last slot.

use std::collections::HashSet;

use flexiq_core::schedule::{plan_fire, plan_upsert, FirePlan, JobScheduler, SchedulerSpec};
use flexiq_core::store::{
    schedulers_page, EnqueueRequest, FireSchedulersRequest, FiredSlot, ListSchedulersRequest, Schedulers,
    UpsertSchedulerRequest,
};
use flexiq_core::{Error, Page, Result};
use rusqlite::{Connection, OptionalExtension, Row};

use crate::enqueue;
use crate::error::SqlResultExt;
use crate::writer::WriteCtx;
use crate::SqliteStore;

/// The columns [`stored_from_row`] reads.
const COLS: &str = "id, spec, next_run_ms, last_run_ms, iterations, created_at, updated_at";

/// Scheduler `?2` of `?1`.
pub(crate) fn one_sql() -> String {
    format!("SELECT {COLS} FROM job_schedulers WHERE ns = ?1 AND id = ?2")
}

/// A keyset page of `?1`'s schedulers after id `?2` (`''` for the first page: no id is empty),
/// at most `?3` rows.
pub(crate) fn page_sql() -> String {
    format!("SELECT {COLS} FROM job_schedulers WHERE ns = ?1 AND id > ?2 ORDER BY id LIMIT ?3")
}

/// `?1`'s schedulers due at `?2` (Unix ms) after (`?3` next slot, `?4` id) in due order, at
/// most `?5` rows.
pub(crate) fn due_sql() -> String {
    format!(
        "SELECT {COLS} FROM job_schedulers WHERE ns = ?1 AND next_run_ms <= ?2
           AND (next_run_ms, id) > (?3, ?4) ORDER BY next_run_ms, id LIMIT ?5"
    )
}

/// How many schedulers `?1` has.
pub(crate) const COUNT: &str = "SELECT COUNT(*) FROM job_schedulers WHERE ns = ?1";

const UPSERT: &str = "INSERT INTO job_schedulers
        (ns, id, spec, next_run_ms, last_run_ms, iterations, created_at, updated_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
    ON CONFLICT (ns, id) DO UPDATE SET spec = excluded.spec, next_run_ms = excluded.next_run_ms,
        last_run_ms = excluded.last_run_ms, iterations = excluded.iterations,
        created_at = excluded.created_at, updated_at = excluded.updated_at";

/// Moves scheduler `?2` of `?1` on, only while its next slot is still `?3`.
const ADVANCE: &str = "UPDATE job_schedulers SET next_run_ms = ?4, last_run_ms = ?5, iterations = ?6
    WHERE ns = ?1 AND id = ?2 AND next_run_ms = ?3";

const REMOVE: &str = "DELETE FROM job_schedulers WHERE ns = ?1 AND id = ?2";

/// A row as stored: the spec still text, parsed by [`Stored::scheduler`].
struct Stored {
    id: String,
    spec: String,
    next_run_ms: Option<i64>,
    last_run_ms: Option<i64>,
    iterations: u64,
    created_at: i64,
    updated_at: i64,
}

impl Stored {
    /// The scheduler, or a `Backend` error naming it when its spec does not parse.
    fn scheduler(self) -> Result<JobScheduler> {
        let SchedulerSpec { rule, template } = SchedulerSpec::from_json(&self.id, &self.spec)?;
        Ok(JobScheduler {
            id: self.id,
            rule,
            template,
            next_run_ms: self.next_run_ms,
            last_run_ms: self.last_run_ms,
            iterations: self.iterations,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

fn stored_from_row(r: &Row<'_>) -> rusqlite::Result<Stored> {
    Ok(Stored {
        id: r.get(0)?,
        spec: r.get(1)?,
        next_run_ms: r.get(2)?,
        last_run_ms: r.get(3)?,
        iterations: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

fn load(conn: &Connection, ns: &str, id: &str) -> Result<Option<Stored>> {
    conn.prepare_cached(&one_sql()).db()?.query_row((ns, id), stored_from_row).optional().db()
}

/// The scheduler an upsert replaces: the stored one, or, when its spec no longer parses, one
/// with the new spec and the stored count, slots and creation time (all `plan_upsert` keeps),
/// so an upsert repairs the row.
fn replaced(stored: Stored, req: &UpsertSchedulerRequest) -> JobScheduler {
    let Stored { id, spec, next_run_ms, last_run_ms, iterations, created_at, updated_at } = stored;
    match SchedulerSpec::from_json(&id, &spec) {
        Ok(SchedulerSpec { rule, template }) => {
            JobScheduler { id, rule, template, next_run_ms, last_run_ms, iterations, created_at, updated_at }
        }
        Err(e) => {
            tracing::warn!(
                scheduler = %id,
                error = %e,
                "upsert replaces a scheduler whose stored spec does not parse"
            );
            let (rule, template) = (req.rule.clone(), req.template.clone());
            JobScheduler { id, rule, template, next_run_ms, last_run_ms, iterations, created_at, updated_at }
        }
    }
}

fn upsert(ctx: &mut WriteCtx<'_>, ns: &str, req: UpsertSchedulerRequest) -> Result<JobScheduler> {
    let existing = load(ctx.conn, ns, &req.id)?.map(|s| replaced(s, &req));
    let UpsertSchedulerRequest { id, rule, template, now } = req;
    let s = plan_upsert(existing.as_ref(), &id, rule, template, now)?;
    let spec = SchedulerSpec { rule: s.rule.clone(), template: s.template.clone() }.to_json();
    ctx.conn
        .prepare_cached(UPSERT)
        .db()?
        .execute((ns, &s.id, &spec, s.next_run_ms, s.last_run_ms, s.iterations, s.created_at, s.updated_at))
        .db()?;
    Ok(s)
}

/// Writes `plan`'s next slot, last slot and count for `id`; false when its next slot is no
/// longer `plan.expected_next_ms` (another round moved it).
fn advance(conn: &Connection, ns: &str, id: &str, plan: &FirePlan) -> Result<bool> {
    let n = conn
        .prepare_cached(ADVANCE)
        .db()?
        .execute((ns, id, plan.expected_next_ms, plan.next_run_ms, plan.last_run_ms, plan.iterations))
        .db()?;
    Ok(n == 1)
}

/// Fires one due scheduler (see the module doc); the slots it fired.
fn fire_one(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    s: &JobScheduler,
    mut plan: FirePlan,
    now: i64,
) -> Result<Vec<FiredSlot>> {
    let (slots, jobs): (Vec<i64>, Vec<_>) = std::mem::take(&mut plan.fire).into_iter().unzip();
    let jobs = EnqueueRequest { jobs, max_pending: None, now };
    let fired = ctx.savepoint(|ctx| {
        if !advance(ctx.conn, ns, &s.id, &plan)? {
            return Ok(None);
        }
        if jobs.jobs.is_empty() {
            return Ok(Some(Vec::new()));
        }
        jobs.validate()?;
        enqueue::enqueue(ctx, ns, &jobs).map(Some)
    });
    match fired {
        Ok(Some(out)) => Ok(slots
            .into_iter()
            .zip(out)
            .map(|(slot_ms, e)| FiredSlot { scheduler_id: s.id.clone(), slot_ms, job_id: e.id })
            .collect()),
        Ok(None) => Ok(Vec::new()),
        Err(e) if flexiq_core::schedule::is_refusal(&e) => {
            tracing::warn!(
                namespace = ns,
                scheduler = %s.id,
                slots = ?slots,
                error = %e,
                "scheduler slots skipped: their enqueue was refused"
            );
            advance(ctx.conn, ns, &s.id, &flexiq_core::schedule::plan_skip(s, &plan, now)?)?;
            Ok(Vec::new())
        }
        Err(Error::Backend { message, retryable }) => Err(Error::Backend {
            message: format!("firing scheduler {} in namespace {ns} failed: {message}", s.id),
            retryable,
        }),
        Err(e) => Err(e),
    }
}

/// One round (see the module doc): due schedulers in (next slot, id) order, at most `limit`
/// of them fired or skipped.
fn fire_due(ctx: &mut WriteCtx<'_>, ns: &str, req: FireSchedulersRequest) -> Result<Vec<FiredSlot>> {
    let FireSchedulersRequest { limit, now } = req;
    let mut out = Vec::new();
    let mut handled: u32 = 0;
    // A scheduler this round moved may still be due (a capped catch-up) and show up again
    // further on: it waits for the next round.
    let mut seen: HashSet<String> = HashSet::new();
    let mut after = (i64::MIN, String::new());
    while handled < limit {
        let page: Vec<Stored> = {
            let mut stmt = ctx.conn.prepare_cached(&due_sql()).db()?;
            let rows = stmt.query_map((ns, now, after.0, &after.1, limit - handled), stored_from_row).db()?;
            rows.collect::<rusqlite::Result<_>>().db()?
        };
        let Some(last) = page.last() else { break };
        after = (last.next_run_ms.unwrap_or(i64::MIN), last.id.clone());
        for row in page {
            if handled == limit {
                break;
            }
            if !seen.insert(row.id.clone()) {
                continue;
            }
            let id = row.id.clone();
            let planned = row.scheduler().and_then(|s| Ok((plan_fire(&s, now)?, s)));
            let (plan, s) = match planned {
                Ok((Some(plan), s)) => (plan, s),
                Ok((None, _)) => continue,
                Err(e) => {
                    tracing::warn!(
                        namespace = ns,
                        scheduler = %id,
                        error = %e,
                        "scheduler left unfired: this build cannot plan it"
                    );
                    continue;
                }
            };
            handled += 1;
            out.extend(fire_one(ctx, ns, &s, plan, now)?);
        }
    }
    Ok(out)
}

#[async_trait::async_trait]
impl Schedulers for SqliteStore {
    async fn upsert_job_scheduler(&self, req: UpsertSchedulerRequest) -> Result<JobScheduler> {
        req.validate()?;
        let ns = self.ns();
        self.write_small(false, move |ctx| upsert(ctx, &ns, req)).await
    }

    async fn get_job_scheduler(&self, id: &str) -> Result<Option<JobScheduler>> {
        let (ns, id) = (self.ns(), id.to_string());
        self.read(move |conn| load(conn, &ns, &id)?.map(Stored::scheduler).transpose()).await
    }

    async fn list_job_schedulers(&self, req: ListSchedulersRequest) -> Result<Page<JobScheduler>> {
        req.validate()?;
        let after = req.after_id()?.unwrap_or_default();
        let (ns, limit) = (self.ns(), req.limit);
        self.read(move |conn| {
            let mut stmt = conn.prepare_cached(&page_sql()).db()?;
            let rows = stmt.query_map((&*ns, &after, i64::from(limit) + 1), stored_from_row).db()?;
            let rows: Vec<Stored> = rows.collect::<rusqlite::Result<_>>().db()?;
            let rows = rows.into_iter().map(Stored::scheduler).collect::<Result<Vec<_>>>()?;
            Ok(schedulers_page(rows, limit))
        })
        .await
    }

    async fn remove_job_scheduler(&self, id: &str) -> Result<bool> {
        let (ns, id) = (self.ns(), id.to_string());
        self.write_small(false, move |ctx| {
            Ok(ctx.conn.prepare_cached(REMOVE).db()?.execute((&*ns, &id)).db()? > 0)
        })
        .await
    }

    async fn count_job_schedulers(&self) -> Result<u64> {
        let ns = self.ns();
        self.read(move |conn| conn.prepare_cached(COUNT).db()?.query_row([&*ns], |r| r.get(0)).db()).await
    }

    async fn fire_due_schedulers(&self, req: FireSchedulersRequest) -> Result<Vec<FiredSlot>> {
        req.validate()?;
        let ns = self.ns();
        self.write(false, move |ctx| fire_due(ctx, &ns, req)).await
    }
}
