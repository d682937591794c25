//! Moving a job in time or in line after it was enqueued: a new delay, promotion of delayed
//! jobs, a new priority, LIFO.
//!
//! Claims take due jobs by priority (higher first), then `run_at`, then id. A delay is a
//! `run_at` ahead of now and a promotion sets it to now. LIFO is the same order read the
//! other way for one job: a LIFO job gets the `run_at` [`lifo_run_at`] of its enqueue (or
//! re-prioritisation) time, minus that time, which is due at once, sorts ahead of every FIFO
//! job of its priority and behind every LIFO job placed later. So a LIFO job cannot also be
//! delayed; a new delay or a promotion makes it FIFO again. Only a job that has not started
//! can be moved: anything else is `Conflict` naming its status.

use crate::error::{Error, Result};
use crate::id::JobId;
use crate::job::JobStatus;
use crate::options::validate_name;

/// Highest priority accepted (and its negation the lowest), at enqueue and on change.
pub const MAX_PRIORITY: i32 = 1 << 21;

/// The `run_at` a job placed LIFO at `now` carries: minus `now`, so it is due, ahead of every
/// FIFO job, and behind every LIFO job placed later.
pub fn lifo_run_at(now: i64) -> i64 {
    -now.max(1)
}

/// The `run_at` a store writes for a new job enqueued at `now`: a LIFO job is placed at the
/// time of the enqueue call itself (so LIFO order is the order of the calls, whenever the job
/// was built), every other job keeps its own.
pub fn placed_run_at(run_at: i64, now: i64) -> i64 {
    if is_lifo(run_at) {
        lifo_run_at(now)
    } else {
        run_at
    }
}

/// Whether a stored `run_at` marks a LIFO job.
pub fn is_lifo(run_at: i64) -> bool {
    run_at < 0
}

/// Checks a priority against [`MAX_PRIORITY`].
pub fn validate_priority(priority: i32) -> Result<()> {
    if priority.unsigned_abs() > MAX_PRIORITY.unsigned_abs() {
        return Err(Error::invalid(format!(
            "priority {priority} is out of range (-{MAX_PRIORITY} to {MAX_PRIORITY})"
        )));
    }
    Ok(())
}

/// The `Conflict` for a job whose status does not allow the operation.
pub fn wrong_state(job_id: &JobId, status: JobStatus, what: &str, allowed: &str) -> Error {
    Error::Conflict(format!("job {job_id} is {status}: {what} needs a job that is {allowed}"))
}

/// The `run_at` a `change_delay` writes on a job in `status`, or why it cannot.
pub fn plan_change_delay(req: &ChangeDelayRequest, status: JobStatus) -> Result<i64> {
    req.validate()?;
    if status != JobStatus::Pending {
        return Err(wrong_state(&req.job_id, status, "change_delay", "pending"));
    }
    Ok(req.run_at())
}

/// The `run_at` a `promote` writes on a job in `status` due at `run_at`, or why it cannot.
pub fn plan_promote(req: &PromoteRequest, status: JobStatus, run_at: i64) -> Result<i64> {
    if status != JobStatus::Pending {
        return Err(wrong_state(&req.job_id, status, "promote", "pending and delayed"));
    }
    if run_at <= req.now {
        return Err(Error::Conflict(format!("job {} is not delayed: it is already due", req.job_id)));
    }
    Ok(req.now)
}

/// The new `run_at` (when it changes) a `change_priority` writes on a job in `status` due
/// at `run_at`, or why it cannot.
pub fn plan_change_priority(
    req: &ChangePriorityRequest,
    status: JobStatus,
    run_at: i64,
) -> Result<Option<i64>> {
    req.validate()?;
    if !matches!(status, JobStatus::Pending | JobStatus::Waiting | JobStatus::Suspended) {
        return Err(wrong_state(&req.job_id, status, "change_priority", "pending, waiting or suspended"));
    }
    if !req.lifo {
        return Ok(None);
    }
    if status != JobStatus::Pending {
        return Err(wrong_state(&req.job_id, status, "a LIFO placement", "pending and due"));
    }
    if run_at > req.now {
        return Err(Error::Conflict(format!(
            "job {} is delayed until {run_at}: a LIFO placement needs a job that is due",
            req.job_id
        )));
    }
    Ok(Some(lifo_run_at(req.now)))
}

/// Give a pending job a new delay, counted from now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeDelayRequest {
    /// The job (must be `pending`).
    pub job_id: JobId,
    /// New delay (ms, at least 0): the job becomes due at `now + delay_ms`.
    pub delay_ms: i64,
    /// Unix ms.
    pub now: i64,
}

/// Make one delayed job due now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromoteRequest {
    /// The job (must be `pending` with `run_at` ahead of `now`).
    pub job_id: JobId,
    /// Unix ms.
    pub now: i64,
}

/// Make a queue's delayed jobs due now, a batch at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromoteJobsRequest {
    /// The queue.
    pub queue: String,
    /// Most jobs promoted by this call (1 to `MAX_PAGE`), the soonest due first.
    pub count: u32,
    /// Unix ms.
    pub now: i64,
}

/// Give a job that has not started a new priority, optionally placing it LIFO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangePriorityRequest {
    /// The job (`pending`, `waiting` or `suspended`).
    pub job_id: JobId,
    /// The new priority (within [`MAX_PRIORITY`]).
    pub priority: i32,
    /// Place it ahead of the FIFO jobs of its priority (a pending job that is not delayed).
    pub lifo: bool,
    /// Unix ms.
    pub now: i64,
}

