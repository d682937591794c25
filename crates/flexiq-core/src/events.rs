//! The events stream: what a state change reports, and the one rule that names it.
//!
//! Every store writes an event in the same transaction or script as the change it reports, so
//! a reader never sees an event for a change that did not commit and never misses one that
//! did. Status changes are named by [`status_event`], a first-match walk of
//! [`STATUS_EVENT_RULES`]: the SQL stores generate their trigger's `CASE` from that table and
//! the Redis scripts receive it as a Lua table, so the three stores cannot name a change
//! differently. The events that are not status changes (`progress`, `deduplicated`,
//! `paused`, `resumed`, `removed`, custom ones) are written by the operation itself.
//!
//! Event ids are opaque strings, ordered within a namespace: a reader resumes after the last
//! id it handled and sees every later event once. Each store documents its own encoding.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::job::JobStatus;

/// Events kept per namespace by the cleaner unless configured otherwise.
pub const DEFAULT_EVENTS_MAX_LEN: u64 = 10_000;
/// Most events one read returns.
pub const MAX_EVENTS_PER_READ: u32 = 10_000;
/// Longest a read blocks (ms): five minutes.
pub const MAX_EVENTS_BLOCK_MS: u64 = 300_000;
/// Longest custom event name (bytes).
pub const MAX_EVENT_NAME_BYTES: usize = 200;
/// Largest custom event data (bytes of JSON).
pub const MAX_EVENT_DATA_BYTES: usize = 64 * 1024;
/// Longest event id a store accepts as a cursor (bytes).
pub const MAX_EVENT_ID_BYTES: usize = 64;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A job was written as new (enqueued, or rewritten as a fresh job by a revival or a
    /// workflow upsert); its data carries `status` and `run_at`.
    Enqueued,
    /// A worker claimed it; data carries `worker_id`.
    Active,
    /// Its handler reported progress; data carries `progress`.
    Progress,
    /// The attempt succeeded; data carries `result_size` (bytes).
    Completed,
    /// It failed for good without a dead letter; data carries `error`.
    Failed,
    /// An attempt failed and another is due; data carries `error` and `run_at`.
    Retried,
    /// Its retries ran out and it was dead-lettered; data carries `error`.
    Dead,
    /// Its lease lapsed and it went back to pending; data carries `error` and `run_at`.
    Stalled,
    /// It was cancelled (by an operator, a cancel request or a failed dependency); data
    /// carries `error` when one was recorded.
    Cancelled,
    /// An enqueue was absorbed by this existing job (deduplication or a unique key); data
    /// carries `key`.
    Deduplicated,
    /// A queue was paused (no job id).
    Paused,
    /// A queue was resumed (no job id).
    Resumed,
    /// A job was removed by an operator.
    Removed,
    /// The running attempt was given back to pending without counting it (deferred or
    /// requeued); data carries `error` (the reason) and `run_at`.
    Requeued,
    /// The handler parked it until `run_at`.
    Suspended,
    /// Its dependencies were met and it became pending.
    Released,
    /// A custom event from `publish_event`; its name is in [`QueueEvent::name`].
    Custom,
}

impl EventKind {
    /// Every built-in kind (not [`EventKind::Custom`]), in a stable order.
    pub const BUILT_IN: [EventKind; 16] = [
        EventKind::Enqueued,
        EventKind::Active,
        EventKind::Progress,
        EventKind::Completed,
        EventKind::Failed,
        EventKind::Retried,
        EventKind::Dead,
        EventKind::Stalled,
        EventKind::Cancelled,
        EventKind::Deduplicated,
        EventKind::Paused,
        EventKind::Resumed,
        EventKind::Removed,
        EventKind::Requeued,
        EventKind::Suspended,
        EventKind::Released,
    ];

