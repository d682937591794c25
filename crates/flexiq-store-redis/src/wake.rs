//! Wake-ups for idle workers and job watchers.
//!
//! Every script that makes a job claimable leaves a token in the namespace's marker sorted
//! set. One background task per handle blocks in `BZPOPMIN` on that marker over its own
//! dedicated connection (reconnecting after a drop) and bumps an in-process generation
//! counter, so every local `wait_for_work` caller wakes within a round trip of an enqueue
//! made by any process. Writes made through this handle bump the counters directly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flexiq_core::Result;
use fred::prelude::*;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::conn::builder;
use crate::store::Shared;

/// Longest single `BZPOPMIN` (s); the loop re-checks the closed flag between waits.
const BLOCK_SECS: f64 = 1.0;

/// The wake-up state of one namespace handle.
pub(crate) struct Waker {
    shared: Arc<Shared>,
    key: String,
    work: watch::Sender<u64>,
    /// Marker tokens the listener popped (signals from scripts, whichever process ran them).
    popped: Arc<AtomicU64>,
    /// The `popped` count the last `wait_work` on this handle returned at.
    seen: AtomicU64,
    jobs: watch::Sender<u64>,
    task: std::sync::Mutex<Option<JoinHandle<()>>>,
}

impl Waker {
    pub(crate) fn new(shared: Arc<Shared>, key: String) -> Self {
        Waker {
            shared,
            key,
            work: watch::channel(0).0,
            popped: Arc::new(AtomicU64::new(0)),
            seen: AtomicU64::new(0),
            jobs: watch::channel(0).0,
            task: std::sync::Mutex::new(None),
        }
    }

    /// Local signal: work may be claimable.
    pub(crate) fn work_changed(&self) {
        self.work.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// Local signal: some job changed.
    pub(crate) fn job_changed(&self) {
        self.jobs.send_modify(|g| *g = g.wrapping_add(1));
    }

    fn ensure_listener(&self) {
        let mut task = self.task.lock().unwrap_or_else(|p| p.into_inner());
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let shared = self.shared.clone();
        let key = self.key.clone();
        let tx = self.work.clone();
        let popped = self.popped.clone();
        *task = Some(tokio::spawn(listen(shared, key, tx, popped)));
    }

    /// Waits for a work signal, at most `max` (and at most until `due_at` Unix ms, the
    /// earliest delayed job, when given). A marker token popped since the previous wait on
    /// this handle returned (while its caller was claiming) ends the wait at once, so a wake-up
    /// landing between an empty claim and the next wait is not lost.
    pub(crate) async fn wait_work(&self, max: Duration, due_at: Option<i64>) -> Result<()> {
        self.ensure_listener();
        let mut rx = self.work.subscribe();
        rx.mark_unchanged();
        let popped = self.popped.load(Ordering::Acquire);
        if self.seen.swap(popped, Ordering::AcqRel) != popped {
            return Ok(());
        }
        let mut wait = max;
        if let Some(due) = due_at {
            let until = (due - wall_ms()).max(0) as u64;
            wait = wait.min(Duration::from_millis(until));
        }
        if wait.is_zero() {
            return Ok(());
        }
        if let Ok(Ok(())) = tokio::time::timeout(wait, rx.changed()).await {
            self.seen.store(self.popped.load(Ordering::Acquire), Ordering::Release);
        }
        Ok(())
    }

    /// Waits for a local job-change signal, at most `max`.
    pub(crate) async fn wait_job_signal(&self, max: Duration) {
        let mut rx = self.jobs.subscribe();
        rx.mark_unchanged();
        let _ = tokio::time::timeout(max, rx.changed()).await;
    }

    /// Stops the listener.
    pub(crate) fn stop(&self) {
        if let Some(t) = self.task.lock().unwrap_or_else(|p| p.into_inner()).take() {
            t.abort();
        }
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The wall clock in Unix ms.
pub(crate) fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

async fn listen(shared: Arc<Shared>, key: String, tx: watch::Sender<u64>, popped: Arc<AtomicU64>) {
    let mut client: Option<Client> = None;
    while !shared.closed.load(Ordering::Acquire) {
        let c = match &client {
            Some(c) => c.clone(),
            None => {
                let Ok(c) = builder(&shared.conn.config).build() else { return };
                if c.init().await.is_err() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                client = Some(c.clone());
                c
            }
        };
        match c.bzpopmin::<Value, _>(key.as_str(), BLOCK_SECS).await {
            Ok(v) if !v.is_null() => {
                popped.fetch_add(1, Ordering::AcqRel);
                tx.send_modify(|g| *g = g.wrapping_add(1));
            }
            Ok(_) => {}
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    if let Some(c) = client {
        let _ = c.quit().await;
    }
}
