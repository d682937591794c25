//! The one state machine.
//!
//! Every store decides what an operation does to a job by calling [`transition`]; stores
//! apply the returned [`Next`] and never invent transitions of their own. It is pure: the
//! caller passes the job's state, the event and `now`, and gets back what to write.

use crate::backoff::Backoff;
use crate::error::Error;
use crate::fence::Fence;
use crate::job::{Job, JobStatus};

/// Error prefix stamped when a lost heartbeat releases a job.
pub const LEASE_HEARTBEAT_LOST: &str = "LEASE_HEARTBEAT_LOST";
/// Error prefix of a job failed for stalling more often than its queue's budget allows.
pub const STALLED: &str = "STALLED";
/// How many claims a job may have been given back (by suspends, defers, requeues and
/// releases: `claim_seq - attempt`) for a release of a claim whose start was never reported to
/// give the attempt back without a stall. Beyond it such a release counts as a stall, so a job
/// that kills its worker before the start is reported cannot cycle for ever.
pub const UNSTARTED_RELEASE_LIMIT: u64 = 8;

/// Error prefix stamped when an attempt outlives the absolute cap.
pub const LEASE_ABSOLUTE_CAP: &str = "LEASE_ABSOLUTE_CAP";

/// The part of a job the state machine reads.
#[derive(Debug, Clone, PartialEq)]
pub struct JobState {
    /// The job id (seeds the backoff jitter and names errors).
    pub id: String,
    /// Current status.
    pub status: JobStatus,
    /// Attempts started so far.
    pub attempt: u32,
    /// Retries allowed.
    pub max_retries: u32,
    /// Start of the current attempt (Unix ms).
    pub started_at: Option<i64>,
    /// Claims so far (never given back).
    pub claim_seq: u64,
    /// Lapsed leases so far.
    pub stall_count: u32,
    /// Backoff policy.
    pub backoff: Backoff,
}

impl JobState {
    /// A job with no history in `status` after `attempt` attempts, for asking the state
    /// machine what an event writes in general (stores that write a common transition for many
    /// jobs in one statement check its shape this way).
    pub fn probe(status: JobStatus, attempt: u32) -> JobState {
        JobState {
            id: "probe".into(),
            status,
            attempt,
            max_retries: 0,
            started_at: None,
            claim_seq: u64::from(attempt),
            stall_count: 0,
            backoff: Backoff::default(),
        }
    }
}

impl From<&Job> for JobState {
    fn from(j: &Job) -> Self {
        JobState {
            id: j.id.to_string(),
            status: j.status,
            attempt: j.attempt,
            max_retries: j.max_retries,
            started_at: j.started_at,
            claim_seq: j.claim_seq,
            stall_count: j.stall_count,
            backoff: j.backoff,
        }
    }
}

/// Something that happens to a job.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A worker claims it.
    Claim,
    /// The attempt succeeded.
    Complete {
        /// The attempt's fence.
        fence: Fence,
    },
    /// The attempt failed.
    Fail {
        /// The attempt's fence.
        fence: Fence,
        /// What went wrong.
        error: String,
        /// Whether the retry budget may be spent (false fails the job for good).
        retryable: bool,
    },
    /// The handler parks the job until `until` (Unix ms); the attempt is given back.
    Suspend {
        /// The attempt's fence.
        fence: Fence,
        /// When it may be claimed again.
        until: i64,
    },
    /// The worker declines the job until `until` (Unix ms); the attempt is given back.
    Defer {
        /// The attempt's fence.
        fence: Fence,
        /// When it may be claimed again.
        until: i64,
        /// Why it was declined.
        reason: String,
    },
    /// No heartbeat within the stale window: the job stalled, or, when no heartbeat ever
    /// reported its start, it was still in the prefetch buffer of a worker that died.
    ///
    /// A release of a claim whose start was never reported gives the attempt back and counts
    /// no stall: the job never ran. Starts are reported on the worker's periodic heartbeat, so
    /// a job that kills its worker before the next beat looks the same; such releases are
    /// therefore bounded by the claims the job has already been given back
    /// ([`UNSTARTED_RELEASE_LIMIT`]): past it, an unreported release is a stall like any other
    /// and the queue's stall budget ends the loop.
    HeartbeatLost {
        /// Stalls the job's queue lets it recover from ([`crate::store::QueueConfig::stall_budget`]).
        max_stalled: u32,
        /// Whether a heartbeat reported that the attempt's handler started.
        started: bool,
    },
    /// The attempt outlived the absolute cap.
    RunawayExpired,
    /// An operator forces a running job back to pending (retry budget preserved).
    Requeue,
    /// An operator cancels a job that has not started.
    Cancel,
    /// The running attempt stopped on a cancel request: the job ends cancelled.
    CancelRunning {
        /// The attempt's fence.
        fence: Fence,
        /// What the handler said when it stopped.
        reason: String,
    },
    /// A dependency ended without completing.
    DependencyFailed {
        /// The dependency's id.
        dependency: String,
    },
    /// A child whose edge has [`crate::flow::EdgePolicy::FailParent`] failed for good: the
    /// parent fails with it.
    ChildFailed {
        /// The child's id.
        child: String,
        /// The child's last error, if it recorded one.
        error: Option<String>,
    },
    /// Every dependency completed (or settled under its edge's policy).
    DependenciesMet,
}

