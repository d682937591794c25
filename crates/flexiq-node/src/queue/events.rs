//! The events stream on `NativeQueue`, as the runtime's `queue/events.rs`: publish a custom
//! event, read, trim, switch the stream off, and `events()`, a [`NativeEventStream`] the JS
//! layer makes an async iterator and the source of `queue.on(kind, listener)`.
//!
//! Waiting reads run on the addon's tokio threads. A pending Promise keeps Node's event loop
//! alive, so every wait also ends when its handle stops: a stream's `close()`, or the queue's
//! `close()`, which cancels `NativeQueue::closing`, the parent of every stream's token. A
//! stream then resolves `null`; a plain `readEvents` rejects with `CLOSED`.
//!
//! A stream remembers the last event it handed out, so after a failed read `resume()` opens
//! it again from there: the listeners' reader does, and loses and repeats nothing.

use std::sync::Arc;

use flexiq_core::events::EventKind;
use flexiq_runtime::{EventStream, EventsFrom};
use futures::{FutureExt, StreamExt};
use napi::bindgen_prelude::block_on;
use napi_derive::napi;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::args;
use crate::error::{closed, invalid, IntoNapi, Result};
use crate::events::{EventsOptions, PublishEventOptions, QueueEvent, ReadEventsOptions, TrimEventsOptions};
use crate::queue::NativeQueue;

/// The name of every event kind, the built-in ones then `'custom'`.
#[allow(unreachable_pub)]
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn event_kinds() -> Vec<&'static str> {
    EventKind::BUILT_IN.iter().chain([&EventKind::Custom]).map(EventKind::as_str).collect()
}

/// Checks a list of kind names as `events({ kinds })` does: each a built-in kind, `'custom'`
/// or a custom event name (1 to 200 bytes, no control characters). `INVALID_ARGUMENT` naming
/// the first bad one.
#[allow(unreachable_pub)]
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn check_event_kinds(kinds: Vec<String>) -> Result<()> {
    flexiq_core::events::validate_kind_names(&kinds).napi()
}

#[napi]
impl NativeQueue {
    /// Appends a custom event named `name` (1 to 200 bytes, not a built-in kind's name)
    /// carrying `data` (JSON text, at most 64 KiB; absent: `null`), optionally about a job and
    /// a queue; resolves to its id. `CONFLICT` while events are switched off.
    #[napi]
    pub async fn publish_event(
        &self,
        name: String,
        data: Option<String>,
        options: Option<PublishEventOptions>,
    ) -> Result<String> {
        let data = match data {
            None => serde_json::Value::Null,
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| invalid(format!("data of event {name} is not JSON: {e}")))?,
        };
        let (job_id, queue) = options.map_or((None, None), |o| (o.job_id, o.queue));
        let q = self.queue()?;
        q.publish_event(&name, data, job_id.as_deref(), queue.as_deref()).await.napi()
    }

    /// Up to `limit` events after `after` (absent: from the oldest kept), in order. With
    /// `blockMs`, waits that long for one when there are none yet, and resolves to what
    /// arrived (possibly nothing); the queue's `close()` ends the wait with `CLOSED`.
    /// `INVALID_ARGUMENT` for an id that is not one of this store's.
    #[napi]
    pub async fn read_events(&self, options: Option<ReadEventsOptions>) -> Result<Vec<QueueEvent>> {
        let (after, block_ms, limit) = ReadEventsOptions::resolve(options)?;
        let q = self.queue()?;
        let read = q.read_events(after.as_deref(), block_ms, limit);
        match self.closing.run_until_cancelled(read).await {
            Some(Ok(events)) => Ok(events.into_iter().map(Into::into).collect()),
            Some(Err(e)) if !self.closing.is_cancelled() => Err(e).napi(),
            _ => Err(closed(&format!("queue on namespace {}", self.namespace))),
        }
    }

    /// The newest event's id, or `null` while the stream is empty.
    #[napi]
    pub async fn last_event_id(&self) -> Result<Option<String>> {
        let q = self.queue()?;
        q.last_event_id().await.napi()
    }

    /// Keeps the newest `maxLen` events (0 keeps none) and, with `maxAgeMs`, none older than
    /// that many milliseconds; resolves to how many were dropped. A worker elected its
    /// namespace's cleaner does this every round (`eventsMaxLen`, `eventsMaxAgeMs`).
    #[napi]
    pub async fn trim_events(&self, max_len: f64, options: Option<TrimEventsOptions>) -> Result<f64> {
        let max_len = args::non_negative("maxLen", max_len)?;
        let max_age_ms =
            options.and_then(|o| o.max_age_ms).map(|a| args::non_negative("maxAgeMs", a)).transpose()?;
        let q = self.queue()?;
        Ok(q.trim_events(max_len, max_age_ms).await.napi()? as f64)
    }

    /// Switches writing events on or off for the namespace (on by default). Off, state
    /// changes write no events and `publishEvent` is refused with `CONFLICT`; reads still work.
    #[napi]
    pub async fn set_events_enabled(&self, enabled: bool) -> Result<()> {
        let q = self.queue()?;
        q.set_events_enabled(enabled).await.napi()
    }

    /// Whether the namespace writes events.
    #[napi]
    pub async fn events_enabled(&self) -> Result<bool> {
        let q = self.queue()?;
        q.events_enabled().await.napi()
    }

    /// The events stream from where `options` say, as a `NativeEventStream`. Synchronous:
    /// it reads where the stream stands now (one point read) so that every event committed
    /// after the call is seen, and checks `after` against the store, so a bad option or id
    /// fails here with `INVALID_ARGUMENT`.
    #[napi]
    pub fn events(&self, options: Option<EventsOptions>) -> Result<NativeEventStream> {
        let mut opts = match options {
            Some(o) => o.resolve()?,
            None => flexiq_runtime::EventsOptions::default(),
        };
        let q = self.queue()?;
        // "Now" is resolved here rather than by the runtime so that the stream knows the id
        // it started after, where `resume` starts when nothing was handed out yet.
        if opts.from == EventsFrom::Now {
            opts.from = match block_on(q.last_event_id()).napi()? {
                Some(id) => EventsFrom::After(id),
                None => EventsFrom::Start,
            };
        }
        let stream = block_on(q.events(opts.clone())).napi()?;
        Ok(NativeEventStream {
            reader: Arc::new(tokio::sync::Mutex::new(Some(Reader { stream, failed: None }))),
            resume_from: Arc::new(Mutex::new(opts.from.clone())),
            queue: q,
            options: opts,
            stop: self.closing.child_token(),
        })
    }
}

