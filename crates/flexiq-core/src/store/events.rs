//! The events stream in the store: publish custom events, read the stream (blocking when it is
//! empty), trim it, and switch it off for a namespace.
//!
//! Status changes are written by the store beside the change itself, named by
//! [`crate::events::status_event`]; this trait covers what a caller does with the stream.

use crate::error::{Error, Result};
use crate::events::{
    validate_event_name, QueueEvent, MAX_EVENTS_BLOCK_MS, MAX_EVENTS_PER_READ, MAX_EVENT_DATA_BYTES,
    MAX_EVENT_ID_BYTES,
};
use crate::id::JobId;
use crate::options::validate_name;

/// A custom event.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishEventRequest {
    /// Its name (not a built-in kind's).
    pub name: String,
    /// Any JSON, at most [`MAX_EVENT_DATA_BYTES`] encoded.
    pub data: serde_json::Value,
    /// The job it is about, if any (not checked to exist: the job may be gone already).
    pub job_id: Option<JobId>,
    /// The queue it is about, if any.
    pub queue: Option<String>,
    /// Unix ms.
    pub now: i64,
}

impl PublishEventRequest {
    /// Checks the name, the queue and the size of the data; returns the data encoded.
    pub fn validate(&self) -> Result<String> {
        validate_event_name(&self.name)?;
        if let Some(q) = &self.queue {
            validate_name("queue", q)?;
        }
        let data = serde_json::to_string(&self.data)
            .map_err(|e| Error::invalid(format!("data of event {}: {e}", self.name)))?;
        if data.len() > MAX_EVENT_DATA_BYTES {
            return Err(Error::invalid(format!(
                "data of event {} is {} bytes of JSON, over {MAX_EVENT_DATA_BYTES}",
                self.name,
                data.len()
            )));
        }
        Ok(data)
    }
}

/// One read of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadEventsRequest {
    /// Return events after this id; `None` reads from the oldest one kept.
    pub after: Option<String>,
    /// How long to wait (ms) when there is nothing newer; 0 returns at once.
    pub block_ms: u64,
    /// Most events returned (1 to [`MAX_EVENTS_PER_READ`]).
    pub limit: u32,
}

impl ReadEventsRequest {
    /// Checks the limit, the wait and the shape of the id (each store checks its encoding).
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_EVENTS_PER_READ).contains(&self.limit) {
            return Err(Error::invalid(format!(
                "limit {} must be between 1 and {MAX_EVENTS_PER_READ}",
                self.limit
            )));
        }
        if self.block_ms > MAX_EVENTS_BLOCK_MS {
            return Err(Error::invalid(format!("block_ms {} is over {MAX_EVENTS_BLOCK_MS}", self.block_ms)));
        }
        if let Some(a) = &self.after {
            if a.is_empty() || a.len() > MAX_EVENT_ID_BYTES || !a.is_ascii() {
                return Err(Error::invalid(format!("event id {a:?} is not an event id")));
            }
        }
        Ok(())
    }
}

/// Trims the stream of this namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimEventsRequest {
    /// Newest events kept.
    pub max_len: u64,
    /// Events older than this (ms before `now`) go too, when set.
    pub max_age_ms: Option<u64>,
    /// Unix ms.
    pub now: i64,
}

/// The events stream.
#[async_trait::async_trait]
pub trait Events: Send + Sync {
    /// Appends a custom event; returns its id.
    async fn publish_event(&self, req: PublishEventRequest) -> Result<String>;

    /// Events after `req.after` in order, at most `req.limit`; when there are none, waits up to
    /// `req.block_ms` for one to commit (from any process) and returns what arrived (possibly
    /// nothing). An id that is not one of this store's is `InvalidArgument`; an id older than
    /// what trimming kept reads from the oldest event kept.
    async fn read_events(&self, req: ReadEventsRequest) -> Result<Vec<QueueEvent>>;

    /// The newest event's id, or `None` when the stream is empty: where a reader that wants
    /// only new events starts.
    async fn last_event_id(&self) -> Result<Option<String>>;

    /// Drops all but the newest `max_len` events (and those older than `max_age_ms`); returns
    /// how many went.
    async fn trim_events(&self, req: TrimEventsRequest) -> Result<u64>;

    /// Switches writing events for this namespace on or off (on by default). Off, state changes
    /// write no events and `publish_event` is refused with `Conflict`; reading still works.
    async fn set_events_enabled(&self, enabled: bool) -> Result<()>;

    /// Whether this namespace writes events.
    async fn events_enabled(&self) -> Result<bool>;
}
