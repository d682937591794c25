//! Job schedulers (`Schedulers`): a hash per scheduler and two sorted sets, written only by
//! scripts that first check the scheduler is still as it was read.
//!
//! A scheduler is the hash `B:js:<id>` (`spec`, the rule and template as
//! [`SchedulerSpec::to_json`]; `next_run_ms`, missing once no slot is left; `last_run_ms`,
//! missing before the first; `iterations`; `created_at`; `updated_at`), a member of `B:jsn`
//! scored by its next slot while it has one (the due scan, most overdue first), and a member of
//! `B:jsi` scored 0 (keyset listing by id with `BYLEX`, and `ZCARD` for the count). All three
//! are built from the namespace base, so every script touching them stays in its Cluster slot.
//!
//! Core decides everything ([`plan_upsert`], [`plan_fire`]); Redis has no transaction that
//! reads, so each write carries what it was decided from. An upsert sends the next slot, last
//! slot, count and update time it read (or that there was none), and `schedulers.lua` writes
//! nothing when they changed meanwhile; the upsert then reads and decides again. A fire is one
//! run of `enqueue.lua` with a guard after its jobs: the script moves the scheduler's next slot
//! only while it is still the plan's `expected_next_ms` and then enqueues the slots' jobs, so
//! two leaders racing on one slot enqueue it once (the loser's script writes nothing and
//! answers 0) and a crash leaves either both or neither. A refused enqueue (a revoked task)
//! does not wedge the scheduler: the script moved its next slot before the checks to where
//! `flexiq_core::schedule::plan_skip` puts it, so the refused slots are skipped for good,
//! nothing is fired for them, and the count and last slot stay as they were (skipped slots do
//! not count against a limit).

use flexiq_core::schedule::{
    plan_fire, plan_upsert, validate_scheduler_id, FirePlan, JobScheduler, SchedulerSpec,
};
use flexiq_core::store::{
    schedulers_page, FireSchedulersRequest, FiredSlot, ListSchedulersRequest, Schedulers,
    UpsertSchedulerRequest,
};
use flexiq_core::{Error, JobId, NewJob, Page, Result};
use fred::types::Value;

use crate::conn::{n, s};
use crate::enqueue::enqueue_args;
use crate::error::shape;
use crate::row::{self, int, text};
use crate::store::RedisStore;

/// The fields of a scheduler hash, in the order [`parse`] reads them.
const FIELDS: [&str; 6] = ["spec", "next_run_ms", "last_run_ms", "iterations", "created_at", "updated_at"];

/// Reads and decisions an upsert makes before giving up on a scheduler that keeps changing.
const UPSERT_ATTEMPTS: usize = 16;

/// The stored form of an optional Unix ms: its decimal digits, `''` for none.
fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Parses an `HMGET` of [`FIELDS`]; `None` when the scheduler does not exist.
fn parse(id: &str, v: Value) -> Result<Option<JobScheduler>> {
    let f = v.into_array();
    if f.len() != FIELDS.len() {
        return Err(shape("scheduler"));
    }
    let Some(spec) = text(&f[0]) else { return Ok(None) };
    let SchedulerSpec { rule, template } = SchedulerSpec::from_json(id, &spec)?;
    let field = |i: usize| {
        int(&f[i]).ok_or_else(|| Error::backend(format!("scheduler {id} is stored without {}", FIELDS[i])))
    };
    Ok(Some(JobScheduler {
        id: id.to_string(),
        rule,
        template,
        next_run_ms: int(&f[1]),
        last_run_ms: int(&f[2]),
        iterations: u64::try_from(field(3)?).unwrap_or(0),
        created_at: field(4)?,
        updated_at: field(5)?,
    }))
}

impl RedisStore {
    fn hmget(&self, id: &str) -> (&'static str, Vec<Value>) {
        let mut args = vec![s(self.ctx.keys.scheduler(id))];
        args.extend(FIELDS.iter().map(|f| s(*f)));
        ("HMGET", args)
    }

    /// The schedulers of `ids`, in order; `None` for one that is gone.
    async fn read_schedulers(&self, ids: &[String]) -> Result<Vec<Option<JobScheduler>>> {
        let reads = ids.iter().map(|id| self.hmget(id)).collect();
        let replies = self.ctx.conn.pipeline(reads).await?;
        ids.iter().zip(replies).map(|(id, v)| parse(id, v)).collect()
    }

    async fn read_scheduler(&self, id: &str) -> Result<Option<JobScheduler>> {
        let (cmd, args) = self.hmget(id);
        parse(id, self.ctx.conn.cmd(cmd, args).await?)
    }

    /// Runs one operation of `schedulers.lua`, returning its integer reply.
    async fn schedulers_op(&self, args: Vec<Value>) -> Result<i64> {
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.schedulers, &self.ctx.keys.base, args).await?;
        int(&v).ok_or_else(|| shape("scheduler write"))
    }

    /// Applies `plan` to scheduler `id`: its jobs and its advance in one guarded run of the
    /// enqueue script. Returns the slots fired: none when another leader or an upsert got there
    /// first, or when the enqueue was refused (the scheduler moved past those slots).
    async fn fire_plan(&self, sched: &JobScheduler, plan: FirePlan, now: i64) -> Result<Vec<FiredSlot>> {
        let id = sched.id.as_str();
        let skip = flexiq_core::schedule::plan_skip(sched, &plan, now)?;
        let (slots, jobs): (Vec<i64>, Vec<NewJob>) = plan.fire.into_iter().unzip();
        let mut args = enqueue_args(&jobs, None, now, None);
        args.extend([
            s(id),
            s(plan.expected_next_ms.to_string()),
            s(opt(plan.next_run_ms)),
            s(opt(plan.last_run_ms)),
            s(plan.iterations.to_string()),
            s(opt(skip.next_run_ms)),
        ]);
        let reply =
            match self.ctx.conn.script(&self.ctx.conn.scripts.enqueue, &self.ctx.keys.base, args).await {
                Ok(Value::Integer(0)) => return Ok(Vec::new()),
                Ok(v) => v.into_array(),
                Err(e) if flexiq_core::schedule::is_refusal(&e) => return Ok(Vec::new()),
                Err(e) => return Err(e),
            };
        if reply.len() != 2 * slots.len() {
            return Err(Error::backend(format!(
                "scheduler {id} fired {} slots but the enqueue answered {} values",
                slots.len(),
                reply.len()
            )));
        }
        Ok(slots
            .into_iter()
            .zip(reply.chunks(2))
            .map(|(slot_ms, p)| FiredSlot {
                scheduler_id: id.to_string(),
                slot_ms,
                job_id: JobId::from_trusted(text(&p[0]).unwrap_or_default()),
            })
            .collect())
    }
}

