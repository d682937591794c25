//! JSON shapes of jobs and dead letters as the CLI prints them.
//!
//! The engine's records carry payloads and results as bytes; printed as a JSON array of
//! numbers they are unreadable. These views show UTF-8 bytes as text and anything else as
//! base64 (in a `*_base64` field), keep every timestamp in Unix ms and add nothing else.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use flexiq::{DeadJob, Job, JobStatus};
use serde::Serialize;

/// Bytes as text when they are UTF-8, else as base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Bytes {
    /// UTF-8 text.
    Text(String),
    /// Anything else, base64 (standard alphabet, padded).
    Base64 {
        /// The bytes in base64.
        base64: String,
    },
}

impl Bytes {
    /// Wraps `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(s) => Bytes::Text(s.to_string()),
            Err(_) => Bytes::Base64 { base64: STANDARD.encode(bytes) },
        }
    }

    /// A one-line rendering for tables.
    pub fn display(&self) -> String {
        match self {
            Bytes::Text(s) => s.clone(),
            Bytes::Base64 { base64 } => format!("base64:{base64}"),
        }
    }
}

/// A job as printed.
#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    /// Job id.
    pub id: String,
    /// Namespace.
    pub namespace: String,
    /// Queue.
    pub queue: String,
    /// Task name.
    pub task: String,
    /// Status.
    pub status: JobStatus,
    /// Priority (higher first).
    pub priority: i32,
    /// Attempts started.
    pub attempt: u32,
    /// Retries allowed after the first attempt.
    pub max_retries: u32,
    /// Times its lease lapsed and it was recovered (past its queue's budget it fails `STALLED`).
    pub stall_count: u32,
    /// Enqueued (Unix ms).
    pub created_at: i64,
    /// Earliest start (Unix ms); negative for a LIFO job (minus the time it was placed).
    pub run_at: i64,
    /// Start of the current or last attempt (Unix ms).
    pub started_at: Option<i64>,
    /// Terminal since (Unix ms).
    pub finished_at: Option<i64>,
    /// Worker holding or last holding it.
    pub worker_id: Option<String>,
    /// Last error.
    pub last_error: Option<String>,
    /// Payload.
    pub payload: Bytes,
    /// Result of a completed job.
    pub result: Option<Bytes>,
    /// Deduplication key.
    pub unique_key: Option<String>,
    /// Metadata (JSON object text).
    pub metadata: Option<String>,
    /// Progress 0-100.
    pub progress: Option<f64>,
    /// Jobs it waits for.
    pub depends_on: Vec<String>,
}

impl From<&Job> for JobView {
    fn from(j: &Job) -> Self {
        JobView {
            id: j.id.to_string(),
            namespace: j.namespace.clone(),
            queue: j.queue.clone(),
            task: j.task.clone(),
            status: j.status,
            priority: j.priority,
            attempt: j.attempt,
            max_retries: j.max_retries,
            stall_count: j.stall_count,
            created_at: j.created_at,
            run_at: j.run_at,
            started_at: j.started_at,
            finished_at: j.finished_at,
            worker_id: j.worker_id.clone(),
            last_error: j.last_error.clone(),
            payload: Bytes::of(&j.payload),
            result: j.result.as_deref().map(Bytes::of),
            unique_key: j.unique_key.clone(),
            metadata: j.metadata.clone(),
            progress: j.progress,
            depends_on: j.depends_on.iter().map(|d| d.to_string()).collect(),
        }
    }
}

/// A dead letter as printed.
#[derive(Debug, Clone, Serialize)]
pub struct DeadView {
    /// The entry's id (what `dlq retry` / `dlq delete` take).
    pub id: String,
    /// The job that died.
    pub original_job_id: String,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task_name: String,
    /// Its last error.
    pub error: Option<String>,
    /// Attempts made.
    pub retry_count: u32,
    /// When it died (Unix ms).
    pub failed_at: i64,
    /// Its metadata.
    pub metadata: Option<String>,
    /// Its payload.
    pub payload: Bytes,
}

impl From<&DeadJob> for DeadView {
    fn from(d: &DeadJob) -> Self {
        DeadView {
            id: d.id.clone(),
            original_job_id: d.original_job_id.clone(),
            queue: d.queue.clone(),
            task_name: d.task_name.clone(),
            error: d.error.clone(),
            retry_count: d.retry_count,
            failed_at: d.failed_at,
            metadata: d.metadata.clone(),
            payload: Bytes::of(&d.payload),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_text_or_base64() {
        assert_eq!(serde_json::to_value(Bytes::of(b"hi")).unwrap(), serde_json::json!("hi"));
        assert_eq!(
            serde_json::to_value(Bytes::of(&[0xff, 0x00])).unwrap(),
            serde_json::json!({"base64": "/wA="})
        );
        assert_eq!(Bytes::of(&[0xff]).display(), "base64:/w==");
    }
}
