//! The store handle: opening a file, the writer thread, the reader pool, namespaces and close.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use flexiq_core::options::validate_name;
use flexiq_core::{Error, Result};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use crate::checkpoint;
use crate::error::{closed, SqlResultExt};
use crate::group_commit::{GroupCommit, Inline, Ticket};
use crate::options::{Durability, SqliteOptions};
use crate::readers::{self, ReadJob};
use crate::schema;
use crate::wake::{self, Hub};
use crate::wal_vfs;
use crate::writer::{Op, WriteCtx, WriteOp};

/// Threads and connections of one open file, shared by every handle and namespace on it.
pub(crate) struct Core {
    path: PathBuf,
    writer: Arc<GroupCommit>,
    readers: Mutex<Option<mpsc::Sender<ReadJob>>>,
    /// The reader threads and the watcher thread, each owning a connection.
    threads: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) hub: Arc<Hub>,
    handles: AtomicUsize,
}

impl Core {
    /// Gives back one handle; true when it was the last one open.
    fn release_handle(&self) -> bool {
        self.handles.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// Ends every thread and closes every connection, blocking until done: readers and the
    /// watcher first, so that the write connection, closing last, checkpoints the WAL into the
    /// database file and truncates it (see `checkpoint`). Idempotent.
    fn finish(&self) {
        self.readers.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.hub.stop();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|p| p.into_inner()));
        let me = std::thread::current().id();
        for t in threads {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
        self.writer.shutdown();
        self.writer.join();
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        self.finish();
    }
}

/// [`Core::finish`] on a thread of its own, awaited without blocking the caller's executor.
async fn finish_off_thread(core: Arc<Core>) -> Result<()> {
    let (tx, rx) = oneshot::channel();
    let spawned = std::thread::Builder::new().name("flexiq-sqlite-close".into()).spawn({
        let core = core.clone();
        move || {
            core.finish();
            let _ = tx.send(());
        }
    });
    match spawned {
        Ok(_) => rx.await.map_err(|_| Error::backend("sqlite close thread ended without finishing")),
        Err(_) => {
            // No thread to spare: finish here, blocking.
            core.finish();
            Ok(())
        }
    }
}

struct Handle {
    core: Arc<Core>,
    ns: Arc<str>,
    closed: AtomicBool,
    seen_gen: AtomicU64,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if !self.closed.swap(true, Ordering::AcqRel) && self.core.release_handle() {
            self.core.finish();
        }
    }
}

/// A flexiq store on one SQLite file, scoped to a namespace.
///
/// Cheap to clone (clones share the handle). All handles on a file opened through
/// [`SqliteStore::open`] and [`SqliteStore::with_namespace`] share one writer thread, one
/// reader pool and one wake-up watcher. When the last of them is closed (or its last clone
/// dropped, which then blocks until done), the threads end, the connections close and the WAL
/// is checkpointed into the database file and truncated.
#[derive(Clone)]
pub struct SqliteStore {
    h: Arc<Handle>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.h.core.path)
            .field("namespace", &&*self.h.ns)
            .finish()
    }
}

fn refuse_memory(path: &Path) -> Result<()> {
    let s = path.to_string_lossy();
    if s.is_empty() || s == ":memory:" || s.starts_with("file::memory:") || s.contains("mode=memory") {
        return Err(Error::invalid(format!(
            "sqlite path {s:?} is an in-memory database: give a file so worker processes can share it"
        )));
    }
    Ok(())
}

/// Page cache of the write connection (KiB).
const WRITER_CACHE_KIB: u32 = 4_096;
/// Page cache of each read connection (KiB).
const READER_CACHE_KIB: u32 = 65_536;

/// Size the WAL file is truncated back to after a checkpoint resets it (bytes).
const WAL_SIZE_LIMIT_BYTES: u64 = 64 << 20;

