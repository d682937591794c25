//! The events stream's encoding: the event id is the entry's stream id (`<ms>-<seq>`, the
//! server's clock in ms and a sequence within it), and an entry's fields are the ones
//! `lua/events.lua` writes (kind, name, job_id, queue, task, attempt, at_ms, data; '' for none).

use flexiq_core::events::{EventKind, QueueEvent};
use flexiq_core::{Error, Result};
use fred::types::Value;

use crate::error::shape;
use crate::row::text;

/// Checks that `id` is a stream id `<ms>-<seq>`, both parts decimal numbers that fit in 64 bits;
/// returns whether it is the largest id there is (no entry can follow it).
pub(crate) fn check_event_id(id: &str) -> Result<bool> {
    let number = |part: &str| {
        if part.is_empty() || !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse::<u64>().ok()
    };
    match id.split_once('-').map(|(ms, seq)| (number(ms), number(seq))) {
        Some((Some(ms), Some(seq))) => Ok(ms == u64::MAX && seq == u64::MAX),
        _ => Err(Error::invalid(format!("event id {id:?} is not a redis stream id (<ms>-<seq>)"))),
    }
}

/// The entries of an `XRANGE` / `XREVRANGE` reply, oldest first as sent.
pub(crate) fn entries(reply: Value) -> Result<Vec<QueueEvent>> {
    reply.into_array().into_iter().map(entry).collect()
}

/// The entries of an `XREAD` reply on one stream (none when it timed out).
pub(crate) fn read_reply(reply: Value) -> Result<Vec<QueueEvent>> {
    let streams = match reply {
        Value::Null => return Ok(Vec::new()),
        Value::Map(m) => m.inner().into_values().collect::<Vec<_>>(),
        other => other.into_array().into_iter().filter_map(|s| s.into_array().into_iter().nth(1)).collect(),
    };
    let mut out = Vec::new();
    for s in streams {
        out.extend(entries(s)?);
    }
    Ok(out)
}

/// One entry, `[id, [field, value, ...]]`.
fn entry(v: Value) -> Result<QueueEvent> {
    let mut parts = v.into_array().into_iter();
    let id = parts.next().as_ref().and_then(text).ok_or_else(|| shape("events stream entry"))?;
    let flat = parts.next().ok_or_else(|| shape("events stream entry"))?.into_array();
    let (mut kind, mut name, mut job_id, mut queue, mut task, mut attempt, mut at_ms, mut data) =
        Default::default();
    for pair in flat.chunks(2) {
        let (Some(k), Some(v)) = (pair.first().and_then(text), pair.get(1).and_then(text)) else { continue };
        let slot = match k.as_str() {
            "kind" => &mut kind,
            "name" => &mut name,
            "job_id" => &mut job_id,
            "queue" => &mut queue,
            "task" => &mut task,
            "attempt" => &mut attempt,
            "at_ms" => &mut at_ms,
            "data" => &mut data,
            _ => continue,
        };
        *slot = Some(v).filter(|v| !v.is_empty());
    }
    let bad = |what: &str| Error::backend(format!("event {id} has {what}"));
    let kind_name = kind.ok_or_else(|| bad("no kind"))?;
    let kind = match EventKind::built_in(&kind_name) {
        Some(k) => k,
        None if kind_name == EventKind::Custom.as_str() => EventKind::Custom,
        None => return Err(bad(&format!("an unknown kind {kind_name:?}"))),
    };
    let attempt =
        attempt.map(|a| a.parse::<u32>().map_err(|_| bad(&format!("attempt {a:?}")))).transpose()?;
    let at_ms = at_ms.ok_or_else(|| bad("no time"))?;
    let at_ms = at_ms.parse::<i64>().map_err(|_| bad(&format!("time {at_ms:?}")))?;
    let data = match data {
        Some(d) => serde_json::from_str(&d).map_err(|e| bad(&format!("data that is not json: {e}")))?,
        None => serde_json::Value::Null,
    };
    Ok(QueueEvent {
        name: name.unwrap_or_else(|| kind.as_str().to_string()),
        id,
        kind,
        job_id,
        queue,
        task,
        attempt,
        at_ms,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(id: &str, fields: &[(&str, &str)]) -> Value {
        let flat: Vec<Value> = fields.iter().flat_map(|(k, v)| [Value::from(*k), Value::from(*v)]).collect();
        Value::Array(vec![Value::from(id), Value::Array(flat)])
    }

    #[test]
    fn ids_are_checked_for_their_shape() {
        for ok in ["0-0", "1700000000000-3", "18446744073709551615-0"] {
            assert!(!check_event_id(ok).unwrap(), "{ok}");
        }
        assert!(check_event_id("18446744073709551615-18446744073709551615").unwrap());
        for bad in ["", "-", "1", "-1", "1-", "1-2-3", "a-1", "1-+2", "18446744073709551616-0", " 1-2"] {
            let e = check_event_id(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{bad:?}: {e}");
        }
    }

    #[test]
    fn entries_read_back_with_nones_for_empty_fields() {
        let fields = [
            ("kind", "completed"),
            ("name", "completed"),
            ("job_id", "j1"),
            ("queue", "mail"),
            ("task", "send"),
            ("attempt", "2"),
            ("at_ms", "1700000000000"),
            ("data", "{\"result_size\":3}"),
        ];
        let e = entry(raw("5-1", &fields)).unwrap();
        assert_eq!((e.id.as_str(), e.kind, e.name.as_str()), ("5-1", EventKind::Completed, "completed"));
        assert_eq!((e.job_id.as_deref(), e.attempt, e.at_ms), (Some("j1"), Some(2), 1_700_000_000_000));
        assert_eq!(e.data["result_size"], 3);
        let queue_event = [
            ("kind", "paused"),
            ("name", "paused"),
            ("job_id", ""),
            ("queue", "mail"),
            ("attempt", ""),
            ("at_ms", "7"),
            ("data", "{}"),
        ];
        let e = entry(raw("6-0", &queue_event)).unwrap();
        assert_eq!((e.job_id, e.attempt, e.task), (None, None, None));
        let custom = [("kind", "custom"), ("name", "invoice.sent"), ("at_ms", "7"), ("data", "[1]")];
        let e = entry(raw("7-0", &custom)).unwrap();
        assert_eq!((e.kind, e.name.as_str()), (EventKind::Custom, "invoice.sent"));
    }

    #[test]
    fn a_damaged_entry_names_its_id() {
        let e = entry(raw("9-0", &[("kind", "bogus"), ("at_ms", "1")])).unwrap_err();
        assert!(e.to_string().contains("9-0"), "{e}");
        let e = entry(raw("9-1", &[("kind", "active"), ("at_ms", "x")])).unwrap_err();
        assert!(e.to_string().contains("9-1"), "{e}");
    }

    #[test]
    fn a_timed_out_read_is_empty() {
        assert!(read_reply(Value::Null).unwrap().is_empty());
    }
}
