//! Job schedulers: a rule (cron with a time zone, or every N ms) and a job template, fired by
//! the elected leader.
//!
//! Everything a scheduler decides is here, pure and clocked by the caller, so every store fires
//! the same slots: [`plan_upsert`] places a new or replaced scheduler's next slot (never at or
//! before a slot it already fired, so replacing a rule cannot fire a slot twice), and
//! [`plan_fire`] says which due slots one round fires under the catch-up policy and where the
//! scheduler goes next. A store applies a plan in the same transaction or script as the
//! enqueue of its jobs, after checking that the scheduler's next slot is still the one the plan
//! started from, so two leaders never fire one slot: the loser's check fails and it writes
//! nothing. Each fired job carries the slot in its unique key (`scheduler:<id>:<slot ms>`).
//!
//! Cron patterns are parsed by `croner` (five fields, or six with seconds first) and evaluated
//! in an IANA zone from `chrono-tz` (UTC by default), so a pattern follows the zone's daylight
//! saving changes: a wall time skipped by a spring-forward fires once, at the first instant
//! after the gap (02:30 in Berlin on the last Sunday of March fires at 03:00 CEST), and one
//! repeated by a fall-back fires once.

use std::str::FromStr;

use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use croner::Cron;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::options::{validate_name, EnqueueOptions, NewJob};

/// Most slots one scheduler fires in one round under `catch_up = all`.
pub const MAX_CATCH_UP: u32 = 1_000;

/// When a scheduler fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repeat {
    /// A cron pattern (five fields, or six with seconds first) in an IANA zone (UTC when
    /// `None`).
    Cron {
        /// The pattern, e.g. `"0 9 * * MON-FRI"`.
        pattern: String,
        /// The zone, e.g. `"Europe/Berlin"`.
        tz: Option<String>,
    },
    /// Every `every_ms` milliseconds from the start (`start_at_ms`, or the upsert time).
    Every {
        /// The period, 1 ms or more.
        every_ms: u64,
    },
}

/// What a round does with slots missed while no leader ran (downtime, a paused service).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CatchUp {
    /// Fires only the newest due slot; older missed ones are skipped.
    #[default]
    Latest,
    /// Fires every due slot, oldest first, at most `max` a round (the rest in later rounds).
    All {
        /// 1 to [`MAX_CATCH_UP`].
        max: u32,
    },
    /// Fires a due slot only when no slot was missed; after a gap it skips to the next slot
    /// still ahead.
    None,
}

/// A scheduler's rule: when, from and until when, how many times, and catch-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatRule {
    /// When it fires.
    pub repeat: Repeat,
    /// Fire at most this many jobs in all (1 or more); `None` for no limit.
    pub limit: Option<u64>,
    /// No slot before this Unix ms.
    pub start_at_ms: Option<i64>,
    /// No slot after this Unix ms.
    pub end_at_ms: Option<i64>,
    /// Fire once at once (at the upsert, or at `start_at_ms`), then follow the rule.
    pub immediately: bool,
    /// Missed slots.
    pub catch_up: CatchUp,
}

/// The job each slot enqueues: task, payload and options. The options may not set a delay,
/// `run_at`, LIFO, a unique or dedup key, dependencies or workflow fields: the slot decides
/// when the job runs and its unique key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobTemplate {
    /// Task name.
    pub task: String,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// Options (queue, priority, retries, backoff, timeout, metadata, group).
    pub options: EnqueueOptions,
}

/// A stored scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct JobScheduler {
    /// Its id in the namespace.
    pub id: String,
    /// The rule.
    pub rule: RepeatRule,
    /// The job it enqueues.
    pub template: JobTemplate,
    /// The next slot (Unix ms); `None` once the rule has no slot left (limit or end reached).
    pub next_run_ms: Option<i64>,
    /// The newest slot fired (Unix ms); `None` before the first.
    pub last_run_ms: Option<i64>,
    /// Jobs fired so far.
    pub iterations: u64,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms of the last upsert.
    pub updated_at: i64,
}

/// The rule and template as the stores keep them: one JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedulerSpec {
    /// The rule.
    pub rule: RepeatRule,
    /// The template.
    pub template: JobTemplate,
}

impl SchedulerSpec {
    /// The stored form.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scheduler spec always serialises")
    }

    /// Reads the stored form back; a malformed document is a `Backend` error naming `id`.
    pub fn from_json(id: &str, text: &str) -> Result<Self> {
        serde_json::from_str(text)
            .map_err(|e| Error::backend(format!("scheduler {id} is stored malformed: {e}")))
    }
}

