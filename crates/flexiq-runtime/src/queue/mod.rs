//! [`Queue`]: the public handle on one namespace of one store.
//!
//! A queue is an `Arc<dyn Store>`, a [`Clock`] and the options it was opened with; cloning it is
//! cheap and every clone talks to the same store. Method names follow the Python SDK. Each
//! call turns its arguments into one store request: what only the SDK surface knows (ids,
//! limits given as signed numbers, cursors, durations in seconds) is checked here, and the
//! request's own rules (queue names, setting keys, progress and partial sizes) by its
//! `validate()`, which the store runs first; either way a bad input is refused with
//! `InvalidArgument` and nothing is written. Durations in are seconds where the spec says
//! seconds; timestamps and windows out are Unix / plain milliseconds.

mod admin;
mod clean;
mod control;
mod dead;
mod dedup;
mod events;
mod flows;
mod jobs;
mod listing;
mod reschedule;
mod schedulers;
mod stats;
mod wait;
mod workflow;

use std::sync::Arc;

use flexiq_core::{JobId, Retention, Store};

use crate::clock::{Clock, SystemClock};
use crate::connect::ConnectOptions;
use crate::error::{Error, Result};

pub(crate) use admin::resolve_retention;
pub use events::{EventStream, EventsFrom, EventsOptions};
pub use jobs::EnqueueItem;
pub use wait::PartialStream;
pub use workflow::{
    DequeueOptions, Dequeued, WorkflowJobRecord, WorkflowJobSpec, WorkflowJobs, WorkflowOptions,
    DEFAULT_MAX_ATTEMPTS, DEFAULT_WORKFLOW_QUEUE,
};

/// A handle on one namespace of a store. Cheap to clone.
#[derive(Clone)]
pub struct Queue {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    max_pending: Option<u64>,
    retention: Option<Retention>,
    /// Where the workflow views of this handle combine their claims and acks.
    combiner: Arc<workflow::Combiner>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("backend", &self.store.backend())
            .field("namespace", &self.store.namespace())
            .field("max_pending", &self.max_pending)
            .finish()
    }
}

impl Queue {
    /// Wraps an open store, taking `max_pending` and `retention` from `opts` (the other
    /// fields only matter when opening). The wall clock is used; see [`Queue::with_clock`].
    pub fn from_store(store: Arc<dyn Store>, opts: &ConnectOptions) -> Self {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let combiner = workflow::Combiner::new(store.clone(), clock.clone());
        Queue { store, clock, max_pending: opts.max_pending, retention: opts.retention, combiner }
    }

    /// The same queue reading time from `clock` (tests drive leases and windows with a
    /// [`crate::ManualClock`]).
    pub fn with_clock(&self, clock: Arc<dyn Clock>) -> Self {
        let combiner = workflow::Combiner::new(self.store.clone(), clock.clone());
        Queue { clock, combiner, ..self.clone() }
    }

    /// The store underneath (for services and bindings).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The clock this queue stamps store calls with.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Now, in Unix ms, by this queue's clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// The namespace every call is scoped to.
    pub fn namespace(&self) -> &str {
        self.store.namespace()
    }

    /// The backend's name (`"sqlite"`, `"postgres"`, `"redis"`).
    pub fn backend(&self) -> &'static str {
        self.store.backend()
    }

    /// The admission cap passed into every enqueue.
    pub fn max_pending(&self) -> Option<u64> {
        self.max_pending
    }

    /// The retention windows (seconds) this queue was configured with, if any.
    pub fn configured_retention(&self) -> Option<Retention> {
        self.retention
    }

    /// Releases the store's connections; later calls fail with `Closed`.
    pub async fn close(&self) -> Result<()> {
        self.combiner.give_back_all().await;
        Ok(self.store.close().await?)
    }
}

/// Parses a job id given by a caller.
pub(crate) fn parse_id(id: &str) -> Result<JobId> {
    Ok(JobId::parse(id)?)
}

/// Parses a row id (dead letter) given by a caller: it must be a UUID.
pub(crate) fn parse_row_id(what: &str, id: &str) -> Result<String> {
    uuid::Uuid::parse_str(id)
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| Error::invalid(format!("{what} id {id:?} is not a UUID")))
}

/// Checks a duration in seconds that must be zero or more, returning it in ms.
pub(crate) fn secs_to_ms(what: &str, secs: i64) -> Result<i64> {
    if secs < 0 {
        return Err(Error::invalid(format!("{what} {secs} s must not be negative")));
    }
    secs.checked_mul(1_000).ok_or_else(|| Error::invalid(format!("{what} {secs} s is too large")))
}

/// Checks a duration in seconds that must be positive, returning it in ms.
pub(crate) fn positive_secs_to_ms(what: &str, secs: i64) -> Result<i64> {
    if secs <= 0 {
        return Err(Error::invalid(format!("{what} {secs} s must be positive")));
    }
    secs_to_ms(what, secs)
}
