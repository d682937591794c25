//! Cron schedulers: a rule's pattern and zone are caller text, validated by
//! `RepeatRule::validate`, and every accepted rule is then planned by `plan_upsert` and fired
//! round after round by `plan_fire`, walking slots through `croner` and `chrono-tz`. An
//! accepted rule must plan and fire without panicking, and the slots fired must keep the
//! scheduler's promises: inside the window, never in the future, never twice, at most `limit`.
//!
//! Input: `pattern \n zone (empty: UTC) \n now \n ms between rounds \n start_at_ms \n
//! end_at_ms \n limit \n immediately \n catch-up (latest, none, or a number: all with that max)`.

use flexiq_core::schedule::{plan_fire, plan_upsert, slot_key, JobScheduler};
use flexiq_core::{CatchUp, EnqueueOptions, JobTemplate, RepeatRule};

use super::input::Fields;

/// Rounds fired after the upsert.
const ROUNDS: usize = 4;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let pattern = f.text();
    let tz = f.opt_text();
    let now = f.i64();
    let step = f.u64() % (400 * 24 * 3_600_000);
    let mut rule = RepeatRule::cron(&pattern, tz.as_deref());
    rule.start_at_ms = f.opt_i64();
    rule.end_at_ms = f.opt_i64();
    rule.limit = f.opt_i64().map(|l| l as u64 % 8);
    rule.immediately = f.flag();
    rule.catch_up = match f.text().as_str() {
        "" | "latest" => CatchUp::Latest,
        "none" => CatchUp::None,
        n => CatchUp::All { max: n.parse().unwrap_or(3) },
    };
    plans_soundly(rule, now, step);
}

/// Upserts `rule` at `now` and fires it [`ROUNDS`] times, `step` ms apart, checking each plan.
fn plans_soundly(rule: RepeatRule, now: i64, step: u64) {
    let template =
        JobTemplate { task: "tick".into(), payload: b"{}".to_vec(), options: EnqueueOptions::default() };
    let valid = rule.validate();
    let planned = plan_upsert(None, "fuzz", rule.clone(), template, now);
    let mut s = match (valid, planned) {
        (Ok(()), Ok(s)) => s,
        (Err(e), Err(p)) => {
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{rule:?}: {e}");
            assert_eq!(e.to_string(), p.to_string(), "upsert refuses what validate refuses");
            return;
        }
        (v, p) => panic!("validate said {v:?} but upsert said {p:?} for {rule:?}"),
    };
    if let Some(n) = s.next_run_ms {
        in_window(&rule, n);
        assert!(rule.immediately || n > now, "first slot {n} is not after the upsert at {now}");
    }
    let mut at = now;
    for _ in 0..ROUNDS {
        at = at.saturating_add(step as i64);
        if !fire_once(&mut s, at, now >= 0) {
            return;
        }
    }
}

/// Plans one round at `now` and applies it; false when planning failed, which only a clock
/// before the epoch may do (`strict` false): its slots are refused as job times.
fn fire_once(s: &mut JobScheduler, now: i64, strict: bool) -> bool {
    let rule = s.rule.clone();
    let plan = match plan_fire(s, now) {
        Ok(plan) => plan,
        Err(e) if !strict => {
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
            return false;
        }
        Err(e) => panic!("{rule:?} at {now}: {e}"),
    };
    let Some(p) = plan else {
        assert!(s.next_run_ms.is_none_or(|n| n > now), "a due scheduler planned nothing");
        return true;
    };
    assert_eq!(Some(p.expected_next_ms), s.next_run_ms);
    let mut prev = s.last_run_ms;
    for (slot, job) in &p.fire {
        assert!(*slot <= now, "slot {slot} fired before its time {now}");
        assert!(prev.is_none_or(|l| *slot > l), "slot {slot} fired again or out of order after {prev:?}");
        in_window(&rule, *slot);
        assert_eq!(job.run_at, *slot);
        assert_eq!(job.unique_key.as_deref(), Some(slot_key(&s.id, *slot).as_str()));
        prev = Some(*slot);
    }
    assert_eq!(p.iterations, s.iterations + p.fire.len() as u64);
    if let Some(l) = rule.limit {
        assert!(p.iterations <= l, "{} fired over the limit {l}", p.iterations);
        assert!(p.iterations < l || p.next_run_ms.is_none(), "a spent scheduler keeps a next slot");
    }
    if let (Some(n), Some(l)) = (p.next_run_ms, p.last_run_ms) {
        assert!(n > l, "next slot {n} is not after the last fired {l}");
    }
    if let Some(n) = p.next_run_ms {
        in_window(&rule, n);
    }
    s.next_run_ms = p.next_run_ms;
    s.last_run_ms = p.last_run_ms;
    s.iterations = p.iterations;
    true
}

fn in_window(rule: &RepeatRule, slot: i64) {
    assert!(rule.start_at_ms.is_none_or(|a| slot >= a), "slot {slot} before start of {rule:?}");
    assert!(rule.end_at_ms.is_none_or(|e| slot <= e), "slot {slot} after end of {rule:?}");
}