/// The unique key of the job a scheduler fires at `slot_ms`.
pub fn slot_key(id: &str, slot_ms: i64) -> String {
    format!("scheduler:{id}:{slot_ms}")
}

fn parse_cron(pattern: &str) -> Result<Cron> {
    let malformed =
        |why: &dyn std::fmt::Display| Error::invalid(format!("cron pattern {pattern:?} is malformed: {why}"));
    let cron = Cron::from_str(pattern).map_err(|e| malformed(&e))?;
    // croner takes a field whose list items are all empty (`,`) as a set of no values. Nothing
    // then matches, and each search for a slot walks every minute (or second) up to the year
    // 5000 before giving up: seconds of work per upsert or round for a rule that never fires.
    let p = &cron.pattern;
    let fields = [
        ("second", &p.seconds),
        ("minute", &p.minutes),
        ("hour", &p.hours),
        ("day of month", &p.days),
        ("month", &p.months),
        ("day of week", &p.days_of_week),
    ];
    if let Some((name, _)) = fields.iter().find(|(_, f)| f.values().is_empty() && !f.has_modifiers()) {
        return Err(malformed(&format!("its {name} field matches no value")));
    }
    Ok(cron)
}

fn parse_tz(tz: Option<&str>) -> Result<Tz> {
    match tz {
        None => Ok(Tz::UTC),
        Some(name) => Tz::from_str(name).map_err(|_| Error::invalid(format!("unknown time zone {name:?}"))),
    }
}

impl RepeatRule {
    /// A rule firing every `every_ms` ms, with no limit, window or catch-up beyond the latest.
    pub fn every(every_ms: u64) -> Self {
        RepeatRule::from_repeat(Repeat::Every { every_ms })
    }

    /// A rule firing on a cron pattern in `tz` (UTC when `None`), with no limit, window or
    /// catch-up beyond the latest.
    pub fn cron(pattern: &str, tz: Option<&str>) -> Self {
        RepeatRule::from_repeat(Repeat::Cron { pattern: pattern.to_string(), tz: tz.map(str::to_string) })
    }

    fn from_repeat(repeat: Repeat) -> Self {
        RepeatRule {
            repeat,
            limit: None,
            start_at_ms: None,
            end_at_ms: None,
            immediately: false,
            catch_up: CatchUp::Latest,
        }
    }

    /// Checks the rule: a cron pattern that parses, a known zone, a period of 1 ms or more, a
    /// limit of 1 or more, `end_at_ms` after `start_at_ms`, a catch-up cap of 1 to
    /// [`MAX_CATCH_UP`].
    pub fn validate(&self) -> Result<()> {
        match &self.repeat {
            Repeat::Cron { pattern, tz } => {
                parse_cron(pattern)?;
                parse_tz(tz.as_deref())?;
            }
            Repeat::Every { every_ms } => {
                if *every_ms == 0 || i64::try_from(*every_ms).is_err() {
                    return Err(Error::invalid(format!("every_ms {every_ms} must be 1 or more")));
                }
            }
        }
        if self.limit == Some(0) {
            return Err(Error::invalid("limit must be 1 or more"));
        }
        for (what, at) in [("start_at_ms", self.start_at_ms), ("end_at_ms", self.end_at_ms)] {
            if at.is_some_and(|v| v < 0) {
                return Err(Error::invalid(format!("{what} is before the Unix epoch")));
            }
        }
        if let (Some(s), Some(e)) = (self.start_at_ms, self.end_at_ms) {
            if e < s {
                return Err(Error::invalid(format!("end_at_ms {e} is before start_at_ms {s}")));
            }
        }
        if let CatchUp::All { max } = self.catch_up {
            if !(1..=MAX_CATCH_UP).contains(&max) {
                return Err(Error::invalid(format!(
                    "catch_up max {max} must be between 1 and {MAX_CATCH_UP}"
                )));
            }
        }
        Ok(())
    }
}

/// The slots of one rule, with its cron pattern and zone parsed once, so a round walking many
/// due slots does not parse them again for each.
struct Slots<'a> {
    rule: &'a RepeatRule,
    anchor_ms: i64,
    cron: Option<(Cron, Tz)>,
}