impl Event {
    fn name(&self) -> &'static str {
        match self {
            Event::Claim => "claim",
            Event::Complete { .. } => "complete",
            Event::Fail { .. } => "fail",
            Event::Suspend { .. } => "suspend",
            Event::Defer { .. } => "defer",
            Event::HeartbeatLost { .. } => "release stale lease",
            Event::RunawayExpired => "expire runaway attempt",
            Event::Requeue => "requeue",
            Event::Cancel => "cancel",
            Event::CancelRunning { .. } => "stop on a cancel request",
            Event::DependencyFailed { .. } => "cancel for failed dependency",
            Event::ChildFailed { .. } => "fail for failed child",
            Event::DependenciesMet => "release dependencies",
        }
    }

    fn fence(&self) -> Option<Fence> {
        match self {
            Event::Complete { fence }
            | Event::Fail { fence, .. }
            | Event::Suspend { fence, .. }
            | Event::Defer { fence, .. }
            | Event::CancelRunning { fence, .. } => Some(*fence),
            _ => None,
        }
    }
}

/// What a store must write.
#[derive(Debug, Clone, PartialEq)]
pub struct Next {
    /// New status.
    pub status: JobStatus,
    /// New attempt counter.
    pub attempt: u32,
    /// New `run_at` (Unix ms), when it changes.
    pub run_at: Option<i64>,
    /// New `started_at` (Unix ms), set by a claim.
    pub started_at: Option<i64>,
    /// New claim sequence number, set by a claim (the previous one plus one).
    pub claim_seq: Option<u64>,
    /// `finished_at` (Unix ms), set on reaching a terminal status.
    pub finished_at: Option<i64>,
    /// New `last_error`, when it changes.
    pub last_error: Option<String>,
    /// Append a `job_errors` row with this text for the attempt that just ended.
    pub error_record: Option<String>,
    /// Write a dead-letter row.
    pub dead_letter: bool,
    /// The job failed for good: each job depending on it applies its edge's
    /// [`crate::flow::EdgePolicy`] (plain edges cancel it, transitively).
    pub cancel_dependents: bool,
    /// Re-check the dependents of this job: they may now be runnable.
    pub release_dependents: bool,
    /// Record a metric row: `Some(true)` success, `Some(false)` failure.
    pub metric: Option<bool>,
    /// Clear worker id and heartbeat (the lease ends).
    pub clear_lease: bool,
    /// Clear the cooperative-cancel flag.
    pub clear_cancel_request: bool,
    /// New stall count, set when a lapsed lease is recovered.
    pub stall_count: Option<u32>,
}

impl Next {
    fn to(status: JobStatus, attempt: u32) -> Self {
        Next {
            status,
            attempt,
            run_at: None,
            started_at: None,
            claim_seq: None,
            finished_at: None,
            last_error: None,
            error_record: None,
            dead_letter: false,
            cancel_dependents: false,
            release_dependents: false,
            metric: None,
            clear_lease: false,
            clear_cancel_request: false,
            stall_count: None,
        }
    }

