//! Fairness paths and payload decoding: `FairnessPath::parse` reads a caller's dotted path
//! (`tenant.id`) and `group_of` walks it through a job's payload, which is any bytes a
//! producer sent. A parsed path keeps its text and re-parses to itself; a group key is the
//! value found there, cut to the key limit at a character boundary.
//!
//! Input: `path \n payload bytes (the rest)`.

use flexiq_core::fairness::MAX_GROUP_KEY_BYTES;
use flexiq_core::FairnessPath;

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let text = f.text();
    let payload = f.rest();

    let path = match FairnessPath::parse(&text) {
        Ok(p) => p,
        Err(e) => {
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{text:?}: {e}");
            assert!(e.to_string().contains("fairness_group_by"), "{e}");
            return;
        }
    };
    assert_eq!(path.as_str(), text);
    assert!(!text.is_empty() && text.len() <= MAX_GROUP_KEY_BYTES, "{text:?}");
    assert!(text.split('.').all(|s| !s.is_empty()) && !text.chars().any(char::is_control), "{text:?}");
    assert_eq!(FairnessPath::parse(path.as_str()).ok(), Some(path.clone()));

    let Some(group) = path.group_of(&payload) else { return };
    assert!(group.len() <= MAX_GROUP_KEY_BYTES, "group of {} bytes", group.len());
    // The key is (a prefix of) the value at the path: an object's member, or an array's
    // element where the segment reads as an index.
    let root: serde_json::Value = serde_json::from_slice(&payload).expect("a payload with a group is JSON");
    let mut at = &root;
    for seg in text.split('.') {
        at = match at {
            serde_json::Value::Object(m) => &m[seg],
            serde_json::Value::Array(a) => &a[seg.parse::<usize>().expect("an index")],
            other => panic!("path {text:?} runs into {other}"),
        };
    }
    let full = match at {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    assert!(full.starts_with(&group), "group {group:?} is not a prefix of {full:?}");
    assert!(group.len() == full.len() || full.len() > MAX_GROUP_KEY_BYTES, "{group:?} cut from {full:?}");
}