impl<'a> Slots<'a> {
    /// The slots of `rule`; a period counts from `start_at_ms`, else from `anchor_ms`.
    fn new(rule: &'a RepeatRule, anchor_ms: i64) -> Result<Self> {
        let cron = match &rule.repeat {
            Repeat::Cron { pattern, tz } => Some((parse_cron(pattern)?, parse_tz(tz.as_deref())?)),
            Repeat::Every { .. } => None,
        };
        Ok(Slots { rule, anchor_ms, cron })
    }

    /// The first slot strictly after `after_ms` (and not before `start_at_ms`), ignoring the
    /// limit; `None` when the rule has none (past `end_at_ms`).
    fn after(&self, after_ms: i64) -> Option<i64> {
        let rule = self.rule;
        let floor = rule.start_at_ms.map_or(after_ms, |s| after_ms.max(s.saturating_sub(1)));
        let next = match (&rule.repeat, &self.cron) {
            (_, Some((cron, tz))) => {
                let from = Utc.timestamp_millis_opt(floor).single()?;
                cron.find_next_occurrence(&from.with_timezone(tz), false).ok().map(|t| t.timestamp_millis())
            }
            (Repeat::Every { every_ms }, None) => {
                let base = rule.start_at_ms.unwrap_or(self.anchor_ms);
                if floor < base {
                    Some(base)
                } else {
                    // In i128: a stored anchor may lie anywhere, and a slot past i64 is none.
                    let every = i128::from((*every_ms).max(1));
                    let steps = (i128::from(floor) - i128::from(base)) / every + 1;
                    i64::try_from(i128::from(base) + steps * every).ok()
                }
            }
            (Repeat::Cron { .. }, None) => None,
        };
        next.filter(|n| rule.end_at_ms.is_none_or(|e| *n <= e))
    }
}

/// Checks a template: a valid task and options that leave timing, keys and dependencies to
/// the scheduler.
pub fn validate_template(id: &str, t: &JobTemplate) -> Result<()> {
    let o = &t.options;
    let refused = [
        (o.delay_ms.is_some(), "delay"),
        (o.run_at.is_some(), "run_at"),
        (o.lifo, "lifo"),
        (o.unique_key.is_some(), "unique_key"),
        (o.dedup.is_some(), "dedup"),
        (!o.depends_on.is_empty(), "depends_on"),
        (o.workflow_run_id.is_some() || o.workflow_stage_id.is_some(), "workflow fields"),
    ];
    if let Some((_, what)) = refused.iter().find(|(set, _)| *set) {
        return Err(Error::invalid(format!(
            "the template of scheduler {id} cannot set {what}: each slot decides it"
        )));
    }
    NewJob::build(&t.task, t.payload.clone(), o.clone(), 0).map(|_| ())
}

/// Checks a scheduler id: a name (not empty, at most the name limit, no control characters).
pub fn validate_scheduler_id(id: &str) -> Result<()> {
    validate_name("scheduler id", id)
}

/// The record an upsert writes: a new scheduler starts at its first slot after `now` (or at
/// once with `immediately`); a replaced one keeps its creation time, count and last slot, and
/// its next slot comes after both `now` and the last slot it fired.
pub fn plan_upsert(
    existing: Option<&JobScheduler>,
    id: &str,
    rule: RepeatRule,
    template: JobTemplate,
    now: i64,
) -> Result<JobScheduler> {
    validate_scheduler_id(id)?;
    rule.validate()?;
    validate_template(id, &template)?;
    let (created_at, iterations, last_run_ms) =
        existing.map_or((now, 0, None), |e| (e.created_at, e.iterations, e.last_run_ms));
    let anchor = rule.start_at_ms.unwrap_or(created_at);
    let next_run_ms = if rule.limit.is_some_and(|l| iterations >= l) {
        None
    } else if rule.immediately && last_run_ms.is_none() {
        Some(rule.start_at_ms.unwrap_or(now)).filter(|a| rule.end_at_ms.is_none_or(|e| *a <= e))
    } else {
        let after = last_run_ms.map_or(now, |l| l.max(now));
        Slots::new(&rule, anchor)?.after(after)
    };
    Ok(JobScheduler {
        id: id.to_string(),
        rule,
        template,
        next_run_ms,
        last_run_ms,
        iterations,
        created_at,
        updated_at: now,
    })
}

/// What one round does with a due scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct FirePlan {
    /// The slot the scheduler's stored `next_run_ms` must still hold (the store's check).
    pub expected_next_ms: i64,
    /// The slots to fire now, oldest first, each with its job (unique key = [`slot_key`]).
    pub fire: Vec<(i64, NewJob)>,
    /// The scheduler after the round.
    pub next_run_ms: Option<i64>,
    /// Its newest fired slot after the round.
    pub last_run_ms: Option<i64>,
    /// Its count after the round.
    pub iterations: u64,
}

