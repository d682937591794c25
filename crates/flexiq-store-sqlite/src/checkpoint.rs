//! WAL checkpoints off the committing thread, with the WAL still reset and bounded.
//!
//! A checkpoint copies the WAL's pages into the database file and fsyncs both. Run on the
//! thread that just committed (SQLite's automatic checkpoint), a large one holds every waiting
//! writer for the copy and for an fsync of tens of MiB of dirty pages. Here the write
//! connection's WAL hook only wakes a checkpoint thread with a connection of its own, which
//! copies the frames written so far without holding the write lock, then once more the few
//! written meanwhile. A checkpoint beside a steady stream of commits never reaches the end of
//! the WAL, though, and SQLite reuses the WAL from its start (and fsyncs the database file)
//! only once every frame was copied; so when the background passes fall short, the writer
//! copies the remaining frames at its next commit, and the write after that starts the WAL
//! over. If the WAL still outgrows a hard cap (the checkpoint thread held up by readers or
//! another process), the writer checkpoints itself, as SQLite would.
//!
//! When the store closes, [`Checkpointer::close`] stops the checkpoint thread and runs
//! `PRAGMA wal_checkpoint(TRUNCATE)` on the write connection before closing it, so the `.db`
//! file alone holds every committed job: a copy of just that file is complete. A reader in
//! another process that keeps a read transaction open past the wait blocks the truncation;
//! the WAL is then left in place (nothing is lost, the `.db` alone is not complete) and the
//! failure is logged at `warn` level.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use flexiq_core::Result;
use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;
use rusqlite::{Connection, InterruptHandle};

use crate::error::SqlResultExt;

/// WAL pages after which the checkpoint thread is woken (SQLite's default is 1,000).
const WAKE_AT_PAGES: i32 = 10_000;
/// WAL pages after which the writer checkpoints itself.
const CAP_PAGES: i32 = 4 * WAKE_AT_PAGES;
/// Checkpoint passes the checkpoint thread makes per wake-up before leaving the rest to the writer.
const PASSES: usize = 2;
/// Longest the closing checkpoint waits for another process's readers (ms); the configured
/// busy timeout applies when it is shorter.
const CLOSE_WAIT_MS: u64 = 2_000;

/// What the write connection's hook and the checkpoint thread share.
#[derive(Default)]
struct State {
    /// A background checkpoint was requested and has not finished.
    running: AtomicBool,
    /// The last background checkpoint left frames behind for the writer to copy.
    tail_due: AtomicBool,
    /// A checkpoint the write connection owes was put off because the commit ran on an
    /// event loop's thread (see `flexiq_core::event_loop`): the next commit belongs on
    /// another thread.
    put_off: Arc<AtomicBool>,
}

/// The checkpoint thread of one write connection, and what closing that connection needs.
pub(crate) struct Checkpointer {
    thread: JoinHandle<()>,
    put_off: Arc<AtomicBool>,
    path: PathBuf,
    close_wait: Duration,
}

/// How the closing checkpoint went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CloseCheckpoint {
    /// The WAL was copied into the database file and truncated to zero bytes.
    Truncated,
    /// Readers (another process's) kept the WAL from being reset: `log` frames in the WAL,
    /// `copied` of them in the database file.
    Busy { log: i64, copied: i64 },
    /// The checkpoint failed outright.
    Failed(String),
}

/// Turns SQLite's automatic checkpoint off on `writer` and installs the hook that hands it
/// to a checkpoint thread on `ckpt`, a second connection to the same file (`path`) with the
/// writer's `synchronous` setting. The thread ends when the hook is removed or `writer` is
/// closed; [`Checkpointer::close`] does both in order. `busy_timeout_ms` bounds the closing
/// checkpoint's wait for readers (with [`CLOSE_WAIT_MS`]).
pub(crate) fn install(
    writer: &mut Connection,
    ckpt: Connection,
    path: PathBuf,
    busy_timeout_ms: u64,
) -> Result<Checkpointer> {
    let state = Arc::new(State::default());
    let put_off = state.put_off.clone();
    let (wake, woken) = mpsc::sync_channel::<()>(1);
    let stop = StopOnClose(ckpt.get_interrupt_handle());
    let thread = spawn(ckpt, state.clone(), woken)
        .map_err(|e| flexiq_core::Error::backend(format!("cannot start sqlite checkpoint thread: {e}")))?;
    writer
        .wal_hook(Some(move |wal: &mut Wal, pages: i32| {
            let _stop_on_close = &stop;
            let on_event_loop = flexiq_core::event_loop::is_this_thread();
            on_commit(&state, &wake, pages, on_event_loop, || wal.checkpoint_v2(CheckpointMode::PASSIVE))
        }))
        .db()?;
    let close_wait = Duration::from_millis(busy_timeout_ms.min(CLOSE_WAIT_MS));
    Ok(Checkpointer { thread, put_off, path, close_wait })
}

