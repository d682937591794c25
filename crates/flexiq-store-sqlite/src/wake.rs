//! Wake-ups for waiting claimers and job watchers.
//!
//! In-process, the writer bumps a generation counter after any commit that may have made work
//! claimable, and notifies watchers of the jobs it changed. Across processes, one background
//! thread per open file polls `PRAGMA data_version` on its own connection every
//! [`POLL_INTERVAL`]; when another connection committed, it reads the wake generation that
//! writers bump in the same transaction as work-making changes (a `queue_counts` row, so the
//! bump shares the page the commit's counter changes already write), and bumps the generation
//! if the change was not this process's own. Job watchers are woken on any foreign commit
//! (they re-check).
//!
//! Readers blocked on the events stream wait for the newest event id the file has handed out
//! (`sqlite_sequence`, which only grows) to pass the one they last saw. Both sides look only
//! while someone waits: the writer reads it inside each transaction it commits, and the
//! watcher after each commit of another connection, so an event from this process wakes its
//! readers as the commit returns and one from another process within a poll interval.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use flexiq_core::{Error, Result};
use rusqlite::{Connection, OptionalExtension};
use tokio::sync::{watch, Notify};

use crate::error::SqlResultExt;

/// How often the watcher thread checks `PRAGMA data_version` (ms).
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(2);

/// Reads the wake generation.
pub(crate) const READ_GEN: &str = "SELECT n FROM queue_counts WHERE ns = '' AND queue = '' AND status = 255";

/// Bumps the wake generation. Not `UPDATE ... RETURNING`: SQLite gathers returned rows in an
/// ephemeral table, whose set-up and tear-down cost about 13,000 instructions per commit, a
/// seventh of a single enqueue.
pub(crate) const BUMP_GEN: &str =
    "UPDATE queue_counts SET n = n + 1 WHERE ns = '' AND queue = '' AND status = 255";

/// Bumps the wake generation inside the writer's transaction and returns the new value; a
/// file whose schema predates the row is a `Conflict` asking for `migrate()`.
pub(crate) fn bump_gen(conn: &Connection) -> Result<i64> {
    conn.prepare_cached(BUMP_GEN).db()?.execute([]).db()?;
    conn.prepare_cached(READ_GEN).db()?.query_row([], |r| r.get(0)).optional().db()?.ok_or_else(|| {
        Error::Conflict(
            "the flexiq schema is out of date (no wake generation row): run migrate() first".into(),
        )
    })
}

/// The newest event id the file has handed out (0 before the first), from the sequence that
/// `AUTOINCREMENT` keeps: one row, never lowered by trimming.
pub(crate) const READ_EVENTS_SEQ: &str =
    "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)";

/// Reads [`READ_EVENTS_SEQ`]; `None` on a file without the events stream yet.
pub(crate) fn events_seq(conn: &Connection) -> Option<i64> {
    conn.prepare_cached(READ_EVENTS_SEQ).ok()?.query_row([], |r| r.get(0)).ok()
}

/// Shared wake-up state of one open file.
pub(crate) struct Hub {
    work: watch::Sender<u64>,
    own_gen: std::sync::atomic::AtomicI64,
    jobs: Mutex<HashMap<String, (usize, Arc<Notify>)>>,
    job_waiters: AtomicUsize,
    events: watch::Sender<i64>,
    event_waiters: AtomicUsize,
    stop: AtomicBool,
}

/// One reader's interest in new events, held while it may block; see [`Hub::watch_events`].
pub(crate) struct EventWatch<'a> {
    hub: &'a Hub,
    /// Changes when a newer event id was seen (or the file is closing).
    pub(crate) rx: watch::Receiver<i64>,
}

