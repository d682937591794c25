//! The values a workflow host exchanges with the [`WorkflowJobs`](super::WorkflowJobs) view:
//! the view's options, a stage to enqueue, dequeue options, and the job record as the workflow
//! contract names its fields.
//!
//! A workflow job is an ordinary flexiq [`Job`]; the record only renames and derives what the
//! contract asks for (`max_attempts` is the retry budget plus the first attempt, `locked_at` the
//! last heartbeat or else the start, `next_poll_at` the job's `run_at`), so nothing is stored
//! twice. Turning a [`WorkflowJobSpec`] into a [`NewJob`] is here too, with every check that
//! only this surface knows (JSON payloads, `max_attempts` of at least 1, a poll time after the
//! epoch), each naming the batch position, run and stage of the offending spec.

use flexiq_core::options::validate_name;
use flexiq_core::store::WorkflowServes;
use flexiq_core::{EnqueueOptions, FairnessPath, Fence, Job, JobId, JobStatus, NewJob};

use crate::error::{Error, Result};

/// The queue workflow jobs live on when the view names none.
pub const DEFAULT_WORKFLOW_QUEUE: &str = "workflow";
/// Attempts a stage gets when its spec names none.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// How [`Queue::workflow_jobs`](crate::Queue::workflow_jobs) sets up a view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkflowOptions {
    /// The queue the view enqueues to and, by default, dequeues from (default `"workflow"`).
    pub queue: Option<String>,
    /// A dotted path into the JSON payload (`tenant.id`) whose value is the job's fairness
    /// group. A payload without it (or with null, an object or an array there) is in the
    /// default group.
    pub fairness_group_by: Option<String>,
    /// Most running jobs per fairness group across every worker and process (at least 1);
    /// `None` turns fairness off and a dequeue takes the best job by priority, then poll
    /// time. Without `fairness_group_by` every job is in the default group, so the cap caps
    /// the whole queue.
    pub fairness_cap: Option<u32>,
    /// The worker id stamped on claims. A view configured with one keeps it through
    /// [`WorkflowJobs::adopt_worker_id`](super::WorkflowJobs::adopt_worker_id); without one the
    /// view makes up `host-pid-suffix` until a host offers its own.
    pub worker_id: Option<String>,
    /// Claim each host's next job in the store call of its ack, and hold it for the host's
    /// next dequeue (default off). A host loop then waits on one store call per job instead
    /// of two, which matters most where a commit is slow. The held job is `running` under the
    /// host's worker id before the host dequeues it; it is given back (pending again, the
    /// attempt not counted) when the host does not dequeue within a second, dequeues with other
    /// options, or this process cancels or deletes stages of a run, or the queue closes. A
    /// process that dies holding one leaves it to the stale-lease release, like any claim.
    pub claim_ahead: bool,
}

/// One stage to enqueue with
/// [`WorkflowJobs::enqueue_parallel`](super::WorkflowJobs::enqueue_parallel).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkflowJobSpec {
    /// The workflow run.
    pub workflow_run_id: String,
    /// The workflow (the job's task).
    pub workflow_id: String,
    /// The stage within the run; (run, stage) holds at most one job row.
    pub stage_id: String,
    /// The workflow definition version, if the host pins one.
    pub definition_version: Option<String>,
    /// The payload: JSON text (checked).
    pub payload: Vec<u8>,
    /// Higher runs first.
    pub priority: i32,
    /// The earliest claim (Unix ms, not before the epoch); `None` is now.
    pub next_poll_at_ms: Option<i64>,
    /// Attempts allowed, the first included (at least 1; default 3).
    pub max_attempts: Option<u32>,
}

/// What [`WorkflowJobs::dequeue`](super::WorkflowJobs::dequeue) may take.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DequeueOptions {
    /// Only jobs of these (workflow, definition version) pairs (a version of `None` serves
    /// every version); empty serves every workflow.
    pub serves: Vec<WorkflowServes>,
    /// Queues to take from; empty is the view's queue.
    pub queues: Vec<String>,
}

/// A dequeued job and the fence its acks should carry.
#[derive(Debug, Clone, PartialEq)]
pub struct Dequeued {
    /// The job, now running.
    pub job: WorkflowJobRecord,
    /// The fence of this attempt.
    pub fence: Fence,
}

