//! The `NativeQueue` class: opening and closing; its calls live in one file per module of
//! the runtime's `queue/` (jobs, listing, control, dead, stats, admin, clean, reschedule,
//! schedulers, flows, dedup, wait, events, workflow).
//!
//! `NativeQueue.connect` opens any backend off the event loop; the constructor stays for
//! SQLite alone, whose open is a local file and cheap enough to block on.
//!
//! The JS `Queue` (lib/queue.cjs) wraps one of these. Each call parses its arguments
//! synchronously, clones the runtime handle and either blocks on the runtime (the calls the
//! spec makes synchronous: index-backed point reads and writes) or returns a Promise whose
//! work runs on the addon's tokio threads, off the JS event loop. After `close()` every call
//! fails with `CLOSED`, and the reads still waiting on the events stream end (a pending
//! Promise would keep Node's event loop alive).

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

use flexiq_runtime::Queue;
use napi::bindgen_prelude::block_on;
use napi_derive::napi;
use parking_lot::RwLock;
use tokio_util::sync::CancellationToken;

use crate::args;
use crate::error::{closed, invalid, IntoNapi, Result};
use crate::options::QueueOptions;

/// A handle on one namespace of a store (SQLite file, PostgreSQL or Redis).
#[napi]
pub struct NativeQueue {
    inner: Arc<RwLock<Option<Queue>>>,
    backend: &'static str,
    namespace: String,
    /// Cancelled by `close()`: ends the waits of `readEvents` and of every events stream.
    closing: CancellationToken,
}

/// Whether a resolved store location is an SQLite file (a plain path or a `sqlite:` URL).
fn is_sqlite(url: &str) -> bool {
    url.starts_with("sqlite:") || !url.contains("://")
}

/// The scheme of a URL, for messages (`postgres://`).
fn scheme(url: &str) -> &str {
    url.find("://").map_or(url, |i| &url[..i + 3])
}

impl NativeQueue {
    fn wrap(queue: Queue) -> Self {
        NativeQueue {
            backend: queue.backend(),
            namespace: queue.namespace().to_string(),
            inner: Arc::new(RwLock::new(Some(queue))),
            closing: CancellationToken::new(),
        }
    }

    /// The runtime handle, or `CLOSED`.
    pub(crate) fn queue(&self) -> Result<Queue> {
        self.inner.read().clone().ok_or_else(|| closed(&format!("queue on namespace {}", self.namespace)))
    }
}

#[napi]
impl NativeQueue {
    /// Opens an SQLite file named by `options` (creating and migrating it unless
    /// `autoMigrate: false`), blocking the calling thread while it does: a local file opens
    /// in milliseconds. PostgreSQL and Redis are refused here (`INVALID_ARGUMENT`): their
    /// connect and migration wait on the network, so they go through `connect`.
    #[napi(constructor)]
    pub fn new(options: QueueOptions) -> Result<Self> {
        let (url, opts) = options.resolve()?;
        if !is_sqlite(&url) {
            return Err(invalid(format!(
                "new Queue() opens SQLite only; use `await Queue.connect({{ url }})` for {}",
                scheme(&url)
            )));
        }
        Ok(Self::wrap(block_on(flexiq_runtime::connect(&url, opts)).napi()?))
    }

    /// Opens the store named by `options` on the addon's threads: connecting, creating and
    /// migrating never block the JS event loop. Any backend.
    #[napi]
    pub async fn connect(options: QueueOptions) -> Result<NativeQueue> {
        let (url, opts) = options.resolve()?;
        Ok(Self::wrap(flexiq_runtime::connect(&url, opts).await.napi()?))
    }

    /// The backend: `"sqlite"`, `"postgres"` or `"redis"`.
    #[napi(getter)]
    pub fn backend(&self) -> &'static str {
        self.backend
    }

    /// The namespace every call is scoped to.
    #[napi(getter)]
    pub fn namespace(&self) -> String {
        self.namespace.clone()
    }

    /// Whether `close()` was called.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.inner.read().is_none()
    }

    /// Releases the store's connections and ends every wait on the events stream.
    /// Idempotent; every later call fails with `CLOSED`.
    #[napi]
    pub async fn close(&self) -> Result<()> {
        self.closing.cancel();
        let queue = self.inner.write().take();
        if let Some(q) = queue {
            q.close().await.napi()?;
        }
        Ok(())
    }
}

/// `now - older_than_ms`, for the purges that take an age in ms.
pub(crate) fn cutoff(q: &flexiq_runtime::Queue, older_than_ms: f64) -> Result<i64> {
    let ms = args::millis("olderThanMs", older_than_ms)?;
    let ms = i64::try_from(ms).map_err(|_| invalid(format!("olderThanMs {ms} is too large")))?;
    Ok(q.now_ms().saturating_sub(ms))
}
