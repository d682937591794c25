use super::*;

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;

fn template() -> JobTemplate {
    JobTemplate { task: "tick".into(), payload: b"{}".to_vec(), options: EnqueueOptions::default() }
}

fn ms(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339).unwrap().timestamp_millis()
}

/// Fires `s` at each `now` in turn (as a leader would), returning the slots fired.
fn run(mut s: JobScheduler, nows: impl IntoIterator<Item = i64>) -> (JobScheduler, Vec<i64>) {
    let mut fired = Vec::new();
    for now in nows {
        if let Some(p) = plan_fire(&s, now).unwrap() {
            assert_eq!(p.expected_next_ms, s.next_run_ms.unwrap());
            for (slot, job) in &p.fire {
                assert_eq!(job.run_at, *slot);
                fired.push(*slot);
            }
            s.next_run_ms = p.next_run_ms;
            s.last_run_ms = p.last_run_ms;
            s.iterations = p.iterations;
        }
    }
    (s, fired)
}

#[test]
fn every_with_a_limit_fires_that_many_then_stops() {
    let mut r = RepeatRule::every(1_000);
    r.limit = Some(3);
    let s = plan_upsert(None, "s", r, template(), 10_000).unwrap();
    assert_eq!(s.next_run_ms, Some(11_000));
    let (s, fired) = run(s, (11..20).map(|i| i * 1_000));
    assert_eq!(fired, vec![11_000, 12_000, 13_000]);
    assert_eq!((s.iterations, s.next_run_ms), (3, None));
}

#[test]
fn berlin_cron_follows_daylight_saving() {
    // 02:30 every day: on 2026-03-29 Berlin skips 02:00-03:00, on 2026-10-25 it repeats it.
    let r = RepeatRule::cron("30 2 * * *", Some("Europe/Berlin"));
    let s = plan_upsert(None, "s", r, template(), ms("2026-03-27T12:00:00Z")).unwrap();
    let (_, fired) = run(s, (0..72).map(|h| ms("2026-03-27T12:00:00Z") + h * HOUR));
    let want: Vec<i64> =
        vec![ms("2026-03-28T01:30:00Z"), ms("2026-03-29T01:00:00Z"), ms("2026-03-30T00:30:00Z")];
    assert_eq!(fired, want, "the skipped 02:30 of the 29th fires once, at 03:00 CEST, when the gap ends");

    let r = RepeatRule::cron("30 2 * * *", Some("Europe/Berlin"));
    let s = plan_upsert(None, "s", r, template(), ms("2026-10-24T12:00:00Z")).unwrap();
    let (_, fired) = run(s, (0..48).map(|h| ms("2026-10-24T12:00:00Z") + h * HOUR + MIN));
    assert_eq!(
        fired,
        vec![ms("2026-10-25T00:30:00Z"), ms("2026-10-26T01:30:00Z")],
        "the repeated hour fires once"
    );
}

#[test]
fn catch_up_policies_after_a_gap() {
    let mut r = RepeatRule::every(1_000);
    let s = plan_upsert(None, "s", r.clone(), template(), 0).unwrap();
    let (after, fired) = run(s.clone(), [5_500]);
    assert_eq!(fired, vec![5_000], "latest: only the newest due slot");
    assert_eq!(after.next_run_ms, Some(6_000));

    r.catch_up = CatchUp::All { max: 3 };
    let s = plan_upsert(None, "s", r.clone(), template(), 0).unwrap();
    let (after, fired) = run(s, [5_500, 5_600]);
    assert_eq!(fired, vec![1_000, 2_000, 3_000, 4_000, 5_000], "all: every slot, three a round");
    assert_eq!(after.next_run_ms, Some(6_000));

    r.catch_up = CatchUp::None;
    let s = plan_upsert(None, "s", r, template(), 0).unwrap();
    let (after, fired) = run(s, [5_500, 6_000]);
    assert_eq!(fired, vec![6_000], "none: the gap is skipped, the next on-time slot fires");
    assert_eq!(after.next_run_ms, Some(7_000));
}

