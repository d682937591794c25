//! The events part of the scripts' generated header: core's naming of status changes and the
//! data each kind carries, as Lua tables, so no script decides what a change is called.
//!
//! `EV_RULES` is [`STATUS_EVENT_RULES`] in order (`from` left out for any status, `when` a
//! letter: `'a'` any change, `'s'` the stall count rose, `'g'` the attempt was given back,
//! `'f'` the attempt is 0 afterwards); `lua/events.lua`'s `ev_kind` walks it first match wins,
//! as `flexiq_core::events::status_event` does. `EV_FIELDS` maps each kind that carries status
//! data to the keys of [`status_event_fields`], in order; `ST_NAME` names each status code.

use flexiq_core::events::{status_event_fields, ChangeIs, EventKind, STATUS_EVENT_RULES};
use flexiq_core::JobStatus;

/// The letter `EV_RULES` gives a rule's condition.
pub(crate) fn when_letter(c: ChangeIs) -> char {
    match c {
        ChangeIs::Any => 'a',
        ChangeIs::Stalled => 's',
        ChangeIs::AttemptGivenBack => 'g',
        ChangeIs::Fresh => 'f',
    }
}

/// The header lines `EV_RULES`, `EV_FIELDS` and `ST_NAME`.
pub(crate) fn events_header() -> String {
    let rules: Vec<String> = STATUS_EVENT_RULES
        .iter()
        .map(|r| {
            let from = r.from.map(|f| format!("from = {}, ", f.code())).unwrap_or_default();
            format!("{{ {from}to = {}, when = '{}', kind = '{}' }}", r.to.code(), when_letter(r.when), r.kind)
        })
        .collect();
    let fields: Vec<String> = EventKind::BUILT_IN
        .iter()
        .filter(|k| !status_event_fields(**k).is_empty())
        .map(|k| {
            let keys: Vec<String> =
                status_event_fields(*k).iter().map(|f| format!("'{}'", f.key())).collect();
            format!("{k} = {{ {} }}", keys.join(", "))
        })
        .collect();
    let names: Vec<String> =
        JobStatus::ALL.into_iter().map(|st| format!("[{}] = '{}'", st.code(), st.as_str())).collect();
    format!(
        "local EV_RULES = {{ {} }}\nlocal EV_FIELDS = {{ {} }}\nlocal ST_NAME = {{ {} }}\n",
        rules.join(", "),
        fields.join(", "),
        names.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_are_core_s_in_order() {
        let h = events_header();
        let line = h.lines().find(|l| l.starts_with("local EV_RULES = ")).unwrap();
        assert_eq!(line.matches("kind = ").count(), STATUS_EVENT_RULES.len());
        let mut rest = line;
        for r in STATUS_EVENT_RULES {
            let at = rest.find(&format!("kind = '{}'", r.kind)).unwrap_or_else(|| panic!("{r:?} in order"));
            let entry = &rest[..at];
            let entry = &entry[entry.rfind('{').unwrap()..];
            assert_eq!(entry.contains("from = "), r.from.is_some(), "{r:?}");
            if let Some(f) = r.from {
                assert!(entry.contains(&format!("from = {},", f.code())), "{r:?}");
            }
            assert!(entry.contains(&format!("to = {},", r.to.code())), "{r:?}");
            assert!(entry.contains(&format!("when = '{}'", when_letter(r.when))), "{r:?}");
            rest = &rest[at + 1..];
        }
    }

    #[test]
    fn the_fields_and_names_are_core_s() {
        let h = events_header();
        let fields = h.lines().find(|l| l.starts_with("local EV_FIELDS = ")).unwrap();
        for k in EventKind::BUILT_IN {
            let keys: Vec<String> = status_event_fields(k).iter().map(|f| format!("'{}'", f.key())).collect();
            let entry = format!("{k} = {{ {} }}", keys.join(", "));
            assert_eq!(fields.contains(&entry), !keys.is_empty(), "{k}");
        }
        let names = h.lines().find(|l| l.starts_with("local ST_NAME = ")).unwrap();
        for st in JobStatus::ALL {
            assert!(names.contains(&format!("[{}] = '{}'", st.code(), st.as_str())), "{st}");
        }
    }
}
