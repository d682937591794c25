//! Errors crossing into JavaScript.
//!
//! A napi error carries only a status and a message, so a flexiq error travels as a tagged
//! JSON message (`code`, `message`, the job and queue it names, its cause chain) that the JS
//! layer (`lib/errors.cjs`) turns into a `FlexiqError` with a `code` property. Every error
//! the addon raises goes through [`to_napi`] or [`invalid`].

use std::error::Error as _;

use flexiq_runtime::Error;
use serde_json::{json, Map, Value};

/// Prefix marking a message as an encoded flexiq error (the JS layer looks for it).
pub(crate) const TAG: &str = "\u{1}flexiq:";

/// The addon's result type.
pub(crate) type Result<T> = napi::Result<T>;

/// Encodes a runtime error for the JS layer.
pub(crate) fn to_napi(e: Error) -> napi::Error {
    let mut fields = Map::new();
    fields.insert("code".into(), Value::from(e.code()));
    fields.insert("message".into(), Value::from(e.to_string()));
    match &e {
        Error::JobFailed { job_id, status, error } => {
            fields.insert("jobId".into(), Value::from(job_id.as_str()));
            fields.insert("status".into(), Value::from(status.as_str()));
            fields.insert("jobError".into(), json!(error));
        }
        Error::JobCancelled { job_id, error } => {
            fields.insert("jobId".into(), Value::from(job_id.as_str()));
            fields.insert("status".into(), Value::from("cancelled"));
            fields.insert("jobError".into(), json!(error));
        }
        Error::Core(core) => core_fields(core, &mut fields),
        _ => {}
    }
    let mut causes = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        causes.push(Value::from(s.to_string()));
        source = s.source();
    }
    if !causes.is_empty() {
        fields.insert("causes".into(), Value::Array(causes));
    }
    napi::Error::new(napi::Status::GenericFailure, format!("{TAG}{}", Value::Object(fields)))
}

fn core_fields(core: &flexiq_core::Error, fields: &mut Map<String, Value>) {
    match core {
        flexiq_core::Error::JobNotFound(id) => {
            fields.insert("jobId".into(), Value::from(id.as_str()));
        }
        flexiq_core::Error::Superseded(id) => {
            fields.insert("jobId".into(), Value::from(id.as_str()));
        }
        flexiq_core::Error::QueueFull { queue, pending, max_pending } => {
            fields.insert("queue".into(), Value::from(queue.as_str()));
            fields.insert("pending".into(), Value::from(*pending));
            fields.insert("maxPending".into(), Value::from(*max_pending));
        }
        flexiq_core::Error::ContractTooOld { floor, level } => {
            fields.insert("floor".into(), Value::from(*floor));
            fields.insert("level".into(), Value::from(*level));
        }
        flexiq_core::Error::TaskRevoked { task } => {
            fields.insert("task".into(), Value::from(task.as_str()));
        }
        flexiq_core::Error::Backend { retryable, .. } => {
            fields.insert("retryable".into(), Value::from(*retryable));
        }
        _ => {}
    }
}

/// An `INVALID_ARGUMENT` error about caller input.
pub(crate) fn invalid(msg: impl Into<String>) -> napi::Error {
    to_napi(Error::invalid(msg))
}

/// A `CLOSED` error for a handle used after `close()`.
pub(crate) fn closed(what: &str) -> napi::Error {
    to_napi(Error::Core(flexiq_core::Error::Closed(format!("{what} is closed"))))
}

/// Maps a runtime result into a napi one.
pub(crate) trait IntoNapi<T> {
    /// Encodes the error, if any.
    fn napi(self) -> Result<T>;
}

impl<T> IntoNapi<T> for flexiq_runtime::Result<T> {
    fn napi(self) -> Result<T> {
        self.map_err(to_napi)
    }
}

impl<T> IntoNapi<T> for flexiq_core::Result<T> {
    fn napi(self) -> Result<T> {
        self.map_err(|e| to_napi(Error::Core(e)))
    }
}
