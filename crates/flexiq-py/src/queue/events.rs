//! The events stream on `NativeQueue`, as the runtime's `queue/events.rs`: publish a custom
//! event, read a page, the newest id, trimming, the namespace's switch, and the stream
//! itself as [`EventIter`].
//!
//! An event comes back as a dict from `crate::convert::queue_event` (`at_ms` Unix ms, `data`
//! decoded to Python values); custom data arrives as JSON text, which the Python layer encodes
//! once with `json.dumps`. Waits are in ms. A read never blocks for long here: the Python
//! layer (`flexiq/_queue/events.py`) asks for short slices and loops, so Ctrl-C reaches a
//! waiting thread within a slice and a cancelled coroutine frees its thread as soon.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use flexiq_core::events::{MAX_EVENTS_BLOCK_MS, MAX_EVENTS_PER_READ};
use flexiq_core::Error as CoreError;
use flexiq_runtime::{Error, EventStream, EventsFrom, EventsOptions};
use futures::StreamExt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use super::NativeQueue;
use crate::args;
use crate::convert;
use crate::errors::invalid;
use crate::runtime::{block_on, runtime};

/// The longest slice `EventIter.next_within` may wait (ms), so a caller always gets the GIL
/// back, and with it Ctrl-C, within a bounded time.
const MAX_SLICE_MS: u64 = 60_000;

/// An open events stream: `next_within(timeout_ms)` waits, with the GIL released, at most
/// that long for the next event. The stream keeps its place between calls (a wait that runs
/// out loses nothing), so calling it in short slices is the same as one long wait.
#[pyclass(module = "flexiq._flexiq", frozen)]
pub(crate) struct EventIter {
    stream: Arc<tokio::sync::Mutex<Option<EventStream>>>,
    /// Set by `close`, so a wait in flight on another thread drops the stream when it returns
    /// and `close` itself never waits.
    closed: Arc<AtomicBool>,
}

impl EventIter {
    fn new(stream: EventStream) -> Self {
        EventIter { stream: Arc::new(tokio::sync::Mutex::new(Some(stream))), closed: Arc::default() }
    }
}

fn closed(msg: &str) -> Error {
    Error::Core(CoreError::Closed(msg.to_string()))
}

#[pymethods]
impl EventIter {
    /// The next event as a dict, or `None` when none committed within `timeout_ms` (0 to
    /// 60,000 ms). After the stream failed (its error was raised once) or was closed, raises
    /// `Closed`.
    fn next_within<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::timeout_ms)] timeout_ms: i64,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let wait = u64::try_from(timeout_ms).ok().filter(|ms| *ms <= MAX_SLICE_MS).ok_or_else(|| {
            invalid(format!("timeout_ms {timeout_ms} must be between 0 and {MAX_SLICE_MS}"))
        })?;
        let (stream, shut) = (self.stream.clone(), self.closed.clone());
        let next = block_on(py, async move {
            let mut guard = stream.lock().await;
            let s = match guard.as_mut() {
                Some(s) if !shut.load(Ordering::Acquire) => s,
                _ => {
                    guard.take();
                    return Err(closed("the events stream is closed"));
                }
            };
            // Dropping `next()` on the timeout leaves a read in flight inside the stream, which
            // the next call resumes: nothing read is lost.
            let got = match tokio::time::timeout(Duration::from_millis(wait), s.next()).await {
                Err(_) => Ok(None),
                Ok(Some(Ok(ev))) => Ok(Some(ev)),
                Ok(Some(Err(e))) => {
                    guard.take();
                    Err(e)
                }
                Ok(None) => {
                    guard.take();
                    Err(closed("the events stream ended"))
                }
            };
            if shut.load(Ordering::Acquire) {
                guard.take();
            }
            got
        })?;
        next.map(|ev| convert::queue_event(py, &ev)).transpose()
    }

    /// Stops the stream and releases what it holds, at once (a `next_within` waiting on another
    /// thread releases it when it returns); later `next_within` calls raise `Closed`.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.release();
    }
}

impl EventIter {
    /// Drops the stream unless a wait holds it (which then drops it itself), inside the runtime:
    /// the stream may hold store resources whose drop expects one.
    fn release(&self) {
        let _rt = runtime().enter();
        if let Ok(mut guard) = self.stream.try_lock() {
            guard.take();
        }
    }
}

impl Drop for EventIter {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::Release);
        self.release();
    }
}

/// Checks a wait of 1 ms to [`MAX_EVENTS_BLOCK_MS`] (the store's limit on one read), which the
/// runtime's `events` would otherwise only meet at the first read.
fn block(block_ms: i64) -> PyResult<Duration> {
    if !(1..=MAX_EVENTS_BLOCK_MS as i64).contains(&block_ms) {
        return Err(invalid(format!("block_ms {block_ms} must be between 1 and {MAX_EVENTS_BLOCK_MS}")));
    }
    Ok(Duration::from_millis(block_ms as u64))
}