impl Drop for EventWatch<'_> {
    fn drop(&mut self) {
        self.hub.event_waiters.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Hub {
    /// A hub with no waiters.
    pub(crate) fn new() -> Self {
        Hub {
            work: watch::Sender::new(0),
            own_gen: std::sync::atomic::AtomicI64::new(-1),
            jobs: Mutex::new(HashMap::new()),
            job_waiters: AtomicUsize::new(0),
            events: watch::Sender::new(0),
            event_waiters: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        }
    }

    /// Wakes every waiting claimer.
    pub(crate) fn bump_work(&self) {
        self.work.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// Records the wake generation this process's writer just committed.
    pub(crate) fn set_own_gen(&self, gen: i64) {
        self.own_gen.store(gen, Ordering::Release);
    }

    /// A receiver of work generations.
    pub(crate) fn subscribe_work(&self) -> watch::Receiver<u64> {
        self.work.subscribe()
    }

    /// The current work generation.
    pub(crate) fn work_gen(&self) -> u64 {
        *self.work.borrow()
    }

    /// Whether anyone waits on a job (the writer only tracks changed ids then).
    pub(crate) fn has_job_waiters(&self) -> bool {
        self.job_waiters.load(Ordering::Acquire) > 0
    }

    /// Registers interest in `id`; pair with [`Hub::unwatch_job`].
    pub(crate) fn watch_job(&self, id: &str) -> Arc<Notify> {
        let mut map = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        self.job_waiters.fetch_add(1, Ordering::AcqRel);
        let entry = map.entry(id.to_string()).or_insert_with(|| (0, Arc::new(Notify::new())));
        entry.0 += 1;
        entry.1.clone()
    }

    /// Drops one registration of `id`.
    pub(crate) fn unwatch_job(&self, id: &str) {
        let mut map = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        self.job_waiters.fetch_sub(1, Ordering::AcqRel);
        if let Some(entry) = map.get_mut(id) {
            entry.0 -= 1;
            if entry.0 == 0 {
                map.remove(id);
            }
        }
    }

    /// Wakes the watchers of these jobs.
    pub(crate) fn notify_jobs(&self, ids: &[String]) {
        let map = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        for id in ids {
            if let Some((_, n)) = map.get(id) {
                n.notify_waiters();
            }
        }
    }

    fn notify_all_jobs(&self) {
        let map = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        for (_, n) in map.values() {
            n.notify_waiters();
        }
    }

    /// Whether a reader may be blocked on the events stream (only then are event ids tracked).
    pub(crate) fn has_event_waiters(&self) -> bool {
        self.event_waiters.load(Ordering::SeqCst) > 0
    }

    /// Registers a reader that may block on the events stream. Register before reading, so an
    /// event committed between the read and the wait still wakes it.
    pub(crate) fn watch_events(&self) -> EventWatch<'_> {
        self.event_waiters.fetch_add(1, Ordering::SeqCst);
        EventWatch { hub: self, rx: self.events.subscribe() }
    }

    /// Records the newest event id of the file; wakes blocked readers when it moved on.
    pub(crate) fn saw_events(&self, seq: i64) {
        self.events.send_if_modified(|newest| {
            let newer = seq > *newest;
            if newer {
                *newest = seq;
            }
            newer
        });
    }

    /// Asks the watcher thread to exit, and wakes blocked event readers so they find the file
    /// closed instead of waiting out their time.
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.events.send_modify(|_| {});
    }
}

/// Starts the cross-process watcher on its own connection; it ends (closing the connection)
/// within one poll interval of [`Hub::stop`].
pub(crate) fn spawn_watcher(conn: Connection, hub: Arc<Hub>) -> std::io::Result<thread::JoinHandle<()>> {
    thread::Builder::new().name("flexiq-sqlite-watch".into()).spawn(move || {
        let read =
            |sql: &str| -> Option<i64> { conn.prepare_cached(sql).ok()?.query_row([], |r| r.get(0)).ok() };
        let mut version = read("PRAGMA data_version");
        let mut gen = read(READ_GEN);
        while !hub.stop.load(Ordering::Acquire) {
            thread::sleep(POLL_INTERVAL);
            let v = read("PRAGMA data_version");
            if v == version {
                continue;
            }
            version = v;
            let g = read(READ_GEN);
            if g != gen {
                gen = g;
                if g != Some(hub.own_gen.load(Ordering::Acquire)) {
                    hub.bump_work();
                }
            }
            if hub.has_job_waiters() {
                hub.notify_all_jobs();
            }
            if hub.has_event_waiters() {
                if let Some(seq) = events_seq(&conn) {
                    hub.saw_events(seq);
                }
            }
        }
    })
}
