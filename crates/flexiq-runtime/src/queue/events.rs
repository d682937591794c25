//! The events stream of a namespace: every state change the store committed, in order, from
//! any process, plus custom events.
//!
//! [`Queue::events`] is the reader most code wants: a [`Stream`] that blocks on the store
//! between batches (an in-process wake and `data_version` on SQLite, NOTIFY on PostgreSQL,
//! `XREAD BLOCK` on Redis) and remembers the last id it yielded, so a reader that saves
//! [`QueueEvent::id`] and resumes after it loses nothing and repeats nothing. The kinds filter
//! is applied here, after the read, so the saved id always moves past what was skipped.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use flexiq_core::events::{
    kind_matches, validate_kind_names, QueueEvent, MAX_EVENTS_BLOCK_MS, MAX_EVENTS_PER_READ,
};
use flexiq_core::store::{PublishEventRequest, ReadEventsRequest, TrimEventsRequest};
use futures::Stream;

use super::{parse_id, Queue};
use crate::error::{Error, Result};

/// Events in order, as they commit.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<QueueEvent>> + Send>>;

/// Where [`Queue::events`] starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum EventsFrom {
    /// Only events committed after the stream opened.
    #[default]
    Now,
    /// From the oldest event the store still keeps.
    Start,
    /// After this event id (one read earlier, perhaps by another process).
    After(String),
}

/// How [`Queue::events`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventsOptions {
    /// Where to start.
    pub from: EventsFrom,
    /// Kind names (and custom event names) to yield; empty yields every event.
    pub kinds: Vec<String>,
    /// Longest one blocking read waits before the stream reads again (default 5 s).
    pub block: Duration,
    /// Events fetched per read (default 256).
    pub batch: u32,
}

impl Default for EventsOptions {
    fn default() -> Self {
        EventsOptions { from: EventsFrom::Now, kinds: Vec::new(), block: Duration::from_secs(5), batch: 256 }
    }
}

/// A signed count given by a caller, checked to lie in `1..=max`.
fn count(what: &str, n: i64, max: u32) -> Result<u32> {
    if !(1..=i64::from(max)).contains(&n) {
        return Err(Error::invalid(format!("{what} {n} must be between 1 and {max}")));
    }
    Ok(n as u32)
}

fn non_negative(what: &str, n: i64) -> Result<u64> {
    u64::try_from(n).map_err(|_| Error::invalid(format!("{what} {n} must not be negative")))
}

impl Queue {
    /// Appends a custom event named `name` (not a built-in kind's name) carrying `data`,
    /// optionally about a job and a queue; returns its id. `Conflict` when events are switched
    /// off for the namespace.
    pub async fn publish_event(
        &self,
        name: &str,
        data: serde_json::Value,
        job_id: Option<&str>,
        queue: Option<&str>,
    ) -> Result<String> {
        let job_id = job_id.map(parse_id).transpose()?;
        let req = PublishEventRequest {
            name: name.to_string(),
            data,
            job_id,
            queue: queue.map(str::to_string),
            now: self.now_ms(),
        };
        req.validate()?;
        Ok(self.store.publish_event(req).await?)
    }

    /// Up to `limit` events after `after` (`None`: from the oldest kept), waiting up to
    /// `block_ms` when there are none yet. An id that is not one of this store's is
    /// `InvalidArgument`.
    pub async fn read_events(
        &self,
        after: Option<&str>,
        block_ms: i64,
        limit: i64,
    ) -> Result<Vec<QueueEvent>> {
        let req = ReadEventsRequest {
            after: after.map(str::to_string),
            block_ms: non_negative("block_ms", block_ms)?,
            limit: count("limit", limit, MAX_EVENTS_PER_READ)?,
        };
        req.validate()?;
        Ok(self.store.read_events(req).await?)
    }

    /// The newest event's id, or `None` for an empty stream.
    pub async fn last_event_id(&self) -> Result<Option<String>> {
        Ok(self.store.last_event_id().await?)
    }

    /// Keeps the newest `max_len` events (and, with `max_age_ms`, none older than that);
    /// returns how many were dropped. The elected cleaner does this every round
    /// ([`crate::services::EventTrimConfig`]).
    pub async fn trim_events(&self, max_len: i64, max_age_ms: Option<i64>) -> Result<u64> {
        let req = TrimEventsRequest {
            max_len: non_negative("max_len", max_len)?,
            max_age_ms: max_age_ms.map(|a| non_negative("max_age_ms", a)).transpose()?,
            now: self.now_ms(),
        };
        let removed = self.store.trim_events(req).await?;
        if removed > 0 {
            tracing::debug!(removed, max_len, "trimmed events");
        }
        Ok(removed)
    }

    /// Switches writing events on or off for the namespace (on by default; off saves the
    /// write on every state change, and readers see nothing new).
    pub async fn set_events_enabled(&self, enabled: bool) -> Result<()> {
        self.store.set_events_enabled(enabled).await?;
        tracing::info!(enabled, "events stream switched");
        Ok(())
    }

    /// Whether the namespace writes events.
    pub async fn events_enabled(&self) -> Result<bool> {
        Ok(self.store.events_enabled().await?)
    }

    /// The events stream from `opts.from`, filtered to `opts.kinds` (empty: every event). It never ends by itself:
    /// between batches it blocks on the store, so an idle stream costs one waiting read.
    /// Bad options (an unknown kind name is allowed: it names custom events; an empty name,
    /// a zero batch or block) are `InvalidArgument` here, before anything is read.
    pub async fn events(&self, opts: EventsOptions) -> Result<EventStream> {
        validate_kind_names(&opts.kinds)?;
        let batch = count("batch", i64::from(opts.batch), MAX_EVENTS_PER_READ)?;
        if opts.block.is_zero() {
            return Err(Error::invalid("events block must be positive"));
        }
        let block_ms = u64::try_from(opts.block.as_millis()).unwrap_or(u64::MAX);
        if block_ms > MAX_EVENTS_BLOCK_MS {
            return Err(Error::invalid(format!("events block {block_ms} ms is over {MAX_EVENTS_BLOCK_MS}")));
        }
        let after = match opts.from {
            EventsFrom::Now => self.last_event_id().await?,
            EventsFrom::Start => None,
            EventsFrom::After(id) => {
                // Checked now, so a bad id fails the call rather than the first item.
                let probe = ReadEventsRequest { after: Some(id.clone()), block_ms: 0, limit: 1 };
                probe.validate()?;
                self.store.read_events(probe).await?;
                Some(id)
            }
        };
        let state =
            Reader { queue: self.clone(), after, kinds: opts.kinds, block_ms, batch, buf: VecDeque::new() };
        Ok(Box::pin(futures::stream::try_unfold(state, |mut r| async move {
            loop {
                if let Some(ev) = r.buf.pop_front() {
                    return Ok(Some((ev, r)));
                }
                let req = ReadEventsRequest { after: r.after.clone(), block_ms: r.block_ms, limit: r.batch };
                let got = r.queue.store.read_events(req).await?;
                if let Some(last) = got.last() {
                    r.after = Some(last.id.clone());
                }
                r.buf.extend(got.into_iter().filter(|e| kind_matches(&r.kinds, e)));
            }
        })))
    }
}

struct Reader {
    queue: Queue,
    after: Option<String>,
    kinds: Vec<String>,
    block_ms: u64,
    batch: u32,
    buf: VecDeque<QueueEvent>,
}