/// Opens one connection; `create` is set for the write connection only.
fn connect(path: &Path, opts: &SqliteOptions, create: bool) -> Result<Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    // The write connection appends each commit's WAL frames in one write (see `wal_vfs`).
    let opened = if create {
        Connection::open_with_flags_and_vfs(path, flags, wal_vfs::name()?)
    } else {
        Connection::open_with_flags(path, flags)
    };
    let conn =
        opened.map_err(|e| Error::backend(format!("cannot open sqlite file {}: {e}", path.display())))?;
    conn.busy_timeout(Duration::from_millis(opts.busy_timeout_ms)).db()?;
    conn.set_prepared_statement_cache_capacity(256);
    // Cached statements have their bindings cleared when returned to the cache, and SQLite
    // re-prepares (re-parses) any statement whose plan looked at a bound value: with the
    // query planner stability guarantee on, plans never depend on bound values, so the hot
    // statements are parsed once per connection instead of once per use.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true).db()?;
    // Readers get a large page cache. The writer's stays small: SQLite scans its whole cache
    // hash at the end of every write transaction, so a large one costs every commit.
    let cache_kib = if create { WRITER_CACHE_KIB } else { READER_CACHE_KIB };
    conn.execute_batch(&format!("PRAGMA temp_store = MEMORY; PRAGMA cache_size = -{cache_kib};")).db()?;
    if create {
        // The WAL file is reused after each checkpoint (see `checkpoint`), and cut back to the
        // limit if it ever grew past it.
        conn.execute_batch(&format!("PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES};")).db()?;
    }
    Ok(conn)
}

impl SqliteStore {
    /// Opens (creating if needed) the SQLite file at `path`: WAL mode, the durability setting,
    /// migrations when `auto_migrate`, then starts the writer thread, `read_connections` reader
    /// threads and the wake-up watcher. Needs no running tokio runtime; the async methods run
    /// on tokio. In-memory databases are refused. Fails with `ContractTooOld` when the file's
    /// contract floor is above this build's level. With `auto_migrate` off no DDL runs: an
    /// unmigrated file opens, and its queries fail with `Conflict` until `migrate()` has run.
    pub fn open(path: impl AsRef<Path>, opts: SqliteOptions) -> Result<SqliteStore> {
        opts.validate()?;
        let path = path.as_ref();
        refuse_memory(path)?;
        let mut conn = connect(path, &opts, true)?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).db()?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::backend(format!(
                "sqlite file {} refused WAL journal mode (got {mode})",
                path.display()
            )));
        }
        conn.execute_batch(&format!("PRAGMA synchronous = {}", opts.durability.pragma_value())).db()?;
        if opts.auto_migrate {
            schema::migrate(&conn)?;
        }
        schema::verify(&conn, path, false)?;
        let ckpt_conn = connect(path, &opts, false)?;
        ckpt_conn.execute_batch(&format!("PRAGMA synchronous = {}", opts.durability.pragma_value())).db()?;
        let ckpt = checkpoint::install(&mut conn, ckpt_conn, path.to_path_buf(), opts.busy_timeout_ms)?;
        let mut read_conns = Vec::with_capacity(opts.read_connections);
        for _ in 0..opts.read_connections {
            let c = connect(path, &opts, false)?;
            c.execute_batch("PRAGMA query_only = 1").db()?;
            read_conns.push(c);
        }
        let watch_conn = connect(path, &opts, false)?;
        let hub = Arc::new(Hub::new());
        let spawn_err = |e: std::io::Error| Error::backend(format!("cannot start sqlite threads: {e}"));
        let (read_tx, mut threads) = readers::spawn(read_conns).map_err(spawn_err)?;
        let no_fsync = opts.durability == Durability::Normal;
        let busy = Duration::from_millis(opts.busy_timeout_ms);
        let writer = GroupCommit::start(conn, ckpt, hub.clone(), no_fsync, busy).map_err(spawn_err)?;
        let core = Arc::new(Core {
            path: path.to_path_buf(),
            writer,
            readers: Mutex::new(Some(read_tx)),
            threads: Mutex::new(Vec::new()),
            hub: hub.clone(),
            handles: AtomicUsize::new(0),
        });
        // From here on, a failure drops `core`, which ends the threads already started.
        threads.push(wake::spawn_watcher(watch_conn, hub).map_err(spawn_err)?);
        *core.threads.lock().unwrap_or_else(|p| p.into_inner()) = threads;
        Ok(SqliteStore::from_core(core, &opts.namespace))
    }

    fn from_core(core: Arc<Core>, ns: &str) -> SqliteStore {
        core.handles.fetch_add(1, Ordering::AcqRel);
        let gen = core.hub.work_gen();
        SqliteStore {
            h: Arc::new(Handle {
                core,
                ns: Arc::from(ns),
                closed: AtomicBool::new(false),
                seen_gen: AtomicU64::new(gen),
            }),
        }
    }

    /// A handle on the same file scoped to namespace `ns`, sharing this handle's writer thread
    /// and readers. `Closed` when this handle was closed.
    pub fn with_namespace(&self, ns: &str) -> Result<SqliteStore> {
        validate_name("namespace", ns)?;
        self.check_open()?;
        Ok(SqliteStore::from_core(self.h.core.clone(), ns))
    }

    /// The durability the writer connection runs with, read back from `PRAGMA synchronous`.
    pub async fn durability(&self) -> Result<Durability> {
        let level: i64 =
            self.write(false, |ctx| ctx.conn.query_row("PRAGMA synchronous", [], |r| r.get(0)).db()).await?;
        Ok(if level >= 2 { Durability::Full } else { Durability::Normal })
    }

    /// The file this store is on.
    pub fn path(&self) -> &Path {
        &self.h.core.path
    }

    pub(crate) fn ns(&self) -> Arc<str> {
        self.h.ns.clone()
    }

    pub(crate) fn hub(&self) -> &Hub {
        &self.h.core.hub
    }

    /// The last work generation this handle returned from a wait at, swapped for `gen`.
    pub(crate) fn swap_seen_gen(&self, gen: u64) -> u64 {
        self.h.seen_gen.swap(gen, Ordering::AcqRel)
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.h.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        Ok(())
    }

    /// Runs `f` on the writer thread inside the next group commit and returns its result once
    /// committed. `needs_counts` when `f` reads `queue_counts` or
    /// `task_metrics` (rows the batch buffers until commit).
    pub(crate) async fn write<T, F>(&self, needs_counts: bool, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T> + Send + 'static,
    {
        self.write_sized(needs_counts, false, f).await
    }

    /// Like [`Self::write`], for small operations (well under a millisecond of SQLite work):
    /// committed on the calling thread when the write connection is free (on an event loop's
    /// thread, only when that needs no wait: see `group_commit`).
    pub(crate) async fn write_small<T, F>(&self, needs_counts: bool, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T> + Send + 'static,
    {
        self.write_sized(needs_counts, true, f).await
    }

    /// [`Self::write_small`] when `small`, else [`Self::write`].
    pub(crate) async fn write_sized<T, F>(&self, needs_counts: bool, small: bool, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T> + Send + 'static,
    {
        self.check_open()?;
        let inline = match (small, flexiq_core::event_loop::is_this_thread()) {
            (false, _) => Inline::No,
            (true, false) => Inline::Yes,
            (true, true) => Inline::NoWait,
        };
        let (tx, rx) = oneshot::channel();
        let op: Box<dyn WriteOp> = Box::new(Op::new(f, needs_counts, tx));
        let writer = &self.h.core.writer;
        let ticket = writer.push(op, inline)?;
        if inline != Inline::No {
            let settle = SettleOnDrop { writer, ticket, inline };
            tokio::task::yield_now().await;
            drop(settle);
        }
        rx.await.map_err(|_| closed())?
    }

    /// Runs `f` on a reader thread.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.check_open()?;
        let (tx, rx) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn| {
            let _ = tx.send(f(conn));
        });
        {
            let guard = self.h.core.readers.lock().unwrap_or_else(|p| p.into_inner());
            guard.as_ref().ok_or_else(closed)?.send(job).map_err(|_| closed())?;
        }
        rx.await.map_err(|_| closed())?
    }
}