    /// Whether this is the plain completion of attempt `attempt` at `now`: completed, same
    /// attempt, finished now, lease cleared, a success metric, and no other write (no error,
    /// dead letter, cascade or cancel-flag change). Stores write such completions for many jobs
    /// at once; whether a job has dependents to release is theirs to check.
    pub fn is_plain_completion(&self, attempt: u32, now: i64) -> bool {
        self.status == JobStatus::Completed
            && self.attempt == attempt
            && self.finished_at == Some(now)
            && self.clear_lease
            && self.metric == Some(true)
            && self.run_at.is_none()
            && self.started_at.is_none()
            && self.last_error.is_none()
            && self.error_record.is_none()
            && !self.dead_letter
            && !self.cancel_dependents
            && !self.clear_cancel_request
    }
}

/// Why an event was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The fence does not match the running attempt: the write must be dropped.
    Superseded,
    /// The event makes no sense in the job's status.
    Illegal {
        /// The job's status.
        from: JobStatus,
        /// The event's name.
        event: &'static str,
    },
}

impl Refusal {
    /// The refusal as an engine error naming the job.
    pub fn into_error(self, job_id: &str) -> Error {
        match self {
            Refusal::Superseded => Error::Superseded(crate::JobId::from_trusted(job_id)),
            Refusal::Illegal { from, event } => {
                Error::Conflict(format!("job {job_id} is {from}: cannot {event}"))
            }
        }
    }
}