#[async_trait::async_trait]
impl Schedulers for RedisStore {
    async fn upsert_job_scheduler(&self, req: UpsertSchedulerRequest) -> Result<JobScheduler> {
        self.ctx.check()?;
        req.validate()?;
        let UpsertSchedulerRequest { id, rule, template, now } = req;
        for _ in 0..UPSERT_ATTEMPTS {
            let existing = self.read_scheduler(&id).await?;
            let next = plan_upsert(existing.as_ref(), &id, rule.clone(), template.clone(), now)?;
            let spec = SchedulerSpec { rule: next.rule.clone(), template: next.template.clone() };
            let mut args = vec![s("upsert"), s(id.as_str())];
            match &existing {
                None => args.extend([s("0"), s(""), s(""), s(""), s("")]),
                Some(e) => args.extend([
                    s("1"),
                    s(opt(e.next_run_ms)),
                    s(opt(e.last_run_ms)),
                    s(e.iterations.to_string()),
                    s(e.updated_at.to_string()),
                ]),
            }
            args.extend([
                s(spec.to_json()),
                s(opt(next.next_run_ms)),
                s(opt(next.last_run_ms)),
                s(next.iterations.to_string()),
                s(next.created_at.to_string()),
                s(next.updated_at.to_string()),
            ]);
            if self.schedulers_op(args).await? == 1 {
                return Ok(next);
            }
        }
        Err(Error::Conflict(format!("scheduler {id} kept changing during {UPSERT_ATTEMPTS} upsert attempts")))
    }

    async fn get_job_scheduler(&self, id: &str) -> Result<Option<JobScheduler>> {
        self.ctx.check()?;
        validate_scheduler_id(id)?;
        self.read_scheduler(id).await
    }

    async fn list_job_schedulers(&self, req: ListSchedulersRequest) -> Result<Page<JobScheduler>> {
        self.ctx.check()?;
        req.validate()?;
        let want = req.limit as usize + 1;
        let mut from = req.after_id()?.map_or_else(|| "-".to_string(), |a| format!("({a}"));
        let mut rows = Vec::with_capacity(want);
        // A scheduler removed between the index read and its hash read is skipped, and the
        // index read again past it, so a page is short only at the end.
        loop {
            let ask = want - rows.len();
            let range =
                vec![s(self.ctx.keys.k("jsi")), s(from), s("+"), s("BYLEX"), s("LIMIT"), n(0), n(ask as i64)];
            let ids = row::strings(self.ctx.conn.cmd("ZRANGE", range).await?);
            let Some(last) = ids.last() else { break };
            from = format!("({last}");
            let full = ids.len() == ask;
            rows.extend(self.read_schedulers(&ids).await?.into_iter().flatten());
            if !full || rows.len() >= want {
                break;
            }
        }
        Ok(schedulers_page(rows, req.limit))
    }

    async fn remove_job_scheduler(&self, id: &str) -> Result<bool> {
        self.ctx.check()?;
        validate_scheduler_id(id)?;
        Ok(self.schedulers_op(vec![s("remove"), s(id)]).await? == 1)
    }

    async fn count_job_schedulers(&self) -> Result<u64> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("ZCARD", vec![s(self.ctx.keys.k("jsi"))]).await?;
        Ok(int(&v).unwrap_or(0).max(0) as u64)
    }

    async fn fire_due_schedulers(&self, req: FireSchedulersRequest) -> Result<Vec<FiredSlot>> {
        self.ctx.check()?;
        req.validate()?;
        let FireSchedulersRequest { limit, now } = req;
        let range = vec![
            s(self.ctx.keys.k("jsn")),
            s("-inf"),
            n(now),
            s("BYSCORE"),
            s("LIMIT"),
            n(0),
            n(i64::from(limit)),
        ];
        let due = row::strings(self.ctx.conn.cmd("ZRANGE", range).await?);
        let mut fired = Vec::new();
        for sched in self.read_schedulers(&due).await?.into_iter().flatten() {
            // Read after the scan: one another leader advanced meanwhile plans nothing.
            if let Some(plan) = plan_fire(&sched, now)? {
                fired.extend(self.fire_plan(&sched, plan, now).await?);
            }
        }
        if !fired.is_empty() {
            self.changed();
        }
        Ok(fired)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_hash_is_none_and_a_partial_one_names_the_id() {
        let nulls = Value::Array(vec![Value::Null; FIELDS.len()]);
        assert!(parse("beat", nulls).unwrap().is_none());
        let mut f = vec![Value::Null; FIELDS.len()];
        f[0] = Value::from("{not json");
        let e = parse("beat", Value::Array(f)).unwrap_err();
        assert!(e.to_string().contains("scheduler beat"), "{e}");
        assert!(parse("beat", Value::Array(vec![])).is_err());
    }
}
