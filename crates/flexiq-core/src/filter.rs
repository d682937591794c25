//! Listing filters.
//!
//! One [`JobFilter`] serves the plain listing (status, queue, task) and the filtered one
//! (metadata / error substrings and a created-at range); its fingerprint binds keyset cursors to
//! the filter they were made for.

use serde::{Deserialize, Serialize};

use crate::cursor::fingerprint;
use crate::error::{Error, Result};
use crate::job::{Job, JobStatus};

/// Largest page any listing returns.
pub const MAX_PAGE: u32 = 10_000;

/// What a job listing matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobFilter {
    /// Only this status.
    pub status: Option<JobStatus>,
    /// Only this queue.
    pub queue: Option<String>,
    /// Only this task.
    pub task: Option<String>,
    /// Metadata text contains this substring.
    pub metadata_contains: Option<String>,
    /// Last error contains this substring.
    pub error_contains: Option<String>,
    /// Created at or after (Unix ms).
    pub created_after: Option<i64>,
    /// Created before (Unix ms).
    pub created_before: Option<i64>,
}

impl JobFilter {
    /// Whether the filter uses any of the wider (substring / range) fields.
    pub fn is_extended(&self) -> bool {
        self.metadata_contains.is_some()
            || self.error_contains.is_some()
            || self.created_after.is_some()
            || self.created_before.is_some()
    }

    /// A fingerprint of every field, for cursor binding.
    pub fn fingerprint(&self) -> u64 {
        let status = self.status.map(|s| s.as_str()).unwrap_or("");
        let after = self.created_after.map(|v| v.to_string()).unwrap_or_default();
        let before = self.created_before.map(|v| v.to_string()).unwrap_or_default();
        fingerprint(&[
            status,
            self.queue.as_deref().unwrap_or("\u{0}"),
            self.task.as_deref().unwrap_or("\u{0}"),
            self.metadata_contains.as_deref().unwrap_or("\u{0}"),
            self.error_contains.as_deref().unwrap_or("\u{0}"),
            &after,
            &before,
        ])
    }

    /// Whether `job` matches (used by stores that filter in memory, and by tests).
    pub fn matches(&self, job: &Job) -> bool {
        self.status.is_none_or(|s| job.status == s)
            && self.queue.as_deref().is_none_or(|q| job.queue == q)
            && self.task.as_deref().is_none_or(|t| job.task == t)
            && self
                .metadata_contains
                .as_deref()
                .is_none_or(|m| job.metadata.as_deref().is_some_and(|x| x.contains(m)))
            && self
                .error_contains
                .as_deref()
                .is_none_or(|e| job.last_error.as_deref().is_some_and(|x| x.contains(e)))
            && self.created_after.is_none_or(|a| job.created_at >= a)
            && self.created_before.is_none_or(|b| job.created_at < b)
    }
}

/// Checks a page size: 1 to [`MAX_PAGE`].
pub fn validate_limit(limit: i64) -> Result<u32> {
    if !(1..=i64::from(MAX_PAGE)).contains(&limit) {
        return Err(Error::invalid(format!("limit {limit} must be between 1 and {MAX_PAGE}")));
    }
    Ok(limit as u32)
}

/// Checks an offset: zero or more.
pub fn validate_offset(offset: i64) -> Result<u64> {
    u64::try_from(offset).map_err(|_| Error::invalid(format!("offset {offset} must not be negative")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_differ_per_field() {
        let a = JobFilter { queue: Some("a".into()), ..Default::default() };
        let b = JobFilter { task: Some("a".into()), ..Default::default() };
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.fingerprint(), a.clone().fingerprint());
        assert!(validate_limit(0).is_err());
        assert!(validate_limit(-3).is_err());
        assert!(validate_offset(-1).is_err());
        assert_eq!(validate_limit(10).unwrap(), 10);
    }
}