/// Decides what `event` does to a job in `state` at `now` (Unix ms).
pub fn transition(state: &JobState, event: &Event, now: i64) -> Result<Next, Refusal> {
    let illegal = || Refusal::Illegal { from: state.status, event: event.name() };
    if let Some(fence) = event.fence() {
        let current = state.status == JobStatus::Running
            && state.attempt == fence.attempt
            && state.started_at == Some(fence.started_at)
            && state.claim_seq == fence.claim_seq;
        if !current {
            return Err(Refusal::Superseded);
        }
    }
    let given_back = state.attempt.saturating_sub(1);
    match event {
        Event::Claim => {
            if !state.status.is_claimable() {
                return Err(illegal());
            }
            let mut n = Next::to(JobStatus::Running, state.attempt + 1);
            n.started_at = Some(now);
            n.claim_seq = Some(state.claim_seq + 1);
            Ok(n)
        }
        Event::Complete { .. } => {
            let mut n = Next::to(JobStatus::Completed, state.attempt);
            n.finished_at = Some(now);
            n.release_dependents = true;
            n.metric = Some(true);
            n.clear_lease = true;
            Ok(n)
        }
        Event::Fail { error, retryable, .. } => {
            Ok(failed_attempt(state, error.clone(), *retryable, now, true))
        }
        Event::Suspend { until, .. } => {
            let mut n = Next::to(JobStatus::Suspended, given_back);
            n.run_at = Some(*until);
            n.clear_lease = true;
            Ok(n)
        }
        Event::Defer { until, reason, .. } => {
            let mut n = Next::to(JobStatus::Pending, given_back);
            n.run_at = Some(*until);
            n.last_error = Some(format!("deferred: {reason}"));
            n.clear_lease = true;
            Ok(n)
        }
        Event::HeartbeatLost { max_stalled, started } => {
            if state.status != JobStatus::Running {
                return Err(illegal());
            }
            let given_back_claims = state.claim_seq.saturating_sub(u64::from(state.attempt));
            if !*started && given_back_claims < UNSTARTED_RELEASE_LIMIT {
                let msg = format!(
                    "{LEASE_HEARTBEAT_LOST}: the worker holding attempt {} stopped before it reported starting the job; the attempt is given back",
                    state.attempt
                );
                let mut n = Next::to(JobStatus::Pending, given_back);
                n.run_at = Some(now);
                n.last_error = Some(msg.clone());
                n.error_record = Some(msg);
                n.clear_lease = true;
                return Ok(n);
            }
            let stalls = state.stall_count.saturating_add(1);
            let mut n = if stalls > *max_stalled {
                let msg = format!(
                    "{STALLED}: job {} stalled {stalls} times, more than its queue's max_stalled_count of {max_stalled}",
                    state.id
                );
                let mut n = Next::to(JobStatus::Dead, state.attempt);
                n.finished_at = Some(now);
                n.dead_letter = true;
                n.cancel_dependents = true;
                n.metric = Some(false);
                n.last_error = Some(msg.clone());
                n.error_record = Some(msg);
                n
            } else {
                let msg = format!(
                    "{LEASE_HEARTBEAT_LOST}: no heartbeat from the worker holding attempt {} (stall {stalls} of {max_stalled})",
                    state.attempt
                );
                let mut n = Next::to(JobStatus::Pending, given_back);
                n.run_at = Some(now);
                n.last_error = Some(msg.clone());
                n.error_record = Some(msg);
                n
            };
            n.stall_count = Some(stalls);
            n.clear_lease = true;
            Ok(n)
        }
        Event::RunawayExpired => {
            if state.status != JobStatus::Running {
                return Err(illegal());
            }
            let msg =
                format!("{LEASE_ABSOLUTE_CAP}: attempt {} exceeded the absolute lease cap", state.attempt);
            Ok(failed_attempt(state, msg, true, now, true))
        }
        Event::Requeue => {
            if state.status != JobStatus::Running {
                return Err(illegal());
            }
            let mut n = Next::to(JobStatus::Pending, given_back);
            n.run_at = Some(now);
            n.clear_lease = true;
            n.clear_cancel_request = true;
            Ok(n)
        }
        Event::Cancel => {
            if !matches!(state.status, JobStatus::Pending | JobStatus::Waiting | JobStatus::Suspended) {
                return Err(illegal());
            }
            let mut n = Next::to(JobStatus::Cancelled, state.attempt);
            n.finished_at = Some(now);
            n.cancel_dependents = true;
            Ok(n)
        }
        Event::CancelRunning { reason, .. } => {
            let mut n = Next::to(JobStatus::Cancelled, state.attempt);
            let msg = format!("cancelled: {reason}");
            n.finished_at = Some(now);
            n.cancel_dependents = true;
            n.clear_lease = true;
            n.error_record = Some(msg.clone());
            n.last_error = Some(msg);
            Ok(n)
        }
        Event::DependencyFailed { dependency } => {
            if !matches!(state.status, JobStatus::Pending | JobStatus::Waiting | JobStatus::Suspended) {
                return Err(illegal());
            }
            let mut n = Next::to(JobStatus::Cancelled, state.attempt);
            n.finished_at = Some(now);
            n.cancel_dependents = true;
            n.last_error = Some(format!("dependency {dependency} did not complete"));
            Ok(n)
        }
        Event::ChildFailed { child, error } => {
            if !matches!(state.status, JobStatus::Pending | JobStatus::Waiting | JobStatus::Suspended) {
                return Err(illegal());
            }
            let mut n = Next::to(JobStatus::Failed, state.attempt);
            n.finished_at = Some(now);
            n.cancel_dependents = true;
            n.last_error = Some(match error {
                Some(e) => format!("child {child} failed: {e}"),
                None => format!("child {child} failed"),
            });
            Ok(n)
        }
        Event::DependenciesMet => {
            if state.status != JobStatus::Waiting {
                return Err(illegal());
            }
            Ok(Next::to(JobStatus::Pending, state.attempt))
        }
    }
}

