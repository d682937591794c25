//! The events stream's shapes on the addon: the event read back and the options of each call,
//! with their conversions. The calls are in `queue/events.rs`.
//!
//! Durations here are **milliseconds** (their names end in `Ms`), as the runtime's events
//! calls take them. Ranges the runtime would only check at the first read (a block over five
//! minutes) are checked here, so a bad option fails the call that took it.

use std::time::Duration;

use flexiq_core::events::{MAX_EVENTS_BLOCK_MS, MAX_EVENTS_PER_READ};
use flexiq_runtime::{EventsFrom, EventsOptions as RuntimeEventsOptions};
use napi_derive::napi;
use serde_json::Value;

use crate::args;
use crate::error::{invalid, Result};

/// Events one `readEvents` returns when the caller names no limit.
pub(crate) const DEFAULT_READ_LIMIT: i64 = 100;

/// One event of a namespace's stream: a job's state change, a queue paused or resumed, or a
/// custom event. Fields that do not apply are `null`.
#[napi(object, use_nullable = true)]
pub struct QueueEvent {
    /// Opaque and ordered within the namespace: pass it as `after` to resume after this event.
    pub id: String,
    /// What happened; `'custom'` for an event published with `publishEvent`.
    #[napi(
        ts_type = "'enqueued' | 'active' | 'progress' | 'completed' | 'failed' | 'retried' | 'dead' | 'stalled' | 'cancelled' | 'deduplicated' | 'paused' | 'resumed' | 'removed' | 'requeued' | 'suspended' | 'released' | 'custom'"
    )]
    pub kind: String,
    /// The kind's name, or a custom event's own name.
    pub name: String,
    /// The job it is about.
    pub job_id: Option<String>,
    /// The job's queue, or the paused or resumed queue.
    pub queue: Option<String>,
    /// The job's task.
    pub task: Option<String>,
    /// The job's attempt counter after the change.
    pub attempt: Option<u32>,
    /// When it was written (Unix ms).
    pub at_ms: f64,
    /// What the kind carries, JSON-decoded (`completed`: `{ result_size }`, `failed`:
    /// `{ error }`, `active`: `{ worker_id }`, ...), a custom event's data, or `null`.
    #[napi(ts_type = "unknown")]
    pub data: Value,
}

impl From<flexiq_core::events::QueueEvent> for QueueEvent {
    fn from(e: flexiq_core::events::QueueEvent) -> Self {
        QueueEvent {
            id: e.id,
            kind: e.kind.as_str().to_string(),
            name: e.name,
            job_id: e.job_id,
            queue: e.queue,
            task: e.task,
            attempt: e.attempt,
            at_ms: e.at_ms as f64,
            data: e.data,
        }
    }
}

/// What a custom event is about.
#[napi(object)]
pub struct PublishEventOptions {
    /// The job it is about (not checked to exist).
    pub job_id: Option<String>,
    /// The queue it is about.
    pub queue: Option<String>,
}

/// One read of the stream.
#[napi(object)]
pub struct ReadEventsOptions {
    /// Read after this event id (default: from the oldest event kept).
    pub after: Option<String>,
    /// When there is nothing newer, wait up to this many **milliseconds** for an event (0 to
    /// 300,000; default 0: return at once).
    pub block_ms: Option<f64>,
    /// Most events returned (1 to 10,000; default 100).
    pub limit: Option<f64>,
}

impl ReadEventsOptions {
    /// `(after, block_ms, limit)` as the runtime takes them.
    pub(crate) fn resolve(options: Option<Self>) -> Result<(Option<String>, i64, i64)> {
        let o = options.unwrap_or(ReadEventsOptions { after: None, block_ms: None, limit: None });
        let block_ms =
            o.block_ms.map_or(Ok(0), |b| args::int("blockMs", b, 0, MAX_EVENTS_BLOCK_MS as i64))?;
        let limit = args::page("limit", o.limit, DEFAULT_READ_LIMIT)?;
        Ok((o.after, block_ms, limit))
    }
}

/// How `trimEvents` trims besides its length.
#[napi(object)]
pub struct TrimEventsOptions {
    /// Events older than this many **milliseconds** go too.
    pub max_age_ms: Option<f64>,
}

/// Where `events()` starts and what it yields.
#[napi(object)]
pub struct EventsOptions {
    /// Resume after this event id (one read earlier, perhaps by another process): every later
    /// event is yielded once. Exclusive with `fromStart`.
    pub after: Option<String>,
    /// Kind names to yield (`'completed'`, ...), custom event names, or `'custom'` for every
    /// custom event; absent or empty yields every event.
    #[napi(ts_type = "Array<QueueEvent['kind'] | (string & {})>")]
    pub kinds: Option<Vec<String>>,
    /// Start from the oldest event the store keeps (default: only events committed after the
    /// call). Exclusive with `after`.
    pub from_start: Option<bool>,
    /// Longest one waiting read lasts before the stream reads again (**milliseconds**, 1 to
    /// 300,000; default 5,000).
    pub block_ms: Option<f64>,
    /// Events fetched per read (1 to 10,000; default 256).
    pub batch: Option<f64>,
}

impl EventsOptions {
    /// The runtime's options.
    pub(crate) fn resolve(self) -> Result<RuntimeEventsOptions> {
        let from_start = self.from_start.unwrap_or(false);
        if self.after.is_some() && from_start {
            return Err(invalid(
                "after and fromStart are exclusive: resume after an id, or read from the start",
            ));
        }
        let from = match self.after {
            Some(id) => EventsFrom::After(id),
            None if from_start => EventsFrom::Start,
            None => EventsFrom::Now,
        };
        let mut o = RuntimeEventsOptions {
            from,
            kinds: self.kinds.unwrap_or_default(),
            ..RuntimeEventsOptions::default()
        };
        if let Some(b) = self.block_ms {
            o.block = Duration::from_millis(args::int("blockMs", b, 1, MAX_EVENTS_BLOCK_MS as i64)? as u64);
        }
        if let Some(b) = self.batch {
            o.batch = args::int("batch", b, 1, i64::from(MAX_EVENTS_PER_READ))? as u32;
        }
        Ok(o)
    }
}