/// A workflow job as the workflow contract names its fields. Timestamps are Unix ms.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowJobRecord {
    /// The job's id.
    pub id: JobId,
    /// Its queue.
    pub queue: String,
    /// The workflow run (empty for a job of the queue that names none).
    pub workflow_run_id: String,
    /// The workflow (the job's task).
    pub workflow_id: String,
    /// The stage (empty for a job of the queue that names none).
    pub stage_id: String,
    /// The definition version.
    pub definition_version: Option<String>,
    /// The fairness group; `None` is the default group.
    pub group_key: Option<String>,
    /// Current status.
    pub status: JobStatus,
    /// Attempts started so far (a deferred or suspended claim is given back).
    pub attempt: u32,
    /// Attempts allowed, the first included.
    pub max_attempts: u32,
    /// The worker holding (or that last held) it.
    pub worker_id: Option<String>,
    /// The lease: the last heartbeat of the running attempt, else its start.
    pub locked_at: Option<i64>,
    /// When the current or last attempt started.
    pub started_at: Option<i64>,
    /// The earliest next claim (the job's `run_at`).
    pub next_poll_at: i64,
    /// The last error recorded.
    pub last_error: Option<String>,
    /// The payload bytes (JSON text).
    pub payload: Vec<u8>,
    /// When it was enqueued.
    pub created_at: i64,
    /// The latest of created, started, heartbeat and finished.
    pub updated_at: i64,
}

impl From<Job> for WorkflowJobRecord {
    fn from(j: Job) -> Self {
        let updated_at =
            [Some(j.created_at), j.started_at, j.heartbeat_at, j.finished_at].into_iter().flatten().max();
        WorkflowJobRecord {
            locked_at: j.heartbeat_at.or(j.started_at),
            updated_at: updated_at.unwrap_or(j.created_at),
            max_attempts: j.max_retries.saturating_add(1),
            id: j.id,
            queue: j.queue,
            workflow_run_id: j.workflow_run_id.unwrap_or_default(),
            workflow_id: j.task,
            stage_id: j.workflow_stage_id.unwrap_or_default(),
            definition_version: j.workflow_version,
            group_key: j.group_key,
            status: j.status,
            attempt: j.attempt,
            worker_id: j.worker_id,
            started_at: j.started_at,
            next_poll_at: j.run_at,
            last_error: j.last_error,
            payload: j.payload,
            created_at: j.created_at,
        }
    }
}

/// Checks a poll time (Unix ms) given for `what` of job or stage `whose`.
pub(crate) fn check_poll_at(what: &str, whose: &str, at_ms: i64) -> Result<i64> {
    if at_ms < 0 {
        return Err(Error::invalid(format!(
            "next_poll_at {at_ms} ms of {what} {whose} is before the Unix epoch"
        )));
    }
    Ok(at_ms)
}

impl WorkflowJobSpec {
    /// The job this spec enqueues on `queue` at `now_ms`, its group read at `path`; `index` is
    /// its place in the batch (for messages).
    pub(crate) fn to_new_job(
        &self,
        index: usize,
        queue: &str,
        path: Option<&FairnessPath>,
        now_ms: i64,
    ) -> Result<NewJob> {
        let (run, stage) = (&self.workflow_run_id, &self.stage_id);
        let at = |e: flexiq_core::Error| {
            Error::invalid(format!(
                "job {index} of enqueue_parallel (run {run:?}, stage {stage:?}): {}",
                bare(&e)
            ))
        };
        validate_name("workflow_run_id", run).map_err(at)?;
        validate_name("stage_id", stage).map_err(at)?;
        validate_name("workflow_id", &self.workflow_id).map_err(at)?;
        if let Some(v) = &self.definition_version {
            validate_name("definition_version", v).map_err(at)?;
        }
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&self.payload) {
            return Err(Error::invalid(format!(
                "payload of stage {stage} of run {run} (job {index} of enqueue_parallel) is not JSON: {e}"
            )));
        }
        let run_at = match self.next_poll_at_ms {
            Some(ms) => check_poll_at("stage", &format!("{stage} of run {run}"), ms)?,
            None => now_ms,
        };
        let attempts = self.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
        if attempts == 0 {
            return Err(Error::invalid(format!(
                "max_attempts of stage {stage} of run {run} must be at least 1"
            )));
        }
        let opts = EnqueueOptions {
            queue: Some(queue.to_string()),
            priority: Some(self.priority),
            run_at: Some(run_at),
            max_retries: Some(attempts - 1),
            group_key: path.and_then(|p| p.group_of(&self.payload)),
            workflow_run_id: Some(run.clone()),
            workflow_stage_id: Some(stage.clone()),
            workflow_version: self.definition_version.clone(),
            ..Default::default()
        };
        NewJob::build(&self.workflow_id, self.payload.clone(), opts, now_ms).map_err(at)
    }
}

