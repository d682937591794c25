//! The delivery log: the delivery jobs themselves, read through the ordinary job listing.
//!
//! A delivery is a job on queue [`QUEUE`](super::QUEUE) whose metadata names its hook, event
//! and URL, whose result is the receiver's status and whose `job_errors` hold every failed
//! attempt, so the log needs no table of its own and shares retention, archival and the
//! dead-letter queue with every other job. This is the one reader the dashboard calls.

use flexiq_core::{Job, JobFilter, JobStatus, Page};

use super::config::validate_hook_name;
use super::QUEUE;
use crate::error::Result;
use crate::queue::Queue;

/// Delivery jobs, optionally of one hook and in one status, keyset-paged like
/// [`Queue::list_jobs_filtered_after`] (pass a page's `next_cursor` as `after`). Each job's
/// metadata is `{"event", "event_id", "hook", "job_id", "url"}`; a completed one's result is
/// `{"status": <HTTP status>}`; [`Queue::get_job_errors`] lists its failed attempts.
pub async fn deliveries(
    queue: &Queue,
    hook: Option<&str>,
    status: Option<JobStatus>,
    limit: i64,
    after: Option<&str>,
) -> Result<Page<Job>> {
    if let Some(h) = hook {
        validate_hook_name(h)?;
    }
    let filter = JobFilter {
        queue: Some(QUEUE.to_string()),
        status,
        // Hook names are plain letters, digits and `-_.`, so this cannot match inside another value.
        metadata_contains: hook.map(|h| format!("\"hook\":\"{h}\"")),
        ..Default::default()
    };
    queue.list_jobs_filtered_after(&filter, limit, after).await
}
