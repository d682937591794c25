//! The job record and its statuses.
//!
//! Timestamps are Unix milliseconds; durations are milliseconds. Payloads and results are
//! opaque bytes: the SDKs serialise, the engine never looks inside.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::backoff::Backoff;
use crate::error::{Error, Result};
use crate::fence::Fence;
use crate::id::JobId;

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    /// Waiting to be claimed (its `run_at` may lie in the future: delayed).
    Pending,
    /// Claimed by a worker under a fence.
    Running,
    /// Finished successfully; terminal.
    Completed,
    /// Failed permanently by the handler's own choice (not retryable); terminal.
    Failed,
    /// Retries exhausted and dead-lettered; terminal.
    Dead,
    /// Cancelled before it ran, or because a dependency did not complete; terminal.
    Cancelled,
    /// Parked by its handler until `run_at`; claimable again after it, attempt given back.
    Suspended,
    /// Waiting for the jobs it depends on to complete.
    Waiting,
}

impl JobStatus {
    /// Every status, in a stable order.
    pub const ALL: [JobStatus; 8] = [
        JobStatus::Pending,
        JobStatus::Running,
        JobStatus::Completed,
        JobStatus::Failed,
        JobStatus::Dead,
        JobStatus::Cancelled,
        JobStatus::Suspended,
        JobStatus::Waiting,
    ];

    /// The lower-case name used in storage and SDKs.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Dead => "dead",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Suspended => "suspended",
            JobStatus::Waiting => "waiting",
        }
    }

    /// A small stable integer for compact storage.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The inverse of [`JobStatus::code`].
    pub fn from_code(code: u8) -> Result<Self> {
        JobStatus::ALL
            .get(code as usize)
            .copied()
            .ok_or_else(|| Error::backend(format!("unknown status code {code}")))
    }

    /// Whether nothing will happen to the job any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, JobStatus::Completed | JobStatus::Failed | JobStatus::Dead | JobStatus::Cancelled)
    }

    /// Whether a claim may pick the job up once its `run_at` has come.
    pub fn is_claimable(self) -> bool {
        matches!(self, JobStatus::Pending | JobStatus::Suspended)
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for JobStatus {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        JobStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown status {s:?} (expected one of pending, running, completed, failed, dead, cancelled, suspended, waiting)"
                ))
            })
    }
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The job's id.
    pub id: JobId,
    /// The namespace it lives in.
    pub namespace: String,
    /// Its queue.
    pub queue: String,
    /// The task (handler) name.
    pub task: String,
    /// Opaque payload bytes.
    pub payload: Vec<u8>,
    /// Higher runs first.
    pub priority: i32,
    /// Current status.
    pub status: JobStatus,
    /// Attempts started so far (the running attempt included).
    pub attempt: u32,
    /// Retries allowed after the first attempt.
    pub max_retries: u32,
    /// Retry backoff policy.
    pub backoff: Backoff,
    /// When it was enqueued (Unix ms).
    pub created_at: i64,
    /// When it may run (Unix ms).
    pub run_at: i64,
    /// When the current or last attempt started (Unix ms).
    pub started_at: Option<i64>,
    /// Last heartbeat of the running attempt (Unix ms).
    pub heartbeat_at: Option<i64>,
    /// When it reached a terminal status (Unix ms).
    pub finished_at: Option<i64>,
    /// The worker holding (or that last held) it.
    pub worker_id: Option<String>,
    /// Result bytes of a completed job.
    pub result: Option<Vec<u8>>,
    /// The last error recorded.
    pub last_error: Option<String>,
    /// Deduplication key, unique among live jobs of the namespace.
    pub unique_key: Option<String>,
    /// Metadata, a JSON object as text.
    pub metadata: Option<String>,
    /// Progress as reported by the handler (0-100).
    pub progress: Option<f64>,
    /// Hard timeout of one attempt (ms).
    pub timeout_ms: Option<u64>,
    /// Whether cooperative cancellation was requested.
    pub cancel_requested: bool,
    /// Jobs this one waits for.
    pub depends_on: Vec<JobId>,
    /// Fairness group.
    pub group_key: Option<String>,
    /// Workflow run this job belongs to.
    pub workflow_run_id: Option<String>,
    /// Workflow stage within the run.
    pub workflow_stage_id: Option<String>,
    /// Definition version of the workflow (whose id is the task).
    pub workflow_version: Option<String>,
    /// Claims of this job so far. Unlike `attempt`, never given back by requeue, defer or
    /// suspend: it makes each claim's [`Fence`] unique.
    pub claim_seq: u64,
    /// Times its lease lapsed and it was recovered (see [`crate::store::QueueConfig::stall_budget`]).
    #[serde(default)]
    pub stall_count: u32,
}

impl Job {
    /// The fence of the current attempt, if it is running.
    pub fn fence(&self) -> Option<Fence> {
        match (self.status, self.started_at) {
            (JobStatus::Running, Some(started_at)) => {
                Some(Fence { attempt: self.attempt, started_at, claim_seq: self.claim_seq })
            }
            _ => None,
        }
    }
}

/// A job handed to a worker by a claim, with the fence its acks must carry.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedJob {
    /// The job, now `running`.
    pub job: Job,
    /// The fence of this attempt.
    pub fence: Fence,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_round_trips() {
        for st in JobStatus::ALL {
            assert_eq!(st.as_str().parse::<JobStatus>().unwrap(), st);
            assert_eq!(JobStatus::from_code(st.code()).unwrap(), st);
        }
        assert!("bogus".parse::<JobStatus>().is_err());
        assert!(JobStatus::from_code(99).is_err());
    }
}
