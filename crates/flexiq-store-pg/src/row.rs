//! Reading stored rows back into model types: column lists and conversions.

use flexiq_core::transition::JobState;
use flexiq_core::{Backoff, Job, JobStatus, Result};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::db::jid;
use crate::error::corrupt;

/// Every column of a job row, in the order [`job`] reads them.
pub(crate) const JOB_COLS: &str = "id, namespace, queue, task, payload, priority, status, attempt, \
    max_retries, backoff_base_ms, backoff_max_ms, created_at, run_at, started_at, heartbeat_at, \
    finished_at, worker_id, result, last_error, unique_key, metadata, progress, timeout_ms, \
    cancel_requested, depends_on, group_key, workflow_run_id, workflow_stage_id, claim_seq, workflow_version, stall_count";

/// [`JOB_COLS`] qualified with a table alias (`j.id, j.namespace, ...`).
pub(crate) fn job_cols(alias: &str) -> String {
    JOB_COLS.split(", ").map(|c| format!("{alias}.{}", c.trim())).collect::<Vec<_>>().join(", ")
}

/// The columns the state machine and side effects need, in the order [`loaded`] reads them.
pub(crate) const STATE_COLS: &str = "id, status, attempt, max_retries, started_at, backoff_base_ms, \
    backoff_max_ms, queue, task, has_dependents, claim_seq, stall_count";

/// How many columns [`STATE_COLS`] selects.
pub(crate) const STATE_COL_COUNT: usize = 12;

/// [`STATE_COLS`] qualified with a table alias.
pub(crate) fn state_cols(alias: &str) -> String {
    STATE_COLS.split(", ").map(|c| format!("{alias}.{}", c.trim())).collect::<Vec<_>>().join(", ")
}

/// A job's state as loaded (and locked) for a transition.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub(crate) id: Uuid,
    pub(crate) state: JobState,
    pub(crate) queue: String,
    pub(crate) task: String,
    pub(crate) has_dependents: bool,
}

/// Decodes a status code.
pub(crate) fn status(code: i16) -> Result<JobStatus> {
    u8::try_from(code).map_err(|_| corrupt(format!("status code {code}"))).and_then(JobStatus::from_code)
}

/// The storage code of a status.
pub(crate) fn code(s: JobStatus) -> i16 {
    i16::from(s.code())
}

fn u32_of(v: i32, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| corrupt(format!("{what} {v}")))
}

fn u64_of(v: i64, what: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| corrupt(format!("{what} {v}")))
}

/// Reads a row selected with [`STATE_COLS`] starting at column `at`.
pub(crate) fn loaded(r: &Row, at: usize) -> Result<Loaded> {
    let id: Uuid = r.get(at);
    Ok(Loaded {
        id,
        state: JobState {
            id: id.hyphenated().to_string(),
            status: status(r.get(at + 1))?,
            attempt: u32_of(r.get(at + 2), "attempt")?,
            max_retries: u32_of(r.get(at + 3), "max_retries")?,
            started_at: r.get(at + 4),
            claim_seq: u64_of(r.get(at + 10), "claim_seq")?,
            stall_count: u32_of(r.get(at + 11), "stall_count")?,
            backoff: Backoff {
                base_ms: u64_of(r.get(at + 5), "backoff base")?,
                max_ms: u64_of(r.get(at + 6), "backoff max")?,
            },
        },
        queue: r.get(at + 7),
        task: r.get(at + 8),
        has_dependents: r.get(at + 9),
    })
}

/// Reads a row selected with [`JOB_COLS`] starting at column 0.
pub(crate) fn job(r: &Row) -> Result<Job> {
    let deps: Vec<Uuid> = r.get(24);
    let timeout: Option<i64> = r.get(22);
    Ok(Job {
        id: jid(r.get(0)),
        namespace: r.get(1),
        queue: r.get(2),
        task: r.get(3),
        payload: r.get(4),
        priority: r.get(5),
        status: status(r.get(6))?,
        attempt: u32_of(r.get(7), "attempt")?,
        max_retries: u32_of(r.get(8), "max_retries")?,
        backoff: Backoff {
            base_ms: u64_of(r.get(9), "backoff base")?,
            max_ms: u64_of(r.get(10), "backoff max")?,
        },
        created_at: r.get(11),
        run_at: r.get(12),
        started_at: r.get(13),
        heartbeat_at: r.get(14),
        finished_at: r.get(15),
        worker_id: r.get(16),
        result: r.get(17),
        last_error: r.get(18),
        unique_key: r.get(19),
        metadata: r.get(20),
        progress: r.get(21),
        timeout_ms: timeout.map(|t| u64_of(t, "timeout")).transpose()?,
        cancel_requested: r.get(23),
        depends_on: deps.into_iter().map(jid).collect(),
        group_key: r.get(25),
        workflow_run_id: r.get(26),
        workflow_stage_id: r.get(27),
        claim_seq: u64_of(r.get(28), "claim_seq")?,
        workflow_version: r.get(29),
        stall_count: u32_of(r.get(30), "stall_count")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_column_count_matches_the_list() {
        assert_eq!(STATE_COLS.split(", ").count(), STATE_COL_COUNT);
    }
}
