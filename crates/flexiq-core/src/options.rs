//! Enqueue options and their validation.
//!
//! Every front door builds an [`EnqueueOptions`], and [`NewJob::build`] is the one place that
//! decides whether it is acceptable, so a bad option is refused identically from Rust, Python,
//! Node and the CLI, before anything is written.

use serde::{Deserialize, Serialize};

use crate::backoff::Backoff;
use crate::dedup::{DedupMode, DedupOptions};
use crate::error::{Error, Result};
use crate::flow::EdgePolicy;
use crate::id::JobId;

/// Largest payload accepted (bytes).
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024 * 1024;
/// Longest queue, task, namespace, unique or group key accepted (bytes).
pub const MAX_NAME_BYTES: usize = 255;
/// Most dependencies one job may declare.
pub const MAX_DEPENDENCIES: usize = 1_000;
/// Most retries one job may be given.
pub const MAX_RETRIES_LIMIT: u32 = 10_000;
/// Queue used when none is named.
pub const DEFAULT_QUEUE: &str = "default";
/// Namespace used when none is named.
pub const DEFAULT_NAMESPACE: &str = "default";
/// Retries given when none are named.
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// What a producer may say about a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnqueueOptions {
    /// Queue name (default `"default"`).
    pub queue: Option<String>,
    /// Higher runs first (default 0).
    pub priority: Option<i32>,
    /// Run no earlier than this many ms from now. Exclusive with `run_at`.
    pub delay_ms: Option<u64>,
    /// Run no earlier than this Unix ms. Exclusive with `delay_ms`.
    pub run_at: Option<i64>,
    /// Retries after the first attempt (default 3).
    pub max_retries: Option<u32>,
    /// Retry backoff (default 1 s doubling, capped at 1 h).
    pub backoff: Option<Backoff>,
    /// Hard timeout of one attempt (ms).
    pub timeout_ms: Option<u64>,
    /// While a live job holds this key in the namespace, enqueue returns that job's id.
    pub unique_key: Option<String>,
    /// JSON object text.
    pub metadata: Option<String>,
    /// Jobs (same namespace) that must complete first.
    pub depends_on: Vec<String>,
    /// Fairness group.
    pub group_key: Option<String>,
    /// Workflow run id.
    pub workflow_run_id: Option<String>,
    /// Workflow stage id.
    pub workflow_stage_id: Option<String>,
    /// Workflow definition version.
    pub workflow_version: Option<String>,
    /// Claim it ahead of the FIFO jobs of its priority, newest LIFO job first. Exclusive with
    /// `delay_ms` and `run_at` (see [`crate::store::Reschedule`]).
    #[serde(default)]
    pub lifo: bool,
    /// Deduplication by key and mode (see [`crate::dedup`]). Exclusive with `unique_key`.
    #[serde(default)]
    pub dedup: Option<DedupOptions>,
}

/// A validated job ready for a store's `enqueue`.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJob {
    /// Pre-assigned id (a store keeps it unless a unique key dedupes the job).
    pub id: JobId,
    /// Queue.
    pub queue: String,
    /// Task name.
    pub task: String,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// Priority.
    pub priority: i32,
    /// Earliest start (Unix ms).
    pub run_at: i64,
    /// Retries allowed.
    pub max_retries: u32,
    /// Backoff.
    pub backoff: Backoff,
    /// Hard timeout of one attempt (ms).
    pub timeout_ms: Option<u64>,
    /// Deduplication key.
    pub unique_key: Option<String>,
    /// Metadata JSON object text.
    pub metadata: Option<String>,
    /// Dependencies.
    pub depends_on: Vec<JobId>,
    /// The failure policy of each dependency edge, in `depends_on` order; empty means every
    /// edge is [`EdgePolicy::CancelDependent`]. Flows set it (see [`crate::flow`]).
    pub dep_policies: Vec<EdgePolicy>,
    /// Deduplication by key and mode.
    pub dedup: Option<DedupOptions>,
    /// Fairness group.
    pub group_key: Option<String>,
    /// Workflow run id.
    pub workflow_run_id: Option<String>,
    /// Workflow stage id.
    pub workflow_stage_id: Option<String>,
    /// Workflow definition version.
    pub workflow_version: Option<String>,
}

