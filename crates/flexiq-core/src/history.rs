//! Records kept beside jobs: dead letters, per-attempt errors, replays, the dependency graph,
//! partial results, logs and the worker registry.

use serde::{Deserialize, Serialize};

use crate::job::JobStatus;

/// A dead-letter entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadJob {
    /// The entry's own id (not the job's).
    pub id: String,
    /// The job that died.
    pub original_job_id: String,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task_name: String,
    /// Its payload, for retry.
    pub payload: Vec<u8>,
    /// The last error.
    pub error: Option<String>,
    /// Attempts made.
    pub retry_count: u32,
    /// When it died (Unix ms).
    pub failed_at: i64,
    /// Its metadata.
    pub metadata: Option<String>,
}

/// One failed attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobError {
    /// The row id.
    pub id: String,
    /// The job.
    pub job_id: String,
    /// Which attempt failed.
    pub attempt: u32,
    /// What went wrong.
    pub error: String,
    /// When (Unix ms).
    pub failed_at: i64,
}

/// A replay of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayEntry {
    /// The row id.
    pub id: String,
    /// The job replayed.
    pub original_job_id: String,
    /// The new job.
    pub replay_job_id: String,
    /// When (Unix ms).
    pub replayed_at: i64,
    /// The original's last error at replay time.
    pub original_error: Option<String>,
    /// The replay's error (filled when the replay itself fails; read at query time).
    pub replay_error: Option<String>,
}

/// A node of a dependency graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DagNode {
    /// The job id.
    pub id: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: JobStatus,
}

/// An edge: `from` is a dependency of `to`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DagEdge {
    /// The dependency.
    pub from: String,
    /// The dependent.
    pub to: String,
}

/// The graph reachable from a job in both directions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobDag {
    /// Jobs in the graph.
    pub nodes: Vec<DagNode>,
    /// Dependency -> dependent edges.
    pub edges: Vec<DagEdge>,
}

/// A partial result published by a running job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// Sequence number, from 1, gapless per job.
    pub seq: u64,
    /// The bytes published.
    pub data: Vec<u8>,
    /// When (Unix ms).
    pub published_at: i64,
}

/// A log line written by a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    /// The job.
    pub job_id: String,
    /// Level (`info`, `warn`, ...).
    pub level: String,
    /// The text.
    pub message: String,
    /// When (Unix ms).
    pub logged_at: i64,
}

/// A worker process as it registered itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerInfo {
    /// The worker id.
    pub id: String,
    /// Queues it serves (empty: all).
    pub queues: Vec<String>,
    /// Its concurrency.
    pub concurrency: u32,
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// When it started (Unix ms).
    pub started_at: i64,
    /// Its last heartbeat (Unix ms).
    pub heartbeat_at: i64,
    /// The jobs it is running now (those running with its id stamped), filled by
    /// `list_workers`; a heartbeat's own value is ignored.
    #[serde(default)]
    pub current_jobs: Vec<String>,
}

/// A leader-election lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The lease's name.
    pub name: String,
    /// Who holds it.
    pub holder: String,
    /// When it lapses (Unix ms).
    pub expires_at: i64,
}