/// The open stream and an error met after the events already handed out.
struct Reader {
    stream: EventStream,
    failed: Option<flexiq_runtime::Error>,
}

/// A namespace's events in order, read in batches (the JS layer makes it an async iterator).
/// It never ends by itself: between events it waits on the store.
#[napi]
pub struct NativeEventStream {
    /// `None` once stopped or failed.
    reader: Arc<tokio::sync::Mutex<Option<Reader>>>,
    /// After the last event handed out, else where the stream started.
    resume_from: Arc<Mutex<EventsFrom>>,
    queue: flexiq_runtime::Queue,
    /// What it was opened with (kinds, block and batch are kept by `resume`).
    options: flexiq_runtime::EventsOptions,
    stop: CancellationToken,
}

#[napi]
impl NativeEventStream {
    /// The next events: at least one, and as many more (up to the stream's `batch`) as were
    /// read already. `null` once stopped (`close()`, or the queue's `close()`), and after a
    /// read failed, which rejects once, until `resume()`.
    #[napi]
    pub async fn next(&self) -> Result<Option<Vec<QueueEvent>>> {
        let reader = self.reader.clone();
        let mut slot = reader.lock().await;
        let Some(r) = slot.as_mut() else { return Ok(None) };
        if let Some(e) = r.failed.take() {
            *slot = None;
            return Err(e).napi();
        }
        let first = match self.stop.run_until_cancelled(r.stream.next()).await {
            Some(Some(Ok(ev))) => ev,
            // A read the queue's close broke off is the stop it raced with, not a failure.
            Some(Some(Err(e))) if !self.stop.is_cancelled() => {
                *slot = None;
                return Err(e).napi();
            }
            // Stopped, or the stream ended (it only does after an error it reported).
            _ => {
                *slot = None;
                return Ok(None);
            }
        };
        let mut out = vec![first];
        // What the runtime already holds comes along without another round trip; a failure
        // is kept for the next call, after the events read before it.
        while out.len() < self.options.batch as usize {
            match r.stream.next().now_or_never() {
                Some(Some(Ok(ev))) => out.push(ev),
                Some(Some(Err(e))) => {
                    r.failed = Some(e);
                    break;
                }
                Some(None) | None => break,
            }
        }
        if let Some(last) = out.last() {
            *self.resume_from.lock() = EventsFrom::After(last.id.clone());
        }
        Ok(Some(out.into_iter().map(Into::into).collect()))
    }

    /// After a read failed: opens the stream again, after the last event handed out (or where
    /// it started), with the same kinds, block and batch, so nothing is lost or repeated.
    /// Off the event loop. Does nothing while the stream is open or once it was stopped.
    #[napi]
    pub async fn resume(&self) -> Result<()> {
        let mut slot = self.reader.lock().await;
        if slot.is_some() || self.stop.is_cancelled() {
            return Ok(());
        }
        let options =
            flexiq_runtime::EventsOptions { from: self.resume_from.lock().clone(), ..self.options.clone() };
        match self.stop.run_until_cancelled(self.queue.events(options)).await {
            Some(Ok(stream)) => *slot = Some(Reader { stream, failed: None }),
            Some(Err(e)) if !self.stop.is_cancelled() => return Err(e).napi(),
            _ => {}
        }
        Ok(())
    }

    /// Stops the stream: a pending `next()` resolves `null` at once, and so does every later
    /// one. Idempotent.
    #[napi]
    pub fn close(&self) {
        self.stop.cancel();
        if let Ok(mut slot) = self.reader.try_lock() {
            *slot = None;
        }
    }
}