impl Checkpointer {
    /// Set while the write connection owes a checkpoint it put off on an event loop's
    /// thread: commits must go to a thread that may do it until one has.
    pub(crate) fn put_off(&self) -> Arc<AtomicBool> {
        self.put_off.clone()
    }

    /// Closes the write connection, leaving a self-contained database file: the checkpoint
    /// thread is stopped first (its passes would hold the checkpoint lock), then
    /// `PRAGMA wal_checkpoint(TRUNCATE)` copies every frame into the database file and
    /// empties the WAL. When this was the last connection to the file SQLite also deletes the
    /// WAL and shared-memory files. A checkpoint that readers kept short is logged at `warn`
    /// with the file and frame counts, and the WAL stays (the data in it is not lost).
    pub(crate) fn close(self, mut writer: Connection) -> CloseCheckpoint {
        // Dropping the hook drops its wake-up sender and interrupts a pass in progress, so the
        // thread's loop ends.
        let _ = writer.wal_hook(None::<fn(&mut Wal, i32) -> rusqlite::Result<()>>);
        let _ = self.thread.join();
        let outcome = truncate(&writer, self.close_wait);
        let path = self.path.display();
        match &outcome {
            CloseCheckpoint::Truncated => {
                tracing::debug!(file = %path, "sqlite store closed: WAL checkpointed and truncated");
            }
            CloseCheckpoint::Busy { log, copied } => tracing::warn!(
                file = %path,
                wal_frames = log,
                copied_frames = copied,
                "sqlite store closed without truncating its WAL: another connection (likely another \
                 process) holds a read transaction; the -wal file stays beside the database, which \
                 is not self-contained until a later close or checkpoint succeeds"
            ),
            CloseCheckpoint::Failed(e) => tracing::warn!(
                file = %path,
                error = %e,
                "sqlite store closed without checkpointing its WAL; the -wal file stays beside the database"
            ),
        }
        if let Err((_, e)) = writer.close() {
            tracing::warn!(file = %path, error = %e, "closing the sqlite write connection failed");
        }
        outcome
    }
}

/// `PRAGMA wal_checkpoint(TRUNCATE)`, waiting at most `wait` for readers.
fn truncate(conn: &Connection, wait: Duration) -> CloseCheckpoint {
    if let Err(e) = conn.busy_timeout(wait) {
        return CloseCheckpoint::Failed(e.to_string());
    }
    let row = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
    });
    match row {
        Ok((0, _, _)) => CloseCheckpoint::Truncated,
        Ok((_, log, copied)) => CloseCheckpoint::Busy { log, copied },
        Err(e) => CloseCheckpoint::Failed(e.to_string()),
    }
}

/// Dropped with the write connection's hook: interrupts a pass still copying, so the
/// checkpoint thread lets go of the file soon after the store is closed.
struct StopOnClose(InterruptHandle);

impl Drop for StopOnClose {
    fn drop(&mut self) {
        self.0.interrupt();
    }
}

/// Runs after every commit of the write connection with the WAL's size in pages. A
/// checkpoint due on an event loop's thread (`on_event_loop`) is put off to the next commit
/// on another thread, since it copies pages and fsyncs the database file.
fn on_commit(
    state: &State,
    wake: &SyncSender<()>,
    pages: i32,
    on_event_loop: bool,
    checkpoint: impl FnOnce() -> rusqlite::Result<(i32, i32)>,
) -> rusqlite::Result<()> {
    let checkpoint = || {
        if on_event_loop {
            state.put_off.store(true, Ordering::Release);
            Err(rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None))
        } else {
            state.put_off.store(false, Ordering::Release);
            checkpoint()
        }
    };
    if state.running.load(Ordering::Acquire) {
        if pages >= CAP_PAGES {
            // Busy while the checkpoint thread holds the checkpoint lock: it is then catching up.
            let _ = checkpoint();
        }
        return Ok(());
    }
    // A pass that began before the last commits cannot reach the WAL's end by itself; this
    // connection, between its transactions, can. A WAL that was started over needs nothing.
    let tail_due = state.tail_due.swap(false, Ordering::AcqRel) && pages >= WAKE_AT_PAGES;
    if tail_due || pages >= CAP_PAGES {
        // A checkpoint held back by a reader (or another process's) is retried after a later commit.
        match checkpoint() {
            Ok((log, done)) if done >= log => {}
            _ => state.tail_due.store(true, Ordering::Release),
        }
        return Ok(());
    }
    if pages >= WAKE_AT_PAGES {
        state.running.store(true, Ordering::Release);
        if wake.try_send(()).is_err() {
            state.running.store(false, Ordering::Release);
        }
    }
    Ok(())
}