    /// The stored and public name (`"completed"`); `"custom"` for custom events.
    pub fn as_str(&self) -> &'static str {
        match self {
            EventKind::Enqueued => "enqueued",
            EventKind::Active => "active",
            EventKind::Progress => "progress",
            EventKind::Completed => "completed",
            EventKind::Failed => "failed",
            EventKind::Retried => "retried",
            EventKind::Dead => "dead",
            EventKind::Stalled => "stalled",
            EventKind::Cancelled => "cancelled",
            EventKind::Deduplicated => "deduplicated",
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::Removed => "removed",
            EventKind::Requeued => "requeued",
            EventKind::Suspended => "suspended",
            EventKind::Released => "released",
            EventKind::Custom => "custom",
        }
    }

    /// The built-in kind with that name, or `None` (a custom event's name).
    pub fn built_in(name: &str) -> Option<EventKind> {
        EventKind::BUILT_IN.iter().find(|k| k.as_str() == name).copied()
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event read from the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueEvent {
    /// Opaque, ordered within the namespace; pass it as `after` to resume.
    pub id: String,
    /// What happened.
    pub kind: EventKind,
    /// The kind's name, or a custom event's own name.
    pub name: String,
    /// The job it is about (`None` for queue events and custom events without one).
    pub job_id: Option<String>,
    /// The job's queue, or the paused / resumed queue.
    pub queue: Option<String>,
    /// The job's task.
    pub task: Option<String>,
    /// The job's attempt counter after the change.
    pub attempt: Option<u32>,
    /// When it was written (Unix ms, the store's clock or the request's `now`).
    pub at_ms: i64,
    /// What the kind carries (see [`EventKind`]), a custom event's data, or `null`.
    pub data: serde_json::Value,
}

/// A condition a [`StatusEventRule`] puts on the change beside its statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeIs {
    /// Any change between the rule's statuses.
    Any,
    /// The job's stall count rose (a lapsed lease was recovered).
    Stalled,
    /// The attempt counter fell (the attempt was given back).
    AttemptGivenBack,
    /// The attempt counter is 0 afterwards (a fresh job).
    Fresh,
}

/// One line of [`STATUS_EVENT_RULES`]: a change from `from` (`None`: any status, or a new
/// row) to `to` that satisfies `when` is reported as `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusEventRule {
    /// Earlier status the rule needs; `None` matches any (and a new row).
    pub from: Option<JobStatus>,
    /// Status after the change.
    pub to: JobStatus,
    /// Further condition.
    pub when: ChangeIs,
    /// The event written.
    pub kind: EventKind,
}

const fn rule(from: Option<JobStatus>, to: JobStatus, when: ChangeIs, kind: EventKind) -> StatusEventRule {
    StatusEventRule { from, to, when, kind }
}

/// How a status change on an existing row is named: the first rule that matches wins. A new
/// row is always [`EventKind::Enqueued`]; a write that leaves the status as it was reports
/// nothing.
pub const STATUS_EVENT_RULES: [StatusEventRule; 13] = [
    rule(None, JobStatus::Running, ChangeIs::Any, EventKind::Active),
    rule(None, JobStatus::Completed, ChangeIs::Any, EventKind::Completed),
    rule(None, JobStatus::Failed, ChangeIs::Any, EventKind::Failed),
    rule(None, JobStatus::Dead, ChangeIs::Any, EventKind::Dead),
    rule(None, JobStatus::Cancelled, ChangeIs::Any, EventKind::Cancelled),
    rule(None, JobStatus::Suspended, ChangeIs::Any, EventKind::Suspended),
    rule(None, JobStatus::Waiting, ChangeIs::Any, EventKind::Enqueued),
    rule(None, JobStatus::Pending, ChangeIs::Stalled, EventKind::Stalled),
    rule(Some(JobStatus::Waiting), JobStatus::Pending, ChangeIs::Any, EventKind::Released),
    rule(Some(JobStatus::Running), JobStatus::Pending, ChangeIs::AttemptGivenBack, EventKind::Requeued),
    rule(None, JobStatus::Pending, ChangeIs::Fresh, EventKind::Enqueued),
    rule(Some(JobStatus::Suspended), JobStatus::Pending, ChangeIs::Any, EventKind::Released),
    rule(None, JobStatus::Pending, ChangeIs::Any, EventKind::Retried),
];