/// Settles a queued operation even when the caller's future is dropped while yielding, so the
/// operation never waits in the queue with nobody to commit it.
struct SettleOnDrop<'a> {
    writer: &'a GroupCommit,
    ticket: Ticket,
    inline: Inline,
}

impl Drop for SettleOnDrop<'_> {
    fn drop(&mut self) {
        self.writer.settle(self.ticket, self.inline);
    }
}

#[async_trait::async_trait]
impl flexiq_core::Store for SqliteStore {
    fn namespace(&self) -> &str {
        &self.h.ns
    }

    fn backend(&self) -> &'static str {
        "sqlite"
    }

    /// Closes this handle (and its clones). Closing the last open handle on the file waits
    /// until every queued write committed, every connection closed and the WAL was
    /// checkpointed into the database file and truncated, so the `.db` file alone then holds
    /// every job (see the crate docs for when another process prevents that).
    async fn close(&self) -> Result<()> {
        if !self.h.closed.swap(true, Ordering::AcqRel) && self.h.core.release_handle() {
            finish_off_thread(self.h.core.clone()).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_paths_are_refused() {
        for p in [":memory:", "", "file::memory:?cache=shared", "file:x?mode=memory"] {
            let err = SqliteStore::open(p, SqliteOptions::default()).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT", "{p}");
        }
    }
}