fn failed_attempt(state: &JobState, error: String, retryable: bool, now: i64, metric: bool) -> Next {
    let budget_left = state.attempt <= state.max_retries;
    let mut n = if retryable && budget_left {
        let mut n = Next::to(JobStatus::Pending, state.attempt);
        let delay = state.backoff.delay_ms(&state.id, state.attempt);
        n.run_at = Some(now.saturating_add(i64::try_from(delay).unwrap_or(i64::MAX)));
        n
    } else {
        let mut n = Next::to(if retryable { JobStatus::Dead } else { JobStatus::Failed }, state.attempt);
        n.finished_at = Some(now);
        n.dead_letter = retryable;
        n.cancel_dependents = true;
        n
    };
    n.last_error = Some(error.clone());
    n.error_record = Some(error);
    n.metric = metric.then_some(false);
    n.clear_lease = true;
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn running(attempt: u32, max_retries: u32) -> JobState {
        JobState {
            id: "j1".into(),
            status: JobStatus::Running,
            attempt,
            max_retries,
            started_at: Some(100),
            claim_seq: u64::from(attempt),
            stall_count: 0,
            backoff: Backoff { base_ms: 10, max_ms: 100 },
        }
    }

    #[test]
    fn retries_until_the_budget_then_dead_letters() {
        let fence = Fence { attempt: 1, started_at: 100, claim_seq: 1 };
        let n =
            transition(&running(1, 1), &Event::Fail { fence, error: "boom".into(), retryable: true }, 200)
                .unwrap();
        assert_eq!(n.status, JobStatus::Pending);
        assert!(n.run_at.unwrap() >= 200);
        let fence = Fence { attempt: 2, started_at: 100, claim_seq: 2 };
        let n =
            transition(&running(2, 1), &Event::Fail { fence, error: "boom".into(), retryable: true }, 300)
                .unwrap();
        assert_eq!(n.status, JobStatus::Dead);
        assert!(n.dead_letter && n.cancel_dependents);
        assert_eq!(n.error_record.as_deref(), Some("boom"));
    }

    #[test]
    fn only_a_completion_of_the_same_attempt_now_is_plain() {
        let fence = Fence { attempt: 1, started_at: 100, claim_seq: 1 };
        let done = transition(&running(1, 3), &Event::Complete { fence }, 500).unwrap();
        assert!(done.is_plain_completion(1, 500));
        assert!(!done.is_plain_completion(2, 500));
        assert!(!done.is_plain_completion(1, 501));
        let fail = Event::Fail { fence, error: "boom".into(), retryable: true };
        assert!(!transition(&running(1, 3), &fail, 500).unwrap().is_plain_completion(1, 500));
        let mut asked = done.clone();
        asked.clear_cancel_request = true;
        assert!(!asked.is_plain_completion(1, 500));
    }

    #[test]
    fn non_retryable_failure_is_terminal_without_dead_letter() {
        let fence = Fence { attempt: 1, started_at: 100, claim_seq: 1 };
        let n = transition(&running(1, 5), &Event::Fail { fence, error: "bad".into(), retryable: false }, 1)
            .unwrap();
        assert_eq!(n.status, JobStatus::Failed);
        assert!(!n.dead_letter);
    }

    #[test]
    fn stopping_on_a_cancel_request_cancels_without_retry() {
        let fence = Fence { attempt: 1, started_at: 100, claim_seq: 1 };
        let ev = Event::CancelRunning { fence, reason: "asked to stop".into() };
        let n = transition(&running(1, 5), &ev, 7).unwrap();
        assert_eq!(n.status, JobStatus::Cancelled);
        assert_eq!(n.finished_at, Some(7));
        assert!(n.cancel_dependents && n.clear_lease && !n.dead_letter);
        assert_eq!(n.metric, None);
        assert_eq!(n.last_error.as_deref(), Some("cancelled: asked to stop"));
        let stale = Event::CancelRunning {
            fence: Fence { attempt: 2, started_at: 100, claim_seq: 2 },
            reason: String::new(),
        };
        assert_eq!(transition(&running(1, 5), &stale, 7), Err(Refusal::Superseded));
    }

    #[test]
    fn stale_fence_is_superseded() {
        let stale = Fence { attempt: 1, started_at: 100, claim_seq: 1 };
        assert_eq!(
            transition(&running(2, 3), &Event::Complete { fence: stale }, 1),
            Err(Refusal::Superseded)
        );
        let mut done = running(1, 3);
        done.status = JobStatus::Completed;
        assert_eq!(transition(&done, &Event::Complete { fence: stale }, 1), Err(Refusal::Superseded));
    }

    #[test]
    fn a_reclaim_in_the_same_millisecond_supersedes_the_first_fence() {
        let mut s = JobState::probe(JobStatus::Pending, 0);
        s.claim_seq = 0;
        let first = transition(&s, &Event::Claim, 100).unwrap();
        s = JobState {
            status: first.status,
            attempt: first.attempt,
            started_at: first.started_at,
            claim_seq: first.claim_seq.unwrap(),
            ..s
        };
        let old = Fence { attempt: s.attempt, started_at: 100, claim_seq: s.claim_seq };
        let back = transition(&s, &Event::Requeue, 100).unwrap();
        s = JobState { status: back.status, attempt: back.attempt, started_at: None, ..s };
        let again = transition(&s, &Event::Claim, 100).unwrap();
        s = JobState {
            status: again.status,
            attempt: again.attempt,
            started_at: again.started_at,
            claim_seq: again.claim_seq.unwrap(),
            ..s
        };
        assert_eq!((s.attempt, s.started_at), (old.attempt, Some(old.started_at)));
        assert_eq!(transition(&s, &Event::Complete { fence: old }, 100), Err(Refusal::Superseded));
        let new = Fence { claim_seq: s.claim_seq, ..old };
        assert!(transition(&s, &Event::Complete { fence: new }, 100).is_ok());
    }

    #[test]
    fn defer_and_suspend_give_the_attempt_back() {
        let fence = Fence { attempt: 2, started_at: 100, claim_seq: 2 };
        let n = transition(&running(2, 3), &Event::Defer { fence, until: 500, reason: "later".into() }, 1)
            .unwrap();
        assert_eq!((n.status, n.attempt, n.run_at), (JobStatus::Pending, 1, Some(500)));
        let n = transition(&running(2, 3), &Event::Suspend { fence, until: 600 }, 1).unwrap();
        assert_eq!((n.status, n.attempt, n.run_at), (JobStatus::Suspended, 1, Some(600)));
    }

    #[test]
    fn lease_tiers_stamp_their_prefixes() {
        let n =
            transition(&running(1, 3), &Event::HeartbeatLost { max_stalled: 1, started: true }, 50).unwrap();
        assert!(n.last_error.unwrap().starts_with(LEASE_HEARTBEAT_LOST));
        assert_eq!(n.run_at, Some(50));
        let n = transition(&running(4, 3), &Event::RunawayExpired, 50).unwrap();
        assert!(n.last_error.unwrap().starts_with(LEASE_ABSOLUTE_CAP));
        assert_eq!(n.status, JobStatus::Dead);
    }

    #[test]
    fn stalls_give_the_attempt_back_until_the_budget_is_spent() {
        let lost = Event::HeartbeatLost { max_stalled: 2, started: true };
        let mut s = running(3, 3);
        for stall in 1..=2 {
            let n = transition(&s, &lost, 50).unwrap();
            assert_eq!((n.status, n.attempt, n.stall_count), (JobStatus::Pending, 2, Some(stall)));
            assert!(!n.dead_letter && n.metric.is_none() && n.clear_lease);
            s.stall_count = stall;
        }
        let n = transition(&s, &lost, 60).unwrap();
        assert_eq!((n.status, n.stall_count, n.finished_at), (JobStatus::Dead, Some(3), Some(60)));
        assert!(n.dead_letter && n.cancel_dependents);
        let msg = n.last_error.unwrap();
        assert!(msg.starts_with(STALLED) && msg.contains("j1") && msg.contains("of 2"), "{msg}");
        let n =
            transition(&running(1, 3), &Event::HeartbeatLost { max_stalled: 0, started: true }, 1).unwrap();
        assert_eq!(n.status, JobStatus::Dead, "a budget of 0 fails the first stall");
    }

    #[test]
    fn a_release_of_a_never_started_claim_gives_the_attempt_back_without_a_stall() {
        let lost = Event::HeartbeatLost { max_stalled: 0, started: false };
        let mut s = running(2, 3);
        s.stall_count = 5;
        let n = transition(&s, &lost, 70).unwrap();
        assert_eq!((n.status, n.attempt, n.stall_count, n.run_at), (JobStatus::Pending, 1, None, Some(70)));
        assert!(!n.dead_letter && n.metric.is_none() && n.clear_lease);
        assert!(n.last_error.unwrap().starts_with(LEASE_HEARTBEAT_LOST));
    }

    #[test]
    fn unreported_releases_stall_once_the_job_has_given_back_too_many_claims() {
        let lost = Event::HeartbeatLost { max_stalled: 1, started: false };
        let mut s = running(1, 3);
        // Each unreported release keeps the attempt while the claim sequence moves on.
        for released in 0..UNSTARTED_RELEASE_LIMIT {
            s.claim_seq = 1 + released;
            let n = transition(&s, &lost, 80).unwrap();
            assert_eq!((n.attempt, n.stall_count), (0, None), "release {released}");
        }
        s.claim_seq = 1 + UNSTARTED_RELEASE_LIMIT;
        let n = transition(&s, &lost, 80).unwrap();
        assert_eq!((n.status, n.attempt, n.stall_count), (JobStatus::Pending, 0, Some(1)));
        s.stall_count = 1;
        assert_eq!(transition(&s, &lost, 90).unwrap().status, JobStatus::Dead);
    }

    #[test]
    fn cancel_only_before_running() {
        let mut s = running(0, 3);
        assert!(transition(&s, &Event::Cancel, 1).is_err());
        s.status = JobStatus::Pending;
        assert_eq!(transition(&s, &Event::Cancel, 1).unwrap().status, JobStatus::Cancelled);
        assert_eq!(transition(&running(2, 3), &Event::Requeue, 1).unwrap().attempt, 1);
        let err = transition(&s, &Event::Requeue, 1).unwrap_err().into_error("j1");
        assert_eq!(err.code(), "CONFLICT");
    }

    fn any_status() -> impl Strategy<Value = JobStatus> {
        prop::sample::select(JobStatus::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn terminal_jobs_never_move(status in any_status(), attempt in 0u32..10, now in 0i64..1_000_000) {
            prop_assume!(status.is_terminal());
            let s = JobState { id: "x".into(), status, attempt, max_retries: 3, started_at: Some(1), claim_seq: 1, stall_count: 0, backoff: Backoff::default() };
            let fence = Fence { attempt, started_at: 1, claim_seq: 1 };
            for ev in [Event::Claim, Event::Complete { fence }, Event::HeartbeatLost { max_stalled: 1, started: true }, Event::Requeue, Event::Cancel, Event::DependenciesMet] {
                prop_assert!(transition(&s, &ev, now).is_err());
            }
        }

        #[test]
        fn only_the_exact_fence_acks(attempt in 1u32..20, started in 0i64..1_000, seq in 1u64..40, da in 0u32..3, ds in 0i64..3, dq in 0u64..3) {
            let s = JobState { id: "x".into(), status: JobStatus::Running, attempt, max_retries: 3, started_at: Some(started), claim_seq: seq, stall_count: 0, backoff: Backoff::default() };
            let fence = Fence { attempt: attempt + da, started_at: started + ds, claim_seq: seq + dq };
            let r = transition(&s, &Event::Complete { fence }, 5);
            prop_assert_eq!(r.is_ok(), da == 0 && ds == 0 && dq == 0);
        }

        #[test]
        fn a_failure_never_exceeds_the_budget(attempt in 1u32..20, max_retries in 0u32..10) {
            let s = JobState { id: "x".into(), status: JobStatus::Running, attempt, max_retries, started_at: Some(0), claim_seq: 7, stall_count: 0, backoff: Backoff::default() };
            let fence = Fence { attempt, started_at: 0, claim_seq: 7 };
            let n = transition(&s, &Event::Fail { fence, error: "e".into(), retryable: true }, 10).unwrap();
            prop_assert_eq!(n.status == JobStatus::Pending, attempt <= max_retries);
            prop_assert_eq!(n.dead_letter, attempt > max_retries);
        }

        #[test]
        fn claims_count_attempts(status in any_status(), attempt in 0u32..50) {
            let s = JobState { id: "x".into(), status, attempt, max_retries: 3, started_at: None, claim_seq: u64::from(attempt) + 5, stall_count: 0, backoff: Backoff::default() };
            match transition(&s, &Event::Claim, 7) {
                Ok(n) => { prop_assert!(status.is_claimable()); prop_assert_eq!(n.attempt, attempt + 1); prop_assert_eq!(n.started_at, Some(7)); prop_assert_eq!(n.claim_seq, Some(u64::from(attempt) + 6)); }
                Err(_) => prop_assert!(!status.is_claimable()),
            }
        }
    }
}
