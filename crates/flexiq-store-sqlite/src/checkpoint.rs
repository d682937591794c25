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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;

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

/// What the write connection's hook and the checkpoint thread share.
#[derive(Default)]
struct State {
    /// A background checkpoint was requested and has not finished.
    running: AtomicBool,
    /// The last background checkpoint left frames behind for the writer to copy.
    tail_due: AtomicBool,
}

/// Turns SQLite's automatic checkpoint off on `writer` and installs the hook that hands it
/// to a checkpoint thread on `ckpt`, a second connection to the same file with the writer's
/// `synchronous` setting. The thread ends when `writer` is closed.
pub(crate) fn install(writer: &mut Connection, ckpt: Connection) -> Result<()> {
    let state = Arc::new(State::default());
    let (wake, woken) = mpsc::sync_channel::<()>(1);
    let stop = StopOnClose(ckpt.get_interrupt_handle());
    spawn(ckpt, state.clone(), woken)
        .map_err(|e| flexiq_core::Error::backend(format!("cannot start sqlite checkpoint thread: {e}")))?;
    writer
        .wal_hook(Some(move |wal: &mut Wal, pages: i32| {
            let _stop_on_close = &stop;
            on_commit(&state, &wake, pages, || wal.checkpoint_v2(CheckpointMode::PASSIVE))
        }))
        .db()
}

/// Dropped with the write connection's hook: interrupts a pass still copying, so the
/// checkpoint thread lets go of the file soon after the store is closed.
struct StopOnClose(InterruptHandle);

impl Drop for StopOnClose {
    fn drop(&mut self) {
        self.0.interrupt();
    }
}

/// Runs after every commit of the write connection with the WAL's size in pages.
fn on_commit(
    state: &State,
    wake: &SyncSender<()>,
    pages: i32,
    checkpoint: impl FnOnce() -> rusqlite::Result<(i32, i32)>,
) -> rusqlite::Result<()> {
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

fn spawn(conn: Connection, state: Arc<State>, woken: Receiver<()>) -> std::io::Result<()> {
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
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(state: &State, pages: i32, result: (i32, i32)) -> (bool, bool) {
        let (wake, woken) = mpsc::sync_channel(1);
        let mut ran = false;
        on_commit(state, &wake, pages, || {
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
}
