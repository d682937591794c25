//! Fairness groups of workflow jobs: which group a payload belongs to.
//!
//! A workflow view may name a dotted path into the JSON payload (`tenant.id`); the value found
//! there is the job's group key, stored with the job so that a replaced or spilled payload keeps
//! its group and claims can cap running jobs per group without reading payloads.

use crate::error::{Error, Result};

/// The longest group key kept (longer values are cut at a character boundary).
pub const MAX_GROUP_KEY_BYTES: usize = 255;

/// A parsed dotted path (`tenant.id`): non-empty segments separated by single dots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FairnessPath {
    text: String,
    segments: Vec<String>,
}

impl FairnessPath {
    /// Parses `path`; `InvalidArgument` naming `fairness_group_by` when it is empty, has an
    /// empty segment (`a..b`, `.a`, `a.`), or holds control characters.
    pub fn parse(path: &str) -> Result<FairnessPath> {
        let bad = |why: &str| Error::invalid(format!("fairness_group_by {path:?} {why}"));
        if path.is_empty() {
            return Err(bad("must not be empty"));
        }
        if path.len() > MAX_GROUP_KEY_BYTES {
            return Err(bad("is too long"));
        }
        if path.chars().any(char::is_control) {
            return Err(bad("contains control characters"));
        }
        let segments: Vec<String> = path.split('.').map(str::to_string).collect();
        if segments.iter().any(String::is_empty) {
            return Err(bad("has an empty segment"));
        }
        Ok(FairnessPath { text: path.to_string(), segments })
    }

    /// The path as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The group key of a JSON payload: the string, number or boolean at the path (numbers and
    /// booleans as their JSON text). `None` — the default group — when the payload is not JSON,
    /// lacks the path, or holds null, an object or an array there.
    pub fn group_of(&self, payload: &[u8]) -> Option<String> {
        let value: serde_json::Value = serde_json::from_slice(payload).ok()?;
        let mut at = &value;
        for seg in &self.segments {
            at = match at {
                serde_json::Value::Object(m) => m.get(seg)?,
                serde_json::Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        let key = match at {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Bool(b) => b.to_string(),
            _ => return None,
        };
        Some(truncate(key))
    }
}

fn truncate(mut s: String) -> String {
    if s.len() > MAX_GROUP_KEY_BYTES {
        let mut cut = MAX_GROUP_KEY_BYTES;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_or_name_the_field() {
        assert_eq!(FairnessPath::parse("tenant.id").unwrap().as_str(), "tenant.id");
        for bad in ["", ".a", "a.", "a..b", "a\nb"] {
            let e = FairnessPath::parse(bad).unwrap_err();
            assert_eq!(e.code(), "INVALID_ARGUMENT");
            assert!(e.to_string().contains("fairness_group_by"), "{e}");
        }
    }

    #[test]
    fn groups_come_from_the_payload() {
        let p = FairnessPath::parse("tenant.id").unwrap();
        assert_eq!(p.group_of(br#"{"tenant":{"id":"acme"}}"#).as_deref(), Some("acme"));
        assert_eq!(p.group_of(br#"{"tenant":{"id":42}}"#).as_deref(), Some("42"));
        assert_eq!(p.group_of(br#"{"tenant":{"id":true}}"#).as_deref(), Some("true"));
        assert_eq!(p.group_of(br#"{"tenant":{}}"#), None);
        assert_eq!(p.group_of(br#"{"tenant":{"id":null}}"#), None);
        assert_eq!(p.group_of(br#"{"tenant":{"id":{"x":1}}}"#), None);
        assert_eq!(p.group_of(b"not json"), None);
        let idx = FairnessPath::parse("t.1").unwrap();
        assert_eq!(idx.group_of(br#"{"t":["a","b"]}"#).as_deref(), Some("b"));
        let long = format!(r#"{{"tenant":{{"id":"{}"}}}}"#, "é".repeat(200));
        assert!(p.group_of(long.as_bytes()).unwrap().len() <= MAX_GROUP_KEY_BYTES);
    }
}
