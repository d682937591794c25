//! Who commits: the caller itself, or the writer thread.
//!
//! A hand-off to a dedicated thread and back costs two thread wake-ups per write, which on a
//! small virtual machine is more than the SQLite work of a single enqueue or a claim. So small
//! operations (a single enqueue, a claim, an ack batch) are pushed onto a shared queue and the
//! caller, after yielding once so that other ready tasks can queue theirs, tries to take the
//! write connection: if it is free the caller becomes the
//! *combiner* and commits everything queued, its own operation and any that other callers
//! queued meanwhile, in one transaction, on its own thread. If another combiner holds the
//! connection, that one is guaranteed to see the queued operation (it re-checks the queue after
//! releasing the connection), so the caller simply awaits its reply.
//!
//! Large operations (bulk enqueues, purges, sweeps) go to the writer thread so they never block
//! an async runtime's thread for long, and a combiner hands over to the writer thread after a
//! bounded number of batches so no caller is kept committing for others indefinitely.
//!
//! An event loop's thread (`flexiq_core::event_loop`) combines too, but never waits: it takes
//! the write lock only if no other process holds it, commits one bounded batch, and only with
//! `synchronous = NORMAL` (no fsync at commit) and no checkpoint owed. Otherwise its operation
//! goes to the writer thread like a large one. Its thread then does tens of microseconds of
//! SQLite work instead of two thread hand-offs.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use rusqlite::Connection;

use crate::checkpoint::Checkpointer;
use crate::error::closed;
use crate::wake::Hub;
use crate::writer::{commit_batch, try_commit_batch, WriteOp};

/// Most operations folded into one transaction.
const MAX_BATCH: usize = 512;

/// Batches an inline combiner commits before handing the rest to the writer thread.
const INLINE_BATCHES: usize = 2;

/// Most operations an event loop's thread commits in one go.
const EVENT_LOOP_BATCH: usize = 64;

/// Where a queued operation may be committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inline {
    /// On the writer thread only.
    No,
    /// On the calling thread when the connection is free.
    Yes,
    /// On the calling thread, an event loop's, when that needs no wait (see the module docs).
    NoWait,
}

/// What lets an event loop's thread commit.
pub(crate) struct NoWait {
    /// `synchronous = NORMAL`: a commit does not fsync.
    pub(crate) allowed: bool,
    /// The connection's busy timeout, restored after a lock attempt that does not wait.
    pub(crate) busy_timeout: Duration,
    /// Set while a checkpoint was put off (`Checkpointer::put_off`).
    pub(crate) put_off: Arc<AtomicBool>,
}

/// Operations waiting for the connection, and how many were ever taken from the queue.
#[derive(Default)]
struct Queued {
    ops: VecDeque<Box<dyn WriteOp>>,
    pushed: u64,
    taken: u64,
}

/// The place of one operation in the queue, to tell whether a combiner already took it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket(u64);

/// The write connection and the operations waiting for it.
pub(crate) struct GroupCommit {
    conn: Mutex<Option<Connection>>,
    queued: Mutex<Queued>,
    thread: Mutex<Option<mpsc::Sender<()>>>,
    joined: Mutex<Option<JoinHandle<()>>>,
    hub: Arc<Hub>,
    closed: AtomicBool,
    nowait: NoWait,
}

impl GroupCommit {
    /// Takes ownership of the write connection and starts the writer thread; `ckpt` closes
    /// the connection when the thread ends.
    pub(crate) fn start(
        conn: Connection,
        ckpt: Checkpointer,
        hub: Arc<Hub>,
        no_fsync: bool,
        busy_timeout: Duration,
    ) -> std::io::Result<Arc<GroupCommit>> {
        let nowait = NoWait { allowed: no_fsync, busy_timeout, put_off: ckpt.put_off() };
        let (tx, rx) = mpsc::channel::<()>();
        let gc = Arc::new(GroupCommit {
            conn: Mutex::new(Some(conn)),
            queued: Mutex::new(Queued::default()),
            thread: Mutex::new(Some(tx)),
            joined: Mutex::new(None),
            hub,
            closed: AtomicBool::new(false),
            nowait,
        });
        let worker = gc.clone();
        let thread = std::thread::Builder::new()
            .name("flexiq-sqlite-write".into())
            .spawn(move || worker.thread_loop(rx, ckpt))?;
        *gc.joined.lock() = Some(thread);
        Ok(gc)
    }

    /// Queues `op`. With `inline`, the caller must then call [`Self::settle`] (after letting
    /// other tasks queue theirs, so they share the commit); otherwise the writer thread commits
    /// it. The reply arrives on the channel the operation carries.
    pub(crate) fn push(&self, op: Box<dyn WriteOp>, inline: Inline) -> flexiq_core::Result<Ticket> {
        if self.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        let ticket = {
            let mut q = self.queued.lock();
            q.ops.push_back(op);
            q.pushed += 1;
            Ticket(q.pushed - 1)
        };
        if inline == Inline::No {
            self.settle(ticket, Inline::No);
        }
        Ok(ticket)
    }

