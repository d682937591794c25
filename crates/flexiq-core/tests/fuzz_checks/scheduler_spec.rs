//! Stored schedulers: every store keeps a scheduler's rule and template as one JSON document
//! and reads it back with `SchedulerSpec::from_json` before the leader plans a round. A
//! document is whatever the row holds (written by an older build, edited by hand, corrupted),
//! so decoding must refuse malformed text as `Backend`, a decoded spec must survive a
//! re-encode, and planning a round of a decoded spec must not panic even when its rule would
//! not pass validation today.
//!
//! Input: `next_run_ms \n last_run_ms \n iterations \n created_at \n now \n spec JSON (the rest)`.

use flexiq_core::schedule::{plan_fire, plan_upsert, JobScheduler, SchedulerSpec};

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let next_run_ms = f.opt_i64();
    let last_run_ms = f.opt_i64();
    let iterations = f.u64();
    let created_at = f.i64();
    let now = f.i64();
    let json = String::from_utf8_lossy(&f.rest()).into_owned();

    let spec = match SchedulerSpec::from_json("fuzz", &json) {
        Ok(spec) => spec,
        Err(e) => {
            assert_eq!(e.code(), "BACKEND", "{e}");
            assert!(e.to_string().contains("scheduler fuzz"), "{e}");
            return;
        }
    };
    assert_eq!(SchedulerSpec::from_json("fuzz", &spec.to_json()).ok().as_ref(), Some(&spec));

    let stored = JobScheduler {
        id: "fuzz".into(),
        rule: spec.rule.clone(),
        template: spec.template.clone(),
        next_run_ms,
        last_run_ms,
        iterations,
        created_at,
        updated_at: created_at,
    };
    if let Ok(Some(p)) = plan_fire(&stored, now) {
        assert_eq!(Some(p.expected_next_ms), next_run_ms);
        assert!(p.fire.iter().all(|(slot, job)| *slot <= now && job.run_at == *slot));
    }
    let replaced = plan_upsert(Some(&stored), "fuzz", spec.rule.clone(), spec.template.clone(), now);
    if spec.rule.validate().is_err() {
        assert!(replaced.is_err(), "upsert took a rule validate refuses: {:?}", spec.rule);
    }
}