/// Plans one round for `s` at `now`; `None` when it is not due. Slots are walked from the
/// stored next slot up to `now` (at most [`MAX_CATCH_UP`] + 1 looked at), the catch-up policy
/// picks which fire, and the limit stops the walk. A rule read back from a store is checked
/// again first: one that [`RepeatRule::validate`] refuses (written by another build, edited,
/// corrupted) is a `Backend` error naming the scheduler, never a panic or a scheduler that
/// cannot advance.
pub fn plan_fire(s: &JobScheduler, now: i64) -> Result<Option<FirePlan>> {
    let Some(first) = s.next_run_ms.filter(|n| *n <= now) else { return Ok(None) };
    s.rule.validate().map_err(|e| {
        Error::backend(format!("scheduler {} is stored with a rule this build refuses: {e}", s.id))
    })?;
    let anchor = s.rule.start_at_ms.unwrap_or(s.created_at);
    let mut due = vec![first];
    let slots = Slots::new(&s.rule, anchor)?;
    let mut next = slots.after(first);
    while let Some(n) = next.filter(|n| *n <= now) {
        if due.len() > MAX_CATCH_UP as usize {
            break;
        }
        due.push(n);
        next = slots.after(n);
    }
    let chosen: Vec<i64> = match s.rule.catch_up {
        CatchUp::Latest => due.last().copied().into_iter().collect(),
        CatchUp::None => {
            if due.len() == 1 {
                due.clone()
            } else {
                Vec::new()
            }
        }
        CatchUp::All { max } => {
            let take = due.len().min(max as usize);
            if take < due.len() {
                next = Some(due[take]);
            }
            due[..take].to_vec()
        }
    };
    let left = s.rule.limit.map_or(u64::MAX, |l| l.saturating_sub(s.iterations));
    let chosen: Vec<i64> = chosen.into_iter().take(usize::try_from(left).unwrap_or(usize::MAX)).collect();
    let iterations = s.iterations.saturating_add(chosen.len() as u64);
    if s.rule.limit.is_some_and(|l| iterations >= l) {
        next = None;
    }
    let mut fire = Vec::with_capacity(chosen.len());
    for slot in &chosen {
        let mut opts = s.template.options.clone();
        opts.run_at = Some(*slot);
        opts.unique_key = Some(slot_key(&s.id, *slot));
        fire.push((*slot, NewJob::build(&s.template.task, s.template.payload.clone(), opts, now)?));
    }
    Ok(Some(FirePlan {
        expected_next_ms: first,
        fire,
        next_run_ms: next,
        last_run_ms: chosen.last().copied().or(s.last_run_ms).max(s.last_run_ms),
        iterations,
    }))
}

/// Whether an error from enqueueing a plan's jobs refuses the jobs themselves (a revoked
/// task, a full queue, a template the enqueue rejects, a conflict) rather than failing the
/// store: a refused slot would be refused again, so the store skips it ([`plan_skip`]) instead
/// of failing the round.
pub fn is_refusal(e: &Error) -> bool {
    use crate::error::ErrorKind;
    matches!(
        e.kind(),
        ErrorKind::TaskRevoked
            | ErrorKind::QueueFull
            | ErrorKind::InvalidArgument
            | ErrorKind::Conflict
            | ErrorKind::NotFound
    )
}

/// What a store writes when the enqueue of `plan`'s jobs was refused: the scheduler moves to
/// the slot after the refused ones, with its count and last slot unchanged. Skipped slots do
/// not count against the limit, so a scheduler with a limit still fires that many jobs once
/// its task is accepted again.
pub fn plan_skip(s: &JobScheduler, plan: &FirePlan, now: i64) -> Result<FirePlan> {
    // Only a limit can make the skipped round's next slot differ from the fired round's.
    let next_run_ms = if s.rule.limit.is_none() {
        plan.next_run_ms
    } else {
        let mut unlimited = s.clone();
        unlimited.rule.limit = None;
        plan_fire(&unlimited, now)?.map_or(plan.next_run_ms, |p| p.next_run_ms)
    };
    Ok(FirePlan {
        expected_next_ms: plan.expected_next_ms,
        fire: Vec::new(),
        next_run_ms,
        last_run_ms: s.last_run_ms,
        iterations: s.iterations,
    })
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