    /// Commits what is queued on the calling thread when the connection is free (`inline`),
    /// or leaves it to the writer thread. Nothing to do when a combiner already took the
    /// operation of `ticket`: its reply is on the way, and the operations queued since are
    /// left to gather into the next commit.
    pub(crate) fn settle(&self, ticket: Ticket, inline: Inline) {
        if self.queued.lock().taken > ticket.0 {
            return;
        }
        // Once closing, the writer thread may already have drained for the last time: the
        // caller then settles the queue itself (committing, or refusing once the connection
        // is gone).
        let closing = self.closed.load(Ordering::Acquire);
        let settled = if closing {
            self.combine(usize::MAX)
        } else {
            match inline {
                Inline::No => false,
                Inline::Yes => self.combine(INLINE_BATCHES),
                Inline::NoWait => self.combine_nowait(),
            }
        };
        if !settled {
            self.wake_thread();
        }
    }

    /// An event loop's turn as combiner: one batch of at most [`EVENT_LOOP_BATCH`] operations,
    /// committed only if the write lock is free at once. Returns false when the writer thread
    /// must take over (anything left queued, the lock held elsewhere, a commit that would
    /// fsync or owes a checkpoint).
    fn combine_nowait(&self) -> bool {
        if !self.nowait.allowed || self.nowait.put_off.load(Ordering::Acquire) {
            return false;
        }
        let Some(conn) = self.conn.try_lock() else { return true };
        let Some(c) = conn.as_ref() else { return false };
        let mut batch = self.take(EVENT_LOOP_BATCH);
        if batch.is_empty() {
            return true;
        }
        if !try_commit_batch(c, &mut batch, &self.hub, self.nowait.busy_timeout) {
            self.put_back(batch);
            return false;
        }
        drop(conn);
        self.queued.lock().ops.is_empty()
    }

    /// Returns a batch that was taken but not run to the front of the queue, in its order
    /// (the connection is still held, so no other combiner took anything meanwhile).
    fn put_back(&self, batch: Vec<Box<dyn WriteOp>>) {
        let mut q = self.queued.lock();
        q.taken -= batch.len() as u64;
        for op in batch.into_iter().rev() {
            q.ops.push_front(op);
        }
    }

    /// Refuses new operations and lets the writer thread commit what is queued, then close
    /// the connection (see [`Checkpointer::close`]).
    pub(crate) fn shutdown(&self) {
        self.closed.store(true, Ordering::Release);
        self.thread.lock().take();
    }

    /// Waits for the writer thread to end (after [`Self::shutdown`]): every queued operation
    /// answered and the connection closed. Returns at once on the writer thread itself and
    /// once the thread was already waited for.
    pub(crate) fn join(&self) {
        let Some(thread) = self.joined.lock().take() else { return };
        if thread.thread().id() == std::thread::current().id() {
            return;
        }
        let _ = thread.join();
    }

    fn wake_thread(&self) {
        if let Some(tx) = self.thread.lock().as_ref() {
            let _ = tx.send(());
        }
    }

    /// Commits queued operations while the connection is free, up to `max_batches` batches.
    /// Returns false when work is left that this caller did not take on (the writer thread
    /// must be woken); true when the queue was drained or another combiner owns it.
    fn combine(&self, max_batches: usize) -> bool {
        let mut batches = 0;
        loop {
            let Some(conn) = self.conn.try_lock() else { return true };
            batches += self.commit_queued(conn.as_ref(), max_batches - batches);
            drop(conn);
            // An operation queued while this thread held the connection was left to it:
            // look again now that it is released.
            if self.queued.lock().ops.is_empty() {
                return true;
            }
            if batches >= max_batches {
                return false;
            }
        }
    }

    /// Commits queued batches until the queue is empty or `max_batches` were committed;
    /// returns how many were.
    fn commit_queued(&self, conn: Option<&Connection>, max_batches: usize) -> usize {
        let mut batches = 0;
        while batches < max_batches {
            let mut batch = self.take_batch();
            if batch.is_empty() {
                break;
            }
            batches += 1;
            self.commit(conn, &mut batch);
        }
        batches
    }

    fn take_batch(&self) -> Vec<Box<dyn WriteOp>> {
        self.take(MAX_BATCH)
    }

    fn take(&self, max: usize) -> Vec<Box<dyn WriteOp>> {
        let mut q = self.queued.lock();
        let n = q.ops.len().min(max);
        q.taken += n as u64;
        q.ops.drain(..n).collect()
    }

    fn commit(&self, conn: Option<&Connection>, batch: &mut Vec<Box<dyn WriteOp>>) {
        match conn {
            Some(conn) => commit_batch(conn, batch, &self.hub),
            None => {
                for op in batch.drain(..) {
                    op.finish(&Err(closed()));
                }
            }
        }
    }

    /// The writer thread: commits whatever is queued each time it is woken, and on shutdown
    /// commits the rest, refuses what comes later and closes the connection with a
    /// checkpoint that leaves a self-contained database file.
    fn thread_loop(&self, rx: mpsc::Receiver<()>, ckpt: Checkpointer) {
        while rx.recv().is_ok() {
            self.drain_blocking();
        }
        self.drain_blocking();
        let conn = self.conn.lock().take();
        for op in self.queued.lock().ops.drain(..) {
            op.finish(&Err(closed()));
        }
        if let Some(conn) = conn {
            ckpt.close(conn);
        }
    }

    fn drain_blocking(&self) {
        loop {
            self.commit_queued(self.conn.lock().as_ref(), usize::MAX);
            if self.queued.lock().ops.is_empty() {
                return;
            }
        }
    }
}