fn spawn(conn: Connection, state: Arc<State>, woken: Receiver<()>) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name("flexiq-sqlite-ckpt".into()).spawn(move || {
        while woken.recv().is_ok() {
            // The first pass copies the bulk of the WAL; frames committed meanwhile are few, and
            // a second pass that copies them all also fsyncs the database file here.
            let mut behind = true;
            for _ in 0..PASSES {
                let _ = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE);
                // A pass reports the WAL as it was when the pass began: read it afresh.
                behind = conn
                    .wal_checkpoint_v2(None::<&str>, CheckpointMode::NOOP)
                    .map_or(true, |(log, done)| done < log);
                if !behind {
                    break;
                }
            }
            state.tail_due.store(behind, Ordering::Release);
            state.running.store(false, Ordering::Release);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(state: &State, pages: i32, result: (i32, i32)) -> (bool, bool) {
        hook_on(state, pages, false, result)
    }

    fn hook_on(state: &State, pages: i32, on_event_loop: bool, result: (i32, i32)) -> (bool, bool) {
        let (wake, woken) = mpsc::sync_channel(1);
        let mut ran = false;
        on_commit(state, &wake, pages, on_event_loop, || {
            ran = true;
            Ok(result)
        })
        .unwrap();
        (ran, woken.try_recv().is_ok())
    }

    #[test]
    fn a_small_wal_is_left_alone() {
        let state = State::default();
        assert_eq!(hook(&state, WAKE_AT_PAGES - 1, (0, 0)), (false, false));
    }

    #[test]
    fn a_full_wal_wakes_the_checkpoint_thread_instead_of_checkpointing() {
        let state = State::default();
        assert_eq!(hook(&state, WAKE_AT_PAGES, (0, 0)), (false, true));
        assert!(state.running.load(Ordering::Acquire));
        // While it runs, further commits neither wake it again nor checkpoint.
        assert_eq!(hook(&state, WAKE_AT_PAGES + 10, (0, 0)), (false, false));
    }

    #[test]
    fn the_writer_copies_the_frames_a_background_pass_left() {
        let state = State::default();
        state.tail_due.store(true, Ordering::Release);
        assert_eq!(hook(&state, WAKE_AT_PAGES + 50, (10_050, 10_050)), (true, false));
        assert!(!state.tail_due.load(Ordering::Acquire));
        // A catch-up that a reader kept short is tried again at the next commit.
        state.tail_due.store(true, Ordering::Release);
        assert_eq!(hook(&state, WAKE_AT_PAGES + 50, (10_050, 10_000)), (true, false));
        assert!(state.tail_due.load(Ordering::Acquire));
    }

    #[test]
    fn no_catch_up_once_the_wal_started_over() {
        let state = State::default();
        state.tail_due.store(true, Ordering::Release);
        assert_eq!(hook(&state, 6, (6, 0)), (false, false));
        assert!(!state.tail_due.load(Ordering::Acquire));
    }

    #[test]
    fn the_writer_checkpoints_itself_past_the_cap() {
        let state = State::default();
        state.running.store(true, Ordering::Release);
        assert_eq!(hook(&state, CAP_PAGES, (CAP_PAGES, CAP_PAGES)), (true, false));
        state.running.store(false, Ordering::Release);
        assert_eq!(hook(&state, CAP_PAGES, (CAP_PAGES, CAP_PAGES)), (true, false));
    }

    #[test]
    fn an_event_loop_puts_the_writers_checkpoints_off_to_the_next_commit_elsewhere() {
        let state = State::default();
        state.tail_due.store(true, Ordering::Release);
        assert_eq!(hook_on(&state, WAKE_AT_PAGES + 50, true, (0, 0)), (false, false));
        assert!(state.tail_due.load(Ordering::Acquire), "the tail is still owed");
        assert!(state.put_off.load(Ordering::Acquire));
        state.running.store(true, Ordering::Release);
        assert_eq!(hook_on(&state, CAP_PAGES, true, (0, 0)), (false, false));
        state.running.store(false, Ordering::Release);
        assert_eq!(hook_on(&state, WAKE_AT_PAGES + 60, false, (10_060, 10_060)), (true, false));
        assert!(!state.tail_due.load(Ordering::Acquire));
        assert!(!state.put_off.load(Ordering::Acquire), "paid off by the commit elsewhere");
    }
}