impl NewJob {
    /// Validates `opts` for `task` and `payload`, resolving delays against `now_ms`.
    pub fn build(task: &str, payload: Vec<u8>, opts: EnqueueOptions, now_ms: i64) -> Result<Self> {
        validate_name("task name", task)?;
        if payload.len() > MAX_PAYLOAD_BYTES {
            return Err(Error::invalid(format!(
                "payload of task {task} is {} bytes, over the {MAX_PAYLOAD_BYTES} byte limit",
                payload.len()
            )));
        }
        let queue = opts.queue.unwrap_or_else(|| DEFAULT_QUEUE.to_string());
        validate_name("queue name", &queue)?;
        if let Some(p) = opts.priority {
            crate::store::validate_priority(p)?;
        }
        if opts.lifo && (opts.delay_ms.is_some() || opts.run_at.is_some()) {
            return Err(Error::invalid(format!(
                "lifo job of task {task} cannot also have a delay or run_at"
            )));
        }
        let run_at = match (opts.delay_ms, opts.run_at) {
            (Some(_), Some(_)) => return Err(Error::invalid("give delay or run_at, not both")),
            (Some(d), None) => {
                let d = i64::try_from(d).map_err(|_| Error::invalid(format!("delay {d} ms is too large")))?;
                now_ms.checked_add(d).ok_or_else(|| Error::invalid("delay overflows the clock"))?
            }
            (None, Some(at)) => {
                if at < 0 {
                    return Err(Error::invalid(format!("run_at {at} is before the Unix epoch")));
                }
                at
            }
            (None, None) => now_ms,
        };
        let max_retries = opts.max_retries.unwrap_or(DEFAULT_MAX_RETRIES);
        if max_retries > MAX_RETRIES_LIMIT {
            return Err(Error::invalid(format!(
                "max_retries {max_retries} is over the limit of {MAX_RETRIES_LIMIT}"
            )));
        }
        let backoff = opts.backoff.unwrap_or_default();
        backoff.validate()?;
        if opts.timeout_ms == Some(0) {
            return Err(Error::invalid("timeout must be positive"));
        }
        if let Some(k) = &opts.unique_key {
            validate_name("unique key", k)?;
        }
        if let Some(d) = &opts.dedup {
            d.validate()?;
            if opts.unique_key.is_some() {
                return Err(Error::invalid(format!(
                    "dedup {} and a unique key cannot be given together",
                    d.id
                )));
            }
            if d.mode == DedupMode::KeepLastIfActive && !opts.depends_on.is_empty() {
                return Err(Error::invalid(format!(
                    "dedup {}: keep_last_if_active jobs cannot also have dependencies",
                    d.id
                )));
            }
        }
        if let Some(g) = &opts.group_key {
            validate_name("group key", g)?;
        }
        for (what, v) in [
            ("workflow_run_id", &opts.workflow_run_id),
            ("stage_id", &opts.workflow_stage_id),
            ("definition_version", &opts.workflow_version),
        ] {
            if let Some(v) = v {
                validate_name(what, v)?;
            }
        }
        if let Some(m) = &opts.metadata {
            validate_metadata(m)?;
        }
        if opts.depends_on.len() > MAX_DEPENDENCIES {
            return Err(Error::invalid(format!(
                "{} dependencies is over the limit of {MAX_DEPENDENCIES}",
                opts.depends_on.len()
            )));
        }
        let mut depends_on = Vec::with_capacity(opts.depends_on.len());
        for d in &opts.depends_on {
            let id = JobId::parse(d)?;
            if depends_on.contains(&id) {
                return Err(Error::invalid(format!("dependency {id} is listed twice")));
            }
            depends_on.push(id);
        }
        Ok(NewJob {
            id: JobId::at(now_ms),
            queue,
            task: task.to_string(),
            payload,
            priority: opts.priority.unwrap_or(0),
            run_at: if opts.lifo { crate::store::lifo_run_at(now_ms) } else { run_at },
            max_retries,
            backoff,
            timeout_ms: opts.timeout_ms,
            unique_key: opts.unique_key,
            metadata: opts.metadata,
            depends_on,
            dep_policies: Vec::new(),
            dedup: opts.dedup,
            group_key: opts.group_key,
            workflow_run_id: opts.workflow_run_id,
            workflow_stage_id: opts.workflow_stage_id,
            workflow_version: opts.workflow_version,
        })
    }
}

/// Checks a queue, task, namespace or key name: non-empty, at most 255 bytes, no control characters.
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::invalid(format!("{what} must not be empty")));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::invalid(format!(
            "{what} is {} bytes, over the {MAX_NAME_BYTES} byte limit",
            name.len()
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::invalid(format!("{what} {name:?} contains control characters")));
    }
    Ok(())
}

/// Checks that metadata is a JSON object.
pub fn validate_metadata(text: &str) -> Result<()> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err(Error::invalid("metadata must be a JSON object")),
        Err(e) => Err(Error::invalid(format!("metadata is not valid JSON: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply() {
        let j = NewJob::build("t", vec![1], EnqueueOptions::default(), 1_000).unwrap();
        assert_eq!(j.queue, "default");
        assert_eq!(j.run_at, 1_000);
        assert_eq!(j.max_retries, DEFAULT_MAX_RETRIES);
    }

    #[test]
    fn bad_options_are_refused() {
        let bad = |o: EnqueueOptions| NewJob::build("t", vec![], o, 0).unwrap_err().code();
        assert_eq!(
            bad(EnqueueOptions { queue: Some(String::new()), ..Default::default() }),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            bad(EnqueueOptions { delay_ms: Some(1), run_at: Some(1), ..Default::default() }),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            bad(EnqueueOptions { metadata: Some("[1]".into()), ..Default::default() }),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            bad(EnqueueOptions { metadata: Some("{".into()), ..Default::default() }),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            bad(EnqueueOptions { depends_on: vec!["x".into()], ..Default::default() }),
            "INVALID_ARGUMENT"
        );
        assert_eq!(bad(EnqueueOptions { timeout_ms: Some(0), ..Default::default() }), "INVALID_ARGUMENT");
        assert_eq!(
            bad(EnqueueOptions { max_retries: Some(MAX_RETRIES_LIMIT + 1), ..Default::default() }),
            "INVALID_ARGUMENT"
        );
        assert!(NewJob::build("", vec![], EnqueueOptions::default(), 0).is_err());
        assert!(NewJob::build("t", vec![0; MAX_PAYLOAD_BYTES + 1], EnqueueOptions::default(), 0).is_err());
        let id = JobId::new().to_string();
        assert!(NewJob::build(
            "t",
            vec![],
            EnqueueOptions { depends_on: vec![id.clone(), id], ..Default::default() },
            0
        )
        .is_err());
    }
}
