use super::*;
use crate::job::JobStatus::*;

fn change(
    from: Option<JobStatus>,
    to: JobStatus,
    before: u32,
    after: u32,
    stalled: bool,
) -> Option<EventKind> {
    status_event(StatusChange { from, to, attempt_before: before, attempt_after: after, stalled })
}

#[test]
fn a_new_row_is_enqueued_whatever_its_status() {
    assert_eq!(change(None, Pending, 0, 0, false), Some(EventKind::Enqueued));
    assert_eq!(change(None, Waiting, 0, 0, false), Some(EventKind::Enqueued));
}

#[test]
fn an_unchanged_status_reports_nothing() {
    for s in JobStatus::ALL {
        assert_eq!(change(Some(s), s, 1, 1, false), None, "{s:?}");
    }
}

#[test]
fn each_transition_of_the_state_machine_has_its_name() {
    assert_eq!(change(Some(Pending), Running, 0, 1, false), Some(EventKind::Active));
    assert_eq!(change(Some(Suspended), Running, 0, 1, false), Some(EventKind::Active));
    assert_eq!(change(Some(Running), Completed, 1, 1, false), Some(EventKind::Completed));
    assert_eq!(change(Some(Running), Pending, 1, 1, false), Some(EventKind::Retried));
    assert_eq!(change(Some(Running), Failed, 1, 1, false), Some(EventKind::Failed));
    assert_eq!(change(Some(Running), Dead, 3, 3, false), Some(EventKind::Dead));
    assert_eq!(change(Some(Running), Pending, 1, 0, true), Some(EventKind::Stalled));
    assert_eq!(change(Some(Running), Pending, 1, 1, true), Some(EventKind::Stalled));
    assert_eq!(change(Some(Running), Pending, 2, 1, false), Some(EventKind::Requeued));
    assert_eq!(change(Some(Running), Suspended, 1, 0, false), Some(EventKind::Suspended));
    assert_eq!(change(Some(Pending), Cancelled, 0, 0, false), Some(EventKind::Cancelled));
    assert_eq!(change(Some(Waiting), Cancelled, 0, 0, false), Some(EventKind::Cancelled));
    assert_eq!(change(Some(Waiting), Pending, 0, 0, false), Some(EventKind::Released));
    assert_eq!(change(Some(Dead), Pending, 3, 0, false), Some(EventKind::Enqueued));
    assert_eq!(change(Some(Completed), Pending, 1, 0, false), Some(EventKind::Enqueued));
    assert_eq!(change(Some(Failed), Pending, 2, 2, false), Some(EventKind::Retried));
}

#[test]
fn every_status_reached_from_another_is_named() {
    for from in JobStatus::ALL {
        for to in JobStatus::ALL {
            if from != to {
                assert!(change(Some(from), to, 1, 1, false).is_some(), "{from:?} -> {to:?}");
            }
        }
    }
}

#[test]
fn kinds_round_trip_through_their_names() {
    for k in EventKind::BUILT_IN {
        assert_eq!(EventKind::built_in(k.as_str()), Some(k));
        let json = serde_json::to_string(&k).unwrap();
        assert_eq!(json, format!("\"{}\"", k.as_str()));
    }
    assert_eq!(EventKind::built_in("custom"), None);
    assert_eq!(EventKind::built_in("nope"), None);
}

#[test]
fn custom_names_are_checked() {
    assert!(validate_event_name("invoice.sent").is_ok());
    for bad in ["", "completed", "custom", "a\nb"] {
        let e = validate_event_name(bad).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{bad:?}");
    }
    let long = "x".repeat(MAX_EVENT_NAME_BYTES + 1);
    assert!(validate_event_name(&long).is_err());
    assert!(validate_kind_names(&["completed".into(), "custom".into(), "mine".into()]).is_ok());
    assert!(validate_kind_names(&["".into()]).is_err());
}

#[test]
fn a_kinds_filter_passes_kinds_and_custom_names() {
    let ev = |kind: EventKind, name: &str| QueueEvent {
        id: "1".into(),
        kind,
        name: name.into(),
        job_id: None,
        queue: None,
        task: None,
        attempt: None,
        at_ms: 0,
        data: serde_json::Value::Null,
    };
    let done = ev(EventKind::Completed, "completed");
    let mine = ev(EventKind::Custom, "mine");
    assert!(kind_matches(&[], &done));
    assert!(kind_matches(&["completed".into()], &done));
    assert!(!kind_matches(&["failed".into()], &done));
    assert!(kind_matches(&["custom".into()], &mine));
    assert!(kind_matches(&["mine".into()], &mine));
    assert!(!kind_matches(&["custom".into()], &done));
}