#[test]
fn upsert_never_fires_a_slot_twice_and_keeps_the_count() {
    let r = RepeatRule::every(1_000);
    let s = plan_upsert(None, "s", r.clone(), template(), 0).unwrap();
    let (s, fired) = run(s, [1_000, 2_000]);
    assert_eq!(fired, vec![1_000, 2_000]);
    // Replaced at 2,000 with the same rule: 2,000 already fired, so the next is 3,000.
    let again = plan_upsert(Some(&s), "s", r, template(), 2_000).unwrap();
    assert_eq!((again.next_run_ms, again.iterations, again.created_at), (Some(3_000), 2, 0));
}

#[test]
fn immediately_fires_at_once_then_follows_the_rule() {
    let mut r = RepeatRule::cron("0 * * * *", None);
    r.immediately = true;
    let s = plan_upsert(None, "s", r, template(), 90 * MIN + 7).unwrap();
    assert_eq!(s.next_run_ms, Some(90 * MIN + 7));
    let (s, fired) = run(s, [90 * MIN + 7, 2 * HOUR]);
    assert_eq!(fired, vec![90 * MIN + 7, 2 * HOUR]);
    assert_eq!(s.next_run_ms, Some(3 * HOUR));
}

#[test]
fn start_and_end_bound_the_slots() {
    let mut r = RepeatRule::every(1_000);
    r.start_at_ms = Some(5_500);
    r.end_at_ms = Some(7_500);
    let s = plan_upsert(None, "s", r, template(), 0).unwrap();
    let (s, fired) = run(s, (1..12).map(|i| i * 1_000));
    assert_eq!(fired, vec![5_500, 6_500, 7_500]);
    assert_eq!(s.next_run_ms, None);
}

#[test]
fn fired_jobs_carry_the_slot_key_and_template() {
    let mut t = template();
    t.options.queue = Some("cron".into());
    let s = plan_upsert(None, "nightly", RepeatRule::every(10), t, 0).unwrap();
    let p = plan_fire(&s, 10).unwrap().unwrap();
    let (slot, job) = &p.fire[0];
    assert_eq!((*slot, job.queue.as_str(), job.task.as_str()), (10, "cron", "tick"));
    assert_eq!(job.unique_key.as_deref(), Some("scheduler:nightly:10"));
    assert!(plan_fire(&s, 9).unwrap().is_none(), "not due yet");
}

#[test]
fn bad_rules_templates_and_ids_are_refused() {
    let bad_rules = [
        RepeatRule::cron("61 * * * *", None),
        RepeatRule::cron("not a cron", None),
        RepeatRule::cron("* * * * *", Some("Mars/Olympus")),
        RepeatRule::every(0),
        RepeatRule { limit: Some(0), ..RepeatRule::every(1) },
        RepeatRule { start_at_ms: Some(10), end_at_ms: Some(5), ..RepeatRule::every(1) },
        RepeatRule { start_at_ms: Some(-1), ..RepeatRule::every(1) },
        RepeatRule { catch_up: CatchUp::All { max: 0 }, ..RepeatRule::every(1) },
        RepeatRule { catch_up: CatchUp::All { max: MAX_CATCH_UP + 1 }, ..RepeatRule::every(1) },
    ];
    for r in bad_rules {
        let e = plan_upsert(None, "s", r.clone(), template(), 0).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{r:?}");
    }
    let every = RepeatRule::every(1);
    let mut t = template();
    t.options.unique_key = Some("k".into());
    let e = plan_upsert(None, "s", every.clone(), t, 0).unwrap_err();
    assert!(e.to_string().contains("scheduler s") && e.to_string().contains("unique_key"), "{e}");
    let mut t = template();
    t.options.delay_ms = Some(5);
    assert_eq!(plan_upsert(None, "s", every.clone(), t, 0).unwrap_err().code(), "INVALID_ARGUMENT");
    let t = JobTemplate { task: String::new(), ..template() };
    assert_eq!(plan_upsert(None, "s", every.clone(), t, 0).unwrap_err().code(), "INVALID_ARGUMENT");
    assert_eq!(plan_upsert(None, "", every, template(), 0).unwrap_err().code(), "INVALID_ARGUMENT");
}