/// One status change, as a store sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusChange {
    /// Status before (`None` for a new row).
    pub from: Option<JobStatus>,
    /// Status after.
    pub to: JobStatus,
    /// Attempt counter before (0 for a new row).
    pub attempt_before: u32,
    /// Attempt counter after.
    pub attempt_after: u32,
    /// Whether the stall count rose.
    pub stalled: bool,
}

/// The event a status change writes, or `None` when the status did not change.
pub fn status_event(c: StatusChange) -> Option<EventKind> {
    let Some(from) = c.from else {
        return Some(EventKind::Enqueued);
    };
    if from == c.to {
        return None;
    }
    STATUS_EVENT_RULES
        .iter()
        .find(|r| {
            r.to == c.to
                && r.from.is_none_or(|f| f == from)
                && match r.when {
                    ChangeIs::Any => true,
                    ChangeIs::Stalled => c.stalled,
                    ChangeIs::AttemptGivenBack => c.attempt_after < c.attempt_before,
                    ChangeIs::Fresh => c.attempt_after == 0,
                }
        })
        .map(|r| r.kind)
}

/// A field of a status event's data, read from the job row as the change left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventField {
    /// `"status"`: the status name after the change.
    Status,
    /// `"run_at"`: when the job may next be claimed (Unix ms).
    RunAt,
    /// `"worker_id"`: the claiming worker, when it named itself.
    WorkerId,
    /// `"result_size"`: bytes of the stored result (0 with none).
    ResultSize,
    /// `"error"`: the job's last error, when it has one.
    Error,
}

impl EventField {
    /// The key in the event's data object.
    pub fn key(self) -> &'static str {
        match self {
            EventField::Status => "status",
            EventField::RunAt => "run_at",
            EventField::WorkerId => "worker_id",
            EventField::ResultSize => "result_size",
            EventField::Error => "error",
        }
    }
}

/// The fields a status event's data object carries, by kind; a field whose value is null is
/// left out (so `{}` for a change that carries none). Kinds that are not status changes carry
/// what their operation writes (see [`EventKind`]).
pub fn status_event_fields(kind: EventKind) -> &'static [EventField] {
    use EventField::*;
    match kind {
        EventKind::Enqueued => &[Status, RunAt],
        EventKind::Active => &[WorkerId],
        EventKind::Completed => &[ResultSize],
        EventKind::Failed | EventKind::Dead | EventKind::Cancelled => &[Error],
        EventKind::Retried | EventKind::Requeued | EventKind::Stalled => &[Error, RunAt],
        EventKind::Suspended => &[RunAt],
        _ => &[],
    }
}

/// Checks a custom event name: 1 to [`MAX_EVENT_NAME_BYTES`] bytes, no control characters,
/// and not a built-in kind's name (so a reader can trust a built-in name).
pub fn validate_event_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::invalid("event name must not be empty"));
    }
    if name.len() > MAX_EVENT_NAME_BYTES {
        return Err(Error::invalid(format!(
            "event name is {} bytes, over {MAX_EVENT_NAME_BYTES}",
            name.len()
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::invalid(format!("event name {name:?} holds a control character")));
    }
    if EventKind::built_in(name).is_some() || name == EventKind::Custom.as_str() {
        return Err(Error::invalid(format!(
            "event name {name:?} is a built-in event kind; custom events need a name of their own"
        )));
    }
    Ok(())
}

/// Checks a kinds filter: each name a built-in kind or a valid custom name.
pub fn validate_kind_names(names: &[String]) -> Result<()> {
    for n in names {
        if EventKind::built_in(n).is_none() && n != EventKind::Custom.as_str() {
            validate_event_name(n).map_err(|e| Error::invalid(format!("kinds: {e}")))?;
        }
    }
    Ok(())
}

/// Whether `ev` passes a kinds filter: empty passes everything; `"custom"` passes every custom
/// event; any other name passes the kind or the custom event of that name.
pub fn kind_matches(names: &[String], ev: &QueueEvent) -> bool {
    names.is_empty()
        || names
            .iter()
            .any(|n| n == &ev.name || (ev.kind == EventKind::Custom && n == EventKind::Custom.as_str()))
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