impl ChangeDelayRequest {
    /// Checks that the delay is not negative and that `now + delay_ms` fits.
    pub fn validate(&self) -> Result<()> {
        if self.delay_ms < 0 {
            return Err(Error::invalid(format!(
                "delay_ms {} of job {} must be at least 0",
                self.delay_ms, self.job_id
            )));
        }
        if self.now.checked_add(self.delay_ms).is_none() {
            return Err(Error::invalid(format!(
                "delay_ms {} of job {} is too large",
                self.delay_ms, self.job_id
            )));
        }
        Ok(())
    }

    /// When the job becomes due.
    pub fn run_at(&self) -> i64 {
        self.now.saturating_add(self.delay_ms)
    }
}

impl PromoteJobsRequest {
    /// Checks the queue name and the count.
    pub fn validate(&self) -> Result<()> {
        validate_name("queue name", &self.queue)?;
        super::admin::check_count("count", self.count)
    }
}

impl ChangePriorityRequest {
    /// Checks the priority's range.
    pub fn validate(&self) -> Result<()> {
        validate_priority(self.priority)
    }
}

/// Changing when, and in what order, jobs that have not started run.
#[async_trait::async_trait]
pub trait Reschedule: Send + Sync {
    /// Sets a pending job's `run_at` to `now + delay_ms` (a LIFO job becomes FIFO).
    /// `NotFound` for an unknown id, `Conflict` naming the status for a job not pending.
    async fn change_delay(&self, req: ChangeDelayRequest) -> Result<()>;
    /// Makes a delayed pending job due now. `Conflict` when it is not pending, or pending
    /// and already due.
    async fn promote(&self, req: PromoteRequest) -> Result<()>;
    /// Promotes up to `count` delayed pending jobs of the queue, soonest due first; returns
    /// how many. Call again until it returns 0.
    async fn promote_jobs(&self, req: PromoteJobsRequest) -> Result<u64>;
    /// Sets the priority of a pending, waiting or suspended job. With `lifo` the job must be
    /// pending and due (or LIFO already): it is placed ahead of its priority's FIFO jobs.
    /// Without it a LIFO job keeps its place among the LIFO jobs.
    async fn change_priority(&self, req: ChangePriorityRequest) -> Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> JobId {
        JobId::from_trusted("j1".to_string())
    }

    #[test]
    fn lifo_run_at_sorts_later_placements_first_and_ahead_of_fifo() {
        assert!(lifo_run_at(2_000) < lifo_run_at(1_000));
        assert!(lifo_run_at(1_000) < 0 && is_lifo(lifo_run_at(0)));
        assert!(!is_lifo(0));
        assert_eq!(placed_run_at(lifo_run_at(5), 9), lifo_run_at(9));
        assert_eq!(placed_run_at(7, 9), 7);
    }

    #[test]
    fn bad_input_is_named() {
        let neg = ChangeDelayRequest { job_id: id(), delay_ms: -5, now: 0 }.validate().unwrap_err();
        assert!(neg.to_string().contains("-5") && neg.to_string().contains("j1"), "{neg}");
        let huge = ChangeDelayRequest { job_id: id(), delay_ms: i64::MAX, now: 10 }.validate().unwrap_err();
        assert!(huge.to_string().contains("too large"));
        ChangeDelayRequest { job_id: id(), delay_ms: 0, now: 10 }.validate().unwrap();
        let pr = ChangePriorityRequest { job_id: id(), priority: MAX_PRIORITY + 1, lifo: false, now: 0 };
        assert!(pr.validate().unwrap_err().to_string().contains("out of range"));
        let low = ChangePriorityRequest { priority: -MAX_PRIORITY, ..pr.clone() };
        low.validate().unwrap();
        assert!(ChangePriorityRequest { priority: i32::MIN, ..pr }.validate().is_err());
        let pj = PromoteJobsRequest { queue: "q".into(), count: 0, now: 0 };
        assert!(pj.validate().unwrap_err().to_string().contains("count 0"));
        assert!(PromoteJobsRequest { queue: String::new(), count: 1, now: 0 }.validate().is_err());
    }

    #[test]
    fn plans_follow_the_status() {
        let d = ChangeDelayRequest { job_id: id(), delay_ms: 10, now: 5 };
        assert_eq!(plan_change_delay(&d, JobStatus::Pending).unwrap(), 15);
        assert!(plan_change_delay(&d, JobStatus::Waiting).unwrap_err().to_string().contains("waiting"));
        let p = PromoteRequest { job_id: id(), now: 5 };
        assert_eq!(plan_promote(&p, JobStatus::Pending, 9).unwrap(), 5);
        assert!(plan_promote(&p, JobStatus::Pending, 5).unwrap_err().to_string().contains("not delayed"));
        let c = ChangePriorityRequest { job_id: id(), priority: 2, lifo: true, now: 5 };
        assert_eq!(plan_change_priority(&c, JobStatus::Pending, 3).unwrap(), Some(lifo_run_at(5)));
        assert!(plan_change_priority(&c, JobStatus::Pending, 9).unwrap_err().to_string().contains("delayed"));
        assert!(plan_change_priority(&c, JobStatus::Waiting, 3).is_err());
        let fifo = ChangePriorityRequest { lifo: false, ..c };
        assert_eq!(plan_change_priority(&fifo, JobStatus::Waiting, 3).unwrap(), None);
        assert!(plan_change_priority(&fifo, JobStatus::Running, 3)
            .unwrap_err()
            .to_string()
            .contains("running"));
    }

    #[test]
    fn wrong_state_names_job_and_status() {
        let e = wrong_state(&id(), JobStatus::Running, "promote", "pending and delayed");
        assert_eq!(e.kind(), crate::ErrorKind::Conflict);
        assert!(e.to_string().contains("job j1 is running"), "{e}");
    }
}
