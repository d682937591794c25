//! Event names, kind filters and stored events: custom event names and `kinds` filters are
//! caller text, a read's `after` id is caller text, and every store reads events back as a
//! name plus JSON data. A valid custom name never shadows a built-in kind, a filter accepted by
//! `validate_kind_names` names only kinds or valid custom names, and an event decoded from JSON
//! survives a re-encode.
//!
//! Input: `name \n kinds filter (comma-separated) \n after id \n event JSON (the rest)`.

use flexiq_core::events::{
    kind_matches, validate_event_name, validate_kind_names, EventKind, MAX_EVENT_ID_BYTES,
    MAX_EVENT_NAME_BYTES,
};
use flexiq_core::store::{PublishEventRequest, ReadEventsRequest};
use flexiq_core::QueueEvent;

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let name = f.text();
    let kinds: Vec<String> = f.text().split(',').filter(|k| !k.is_empty()).map(str::to_string).collect();
    let after = f.opt_text();
    let json = f.rest();

    let built_in = EventKind::built_in(&name);
    if let Some(k) = built_in {
        assert_eq!(k.as_str(), name);
    }
    match validate_event_name(&name) {
        Ok(()) => {
            assert!(built_in.is_none() && name != "custom", "{name:?} shadows a built-in kind");
            assert!(!name.is_empty() && name.len() <= MAX_EVENT_NAME_BYTES, "{name:?}");
            assert!(!name.chars().any(char::is_control), "{name:?}");
        }
        Err(e) => assert_eq!(e.code(), "INVALID_ARGUMENT", "{name:?}: {e}"),
    }
    let publish = PublishEventRequest {
        name: name.clone(),
        data: serde_json::Value::String(name.clone()),
        job_id: None,
        queue: None,
        now: 0,
    };
    assert_eq!(publish.validate().is_ok(), validate_event_name(&name).is_ok());

    let filter_ok = validate_kind_names(&kinds).is_ok();
    let each_ok = kinds
        .iter()
        .all(|k| EventKind::built_in(k).is_some() || k == "custom" || validate_event_name(k).is_ok());
    assert_eq!(filter_ok, each_ok, "{kinds:?}");

    let read = ReadEventsRequest { after: after.clone(), block_ms: 0, limit: 1 };
    let id_ok = after.as_ref().is_none_or(|a| !a.is_empty() && a.len() <= MAX_EVENT_ID_BYTES && a.is_ascii());
    assert_eq!(read.validate().is_ok(), id_ok, "{after:?}");

    let Ok(event) = serde_json::from_slice::<QueueEvent>(&json) else { return };
    let again = serde_json::to_string(&event).expect("an event encodes");
    let back: QueueEvent = serde_json::from_str(&again).expect("a re-encoded event decodes");
    // Data may hold floats, which JSON need not carry bit for bit; everything else must match.
    let strip = |e: &QueueEvent| QueueEvent { data: serde_json::Value::Null, ..e.clone() };
    assert_eq!(strip(&back), strip(&event));
    assert!(kind_matches(&[], &event), "an empty filter passes everything");
    assert!(kind_matches(std::slice::from_ref(&event.name), &event), "a filter naming the event passes it");
    if event.kind == EventKind::Custom {
        assert!(kind_matches(&["custom".to_string()], &event));
    }
    let _ = kind_matches(&kinds, &event);
}
