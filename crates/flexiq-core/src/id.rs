//! Job identifiers: UUIDv7 text, so ids sort by creation time in every store.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A job's id: a UUIDv7 in its canonical hyphenated lower-case text form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(String);

impl JobId {
    /// A fresh time-ordered id.
    pub fn new() -> Self {
        JobId(uuid::Uuid::now_v7().hyphenated().to_string())
    }

    /// Parses caller input; anything but a UUID is `InvalidArgument`.
    pub fn parse(s: &str) -> Result<Self> {
        uuid::Uuid::parse_str(s)
            .map(|u| JobId(u.hyphenated().to_string()))
            .map_err(|_| Error::invalid(format!("job id {s:?} is not a UUID")))
    }

    /// Wraps text already known to be an id (read back from a store).
    pub fn from_trusted(s: impl Into<String>) -> Self {
        JobId(s.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for JobId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for JobId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A fresh UUIDv7 text id for rows other than jobs (dead letters, replays, errors).
pub fn new_row_id() -> String {
    uuid::Uuid::now_v7().hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_time_ordered_and_parse_back() {
        let a = JobId::new();
        let b = JobId::new();
        assert!(a < b);
        assert_eq!(JobId::parse(a.as_str()).unwrap(), a);
        assert!(JobId::parse("nope").is_err());
        assert_eq!(JobId::parse(&a.as_str().to_uppercase()).unwrap(), a);
    }
}