#[test]
fn six_field_cron_fires_every_second() {
    let s = plan_upsert(None, "s", RepeatRule::cron("* * * * * *", None), template(), 500).unwrap();
    let (_, fired) = run(s, [1_000, 2_000, 3_000]);
    assert_eq!(fired, vec![1_000, 2_000, 3_000]);
}

#[test]
fn spec_round_trips_as_json() {
    let spec = SchedulerSpec {
        rule: RepeatRule::cron("0 9 * * MON-FRI", Some("Europe/Berlin")),
        template: template(),
    };
    assert_eq!(SchedulerSpec::from_json("s", &spec.to_json()).unwrap(), spec);
    assert_eq!(SchedulerSpec::from_json("s", "{").unwrap_err().code(), "BACKEND");
}

#[test]
fn a_skipped_round_moves_on_without_counting() {
    let mut r = RepeatRule::every(1_000);
    r.limit = Some(1);
    let s = plan_upsert(None, "s", r, template(), 0).unwrap();
    let p = plan_fire(&s, 1_000).unwrap().unwrap();
    assert_eq!((p.next_run_ms, p.iterations), (None, 1), "firing would reach the limit");
    let skip = plan_skip(&s, &p, 1_000).unwrap();
    assert_eq!((skip.next_run_ms, skip.iterations, skip.last_run_ms), (Some(2_000), 0, None));
    assert!(skip.fire.is_empty());
    assert!(is_refusal(&Error::invalid("x")) && !is_refusal(&Error::backend("down")));
}

#[test]
fn stored_rules_that_fail_validation_are_refused_by_name_not_panicked_on() {
    // What a row may hold after another build, a hand edit or corruption wrote it.
    let stored = |rule: RepeatRule, created_at: i64, iterations: u64| JobScheduler {
        id: "s".into(),
        rule,
        template: template(),
        next_run_ms: Some(1_000),
        last_run_ms: None,
        iterations,
        created_at,
        updated_at: created_at,
    };
    let refused = [
        RepeatRule::every(0),
        RepeatRule::every(u64::MAX),
        RepeatRule { start_at_ms: Some(i64::MIN), ..RepeatRule::every(1_000) },
        RepeatRule { catch_up: CatchUp::All { max: 0 }, ..RepeatRule::every(1_000) },
    ];
    for rule in refused {
        let e = plan_fire(&stored(rule.clone(), 0, 0), 5_000).unwrap_err();
        assert_eq!(e.code(), "BACKEND", "{rule:?}");
        assert!(e.to_string().contains("scheduler s"), "{e}");
    }
    // A valid rule with a far-off stored anchor or count plans without overflow.
    let p = plan_fire(&stored(RepeatRule::every(1_000), i64::MIN, 0), 5_000).unwrap().unwrap();
    assert_eq!(p.fire.len(), 1);
    assert!(p.next_run_ms.is_none_or(|n| n > 5_000));
    let p = plan_fire(&stored(RepeatRule::every(1_000), 0, u64::MAX), 5_000).unwrap().unwrap();
    assert_eq!(p.iterations, u64::MAX);
}

#[test]
fn a_field_matching_no_value_is_refused_rather_than_searched_for_years() {
    // Each of these once validated, and looking for its next slot walked every minute up to the
    // year 5000 (seconds per upsert, minutes for an empty seconds field).
    for (pattern, field) in [
        (", * * * *", "minute"),
        ("* , * * *", "hour"),
        ("* * , * *", "day of month"),
        ("* * * , *", "month"),
        ("* * * * ,", "day of week"),
        (", * * * * *", "second"),
    ] {
        let e = RepeatRule::cron(pattern, None).validate().unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{pattern}");
        assert!(e.to_string().contains(&format!("its {field} field matches no value")), "{e}");
    }
    // Empty items beside real ones, and modifiers without plain values, still parse.
    for pattern in ["* 1, * * *", "0 0 L * *", "0 12 * * FRI#2", "0 0 15W * *", "0 0 * * 5L"] {
        RepeatRule::cron(pattern, None).validate().unwrap_or_else(|e| panic!("{pattern}: {e}"));
    }
}
