//! The dedup records behind [`crate::dedup`], for callers who inspect or clear them.
//!
//! Enqueue reads and writes the records itself ([`crate::dedup::plan_dedup`]); this trait
//! only answers who holds a key and lets an operator drop a key so the next enqueue inserts.

use crate::error::Result;
use crate::id::JobId;

/// Who holds a dedup key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DedupJobIdRequest {
    /// The dedup key.
    pub key: String,
    /// Unix ms (a throttle or debounce window past its expiry holds nothing).
    pub now: i64,
}

impl DedupJobIdRequest {
    /// Checks the key.
    pub fn validate(&self) -> Result<()> {
        crate::dedup::validate_dedup_key(&self.key)
    }
}

/// Reading and deleting dedup records.
#[async_trait::async_trait]
pub trait Deduplication: Send + Sync {
    /// The job holding `key` at `now` ([`crate::dedup::DedupHold::is_live`]); `None` when the
    /// key is free.
    async fn dedup_job_id(&self, req: DedupJobIdRequest) -> Result<Option<JobId>>;

    /// Deletes the record of `key` (live or not), so the next enqueue with it inserts. True
    /// when a record existed. The holding job is untouched.
    async fn delete_dedup_key(&self, key: &str) -> Result<bool>;
}