/// An engine error's message without its kind prefix, to be wrapped in another message.
fn bare(e: &flexiq_core::Error) -> String {
    match e {
        flexiq_core::Error::InvalidArgument(m) => m.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WorkflowJobSpec {
        WorkflowJobSpec {
            workflow_run_id: "run-1".into(),
            workflow_id: "order".into(),
            stage_id: "charge".into(),
            definition_version: Some("v2".into()),
            payload: br#"{"tenant":{"id":"acme"}}"#.to_vec(),
            priority: 5,
            next_poll_at_ms: Some(2_000),
            max_attempts: Some(4),
        }
    }

    fn invalid(r: Result<NewJob>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        e.to_string()
    }

    #[test]
    fn a_spec_becomes_a_job_of_the_view_queue() {
        let path = FairnessPath::parse("tenant.id").unwrap();
        let j = spec().to_new_job(0, "wf", Some(&path), 1_000).unwrap();
        assert_eq!((j.task.as_str(), j.queue.as_str(), j.priority), ("order", "wf", 5));
        assert_eq!((j.run_at, j.max_retries), (2_000, 3));
        assert_eq!(j.group_key.as_deref(), Some("acme"));
        assert_eq!(j.workflow_run_id.as_deref(), Some("run-1"));
        assert_eq!(j.workflow_stage_id.as_deref(), Some("charge"));
        assert_eq!(j.workflow_version.as_deref(), Some("v2"));
        let now = WorkflowJobSpec { next_poll_at_ms: None, max_attempts: None, ..spec() };
        let j = now.to_new_job(0, "wf", None, 1_000).unwrap();
        assert_eq!((j.run_at, j.max_retries, j.group_key), (1_000, DEFAULT_MAX_ATTEMPTS - 1, None));
        let missing = WorkflowJobSpec { payload: b"{}".to_vec(), ..spec() };
        assert_eq!(missing.to_new_job(0, "wf", Some(&path), 0).unwrap().group_key, None);
    }

    #[test]
    fn bad_specs_name_the_field_and_the_stage() {
        let m = invalid(
            WorkflowJobSpec { workflow_run_id: String::new(), ..spec() }.to_new_job(3, "wf", None, 0),
        );
        assert!(m.contains("workflow_run_id") && m.contains("job 3"), "{m}");
        let m = invalid(WorkflowJobSpec { stage_id: String::new(), ..spec() }.to_new_job(0, "wf", None, 0));
        assert!(m.contains("stage_id") && m.contains("run-1"), "{m}");
        let m =
            invalid(WorkflowJobSpec { workflow_id: String::new(), ..spec() }.to_new_job(0, "wf", None, 0));
        assert!(m.contains("workflow_id") && m.contains("charge"), "{m}");
        let m = invalid(
            WorkflowJobSpec { definition_version: Some(String::new()), ..spec() }
                .to_new_job(0, "wf", None, 0),
        );
        assert!(m.contains("definition_version"), "{m}");
        let m =
            invalid(WorkflowJobSpec { payload: b"not json".to_vec(), ..spec() }.to_new_job(0, "wf", None, 0));
        assert!(m.contains("payload of stage charge of run run-1") && m.contains("not JSON"), "{m}");
        let m = invalid(WorkflowJobSpec { next_poll_at_ms: Some(-1), ..spec() }.to_new_job(0, "wf", None, 0));
        assert!(m.contains("next_poll_at") && m.contains("epoch"), "{m}");
        let m = invalid(WorkflowJobSpec { max_attempts: Some(0), ..spec() }.to_new_job(0, "wf", None, 0));
        assert!(m.contains("max_attempts"), "{m}");
        let m =
            invalid(WorkflowJobSpec { max_attempts: Some(u32::MAX), ..spec() }.to_new_job(0, "wf", None, 0));
        assert!(m.contains("max_retries") && m.contains("job 0"), "{m}");
    }

    #[test]
    fn records_derive_the_contract_fields() {
        let job = spec().to_new_job(0, "wf", None, 1_000).unwrap();
        let mut stored = Job {
            id: job.id.clone(),
            namespace: "default".into(),
            queue: job.queue,
            task: job.task,
            payload: job.payload,
            priority: job.priority,
            status: JobStatus::Running,
            attempt: 1,
            max_retries: job.max_retries,
            backoff: job.backoff,
            created_at: 1_000,
            run_at: 2_000,
            started_at: Some(2_500),
            heartbeat_at: Some(3_000),
            finished_at: None,
            worker_id: Some("host".into()),
            result: None,
            last_error: None,
            unique_key: None,
            metadata: None,
            progress: None,
            timeout_ms: None,
            cancel_requested: false,
            depends_on: Vec::new(),
            group_key: Some("acme".into()),
            workflow_run_id: job.workflow_run_id,
            workflow_stage_id: job.workflow_stage_id,
            workflow_version: job.workflow_version,
            claim_seq: 1,
            stall_count: 0,
        };
        let r = WorkflowJobRecord::from(stored.clone());
        assert_eq!(
            (r.locked_at, r.updated_at, r.max_attempts, r.next_poll_at),
            (Some(3_000), 3_000, 4, 2_000)
        );
        assert_eq!((r.workflow_id.as_str(), r.stage_id.as_str()), ("order", "charge"));
        assert_eq!(r.definition_version.as_deref(), Some("v2"));
        stored.heartbeat_at = None;
        stored.finished_at = Some(9_000);
        stored.workflow_run_id = None;
        let r = WorkflowJobRecord::from(stored);
        assert_eq!((r.locked_at, r.updated_at, r.workflow_run_id.as_str()), (Some(2_500), 9_000, ""));
    }
}