#[pymethods]
impl NativeQueue {
    /// Appends a custom event `name` (not a built-in kind's name) whose data is the JSON text
    /// `data_json` (64 KiB at most), about job `job_id` and queue `queue` when given; returns
    /// its id. `Conflict` when the namespace's events are switched off.
    #[pyo3(signature = (name, data_json, job_id=None, queue=None))]
    fn publish_event(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::name)] name: String,
        #[pyo3(from_py_with = args::data_json)] data_json: String,
        #[pyo3(from_py_with = args::job_id)] job_id: Option<String>,
        #[pyo3(from_py_with = args::queue)] queue: Option<String>,
    ) -> PyResult<String> {
        let data: serde_json::Value =
            serde_json::from_str(&data_json).map_err(|e| invalid(format!("data of event {name}: {e}")))?;
        let (q, name) = (self.inner.clone(), name);
        block_on(py, async move { q.publish_event(&name, data, job_id.as_deref(), queue.as_deref()).await })
    }

    /// Up to `limit` (1 to 10,000) events after the id `after` (`None`: from the oldest kept)
    /// as dicts, waiting up to `block_ms` (0 to 300,000 ms) when there are none yet. An id
    /// that is not one of this store's is `InvalidArgument`.
    #[pyo3(signature = (after=None, block_ms=0, limit=100))]
    fn read_events<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
        #[pyo3(from_py_with = args::block_ms)] block_ms: i64,
        #[pyo3(from_py_with = args::limit)] limit: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let q = self.inner.clone();
        let rows = block_on(py, async move { q.read_events(after.as_deref(), block_ms, limit).await })?;
        let out = PyList::empty(py);
        for ev in &rows {
            out.append(convert::queue_event(py, ev)?)?;
        }
        Ok(out)
    }

    /// The newest event's id, or `None` when the stream is empty (where a reader of new events
    /// only would start).
    fn last_event_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let q = self.inner.clone();
        block_on(py, async move { q.last_event_id().await })
    }

    /// Keeps the newest `max_len` events and, with `max_age_ms` (ms), none older than that;
    /// returns how many were dropped. A worker's elected cleaner trims every round on its own
    /// (10,000 events by default).
    #[pyo3(signature = (max_len, *, max_age_ms=None))]
    fn trim_events(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::max_len)] max_len: i64,
        #[pyo3(from_py_with = args::max_age_ms)] max_age_ms: Option<i64>,
    ) -> PyResult<u64> {
        let q = self.inner.clone();
        block_on(py, async move { q.trim_events(max_len, max_age_ms).await })
    }

    /// Switches writing events on or off for the namespace (on by default). Off, state changes
    /// write no events, `publish_event` raises `Conflict`, and readers see nothing new.
    fn set_events_enabled(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::enabled)] enabled: bool,
    ) -> PyResult<()> {
        let q = self.inner.clone();
        block_on(py, async move { q.set_events_enabled(enabled).await })
    }

    /// Whether the namespace writes events.
    fn events_enabled(&self, py: Python<'_>) -> PyResult<bool> {
        let q = self.inner.clone();
        block_on(py, async move { q.events_enabled().await })
    }

    /// Opens the events stream: after the id `after`, or from the oldest event kept with
    /// `from_start`, else only events committed from now on; `kinds` (kind names and custom
    /// event names; empty: every event) filters it. One read waits up to `block_ms` (1 to
    /// 300,000 ms) and fetches up to `batch` (1 to 10,000) events. Every argument, `after`
    /// included, is checked here, before any event is read.
    #[pyo3(signature = (after=None, kinds=None, from_start=false, block_ms=5000, batch=256))]
    fn events(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::after)] after: Option<String>,
        #[pyo3(from_py_with = args::kinds)] kinds: Option<Vec<String>>,
        #[pyo3(from_py_with = args::from_start)] from_start: bool,
        #[pyo3(from_py_with = args::block_ms)] block_ms: i64,
        #[pyo3(from_py_with = args::batch)] batch: i64,
    ) -> PyResult<EventIter> {
        let from = match (after, from_start) {
            (Some(_), true) => return Err(invalid("give after or from_start, not both")),
            (Some(id), false) => EventsFrom::After(id),
            (None, true) => EventsFrom::Start,
            (None, false) => EventsFrom::Now,
        };
        let block = block(block_ms)?;
        let batch = u32::try_from(batch)
            .ok()
            .filter(|b| (1..=MAX_EVENTS_PER_READ).contains(b))
            .ok_or_else(|| invalid(format!("batch {batch} must be between 1 and {MAX_EVENTS_PER_READ}")))?;
        let opts = EventsOptions { from, kinds: kinds.unwrap_or_default(), block, batch };
        let q = self.inner.clone();
        let stream = block_on(py, async move { q.events(opts).await })?;
        Ok(EventIter::new(stream))
    }
}
