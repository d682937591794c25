//! One group commit: the transaction a batch of write operations shares.
//!
//! Every write is a closure queued for the write connection (see `group_commit` for which
//! thread runs it). A batch of queued operations becomes
//! one `BEGIN IMMEDIATE` transaction, runs each operation inside its own `SAVEPOINT` (so one
//! failing operation rolls back alone and does not poison the others), commits once, and only
//! then replies to every waiter. Queue counters (`queue_counts`) are accumulated in memory as
//! deltas and written once per batch, so a batch of many single enqueues costs one counter
//! write per queue instead of one per job.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use flexiq_core::{Error, JobStatus, Result};
use rusqlite::{Connection, OptionalExtension};
use tokio::sync::oneshot;

use crate::error::SqlResultExt;
use crate::wake::Hub;

/// One counter change: (namespace, queue, status code) and the delta.
type Delta = ((String, String, u8), i64);

/// One `task_metrics` row waiting to be written with the batch.
pub(crate) struct MetricInsert {
    /// Namespace.
    pub(crate) ns: String,
    /// The job.
    pub(crate) job_id: String,
    /// Its task.
    pub(crate) task: String,
    /// Its queue.
    pub(crate) queue: String,
    /// The attempt that ended.
    pub(crate) attempt: u32,
    /// Whether it succeeded.
    pub(crate) success: bool,
    /// Wall time of the attempt (ms).
    pub(crate) duration_ms: i64,
    /// When it ended (Unix ms).
    pub(crate) recorded_at: i64,
}

impl MetricInsert {
    /// The metric row of the attempt of `st` that ended at `now`.
    pub(crate) fn ended(ns: &str, st: &crate::row::Loaded, success: bool, now: i64) -> MetricInsert {
        MetricInsert {
            ns: ns.to_string(),
            job_id: st.id.clone(),
            task: st.task.clone(),
            queue: st.queue.clone(),
            attempt: st.attempt,
            success,
            duration_ms: st.started_at.map(|s| (now - s).max(0)).unwrap_or(0),
            recorded_at: now,
        }
    }
}

/// Metric rows per multi-row INSERT.
const METRICS_PER_INSERT: usize = 32;

/// Side effects of one operation, kept apart until it succeeds.
#[derive(Default)]
struct Effects {
    deltas: Vec<Delta>,
    wake: bool,
    changed: Vec<String>,
    metrics: Vec<MetricInsert>,
}

impl Effects {
    fn add(&mut self, ns: &str, queue: &str, status: u8, n: i64) {
        if let Some(d) = self.deltas.iter_mut().find(|((a, b, c), _)| a == ns && b == queue && *c == status) {
            d.1 += n;
        } else {
            self.deltas.push(((ns.to_string(), queue.to_string(), status), n));
        }
    }

    fn absorb(&mut self, other: &mut Effects) {
        for ((ns, q, s), n) in other.deltas.drain(..) {
            self.add(&ns, &q, s, n);
        }
        self.wake |= other.wake;
        self.changed.append(&mut other.changed);
        self.metrics.append(&mut other.metrics);
    }

    fn clear(&mut self) {
        self.deltas.clear();
        self.wake = false;
        self.changed.clear();
        self.metrics.clear();
    }

    fn dirty(&self) -> bool {
        !self.deltas.is_empty() || !self.metrics.is_empty()
    }
}

/// What an operation sees while it runs on the writer thread.
pub(crate) struct WriteCtx<'c> {
    /// The write connection, inside the batch's transaction.
    pub(crate) conn: &'c Connection,
    op: Effects,
    batch: Effects,
    track_jobs: bool,
}

impl WriteCtx<'_> {
    /// Records a counter change for (namespace, queue, status).
    pub(crate) fn count_delta(&mut self, ns: &str, queue: &str, status: JobStatus, n: i64) {
        self.op.add(ns, queue, status.code(), n);
    }

    /// The count of (namespace, queue, status) as this operation sees it. Only valid in an
    /// operation queued with `needs_counts`.
    pub(crate) fn count(&self, ns: &str, queue: &str, status: JobStatus) -> Result<i64> {
        let stored: i64 = self
            .conn
            .prepare_cached("SELECT n FROM queue_counts WHERE ns = ?1 AND queue = ?2 AND status = ?3")
            .db()?
            .query_row((ns, queue, status.code()), |r| r.get(0))
            .optional()
            .db()?
            .unwrap_or(0);
        let pending: i64 = self
            .op
            .deltas
            .iter()
            .filter(|((a, b, c), _)| a == ns && b == queue && *c == status.code())
            .map(|(_, n)| *n)
            .sum();
        Ok(stored + pending)
    }

    /// Drops every counter of (namespace, queue): its stored rows and this operation's changes
    /// to them not yet written. Only valid in an operation queued with `needs_counts`, so the
    /// batch's earlier changes were written before it ran and none is left to bring a row back.
    pub(crate) fn forget_queue_counts(&mut self, ns: &str, queue: &str) -> Result<()> {
        self.op.deltas.retain(|((a, b, _), _)| !(a == ns && b == queue));
        self.conn
            .prepare_cached("DELETE FROM queue_counts WHERE ns = ?1 AND queue = ?2")
            .db()?
            .execute((ns, queue))
            .db()?;
        Ok(())
    }

    /// Queues a `task_metrics` row; rows are written in bulk before the batch commits.
    pub(crate) fn record_metric(&mut self, row: MetricInsert) {
        self.op.metrics.push(row);
    }

    /// Marks that work may have become claimable (waiting claimers are woken after commit).
    pub(crate) fn wake_work(&mut self) {
        self.op.wake = true;
    }

    /// Notes that a job changed (its waiters are woken after commit).
    pub(crate) fn job_changed(&mut self, id: &str) {
        if self.track_jobs {
            self.op.changed.push(id.to_string());
        }
    }

    /// Runs `f` inside a nested savepoint of this operation: when `f` fails, its writes and
    /// its side effects (counter changes, wake-ups, changed jobs, metric rows) are undone and
    /// the operation goes on, so one part of an operation can fail alone (a scheduler whose
    /// slot's enqueue is refused, while the round's other schedulers fire).
    pub(crate) fn savepoint<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        exec(self.conn, "SAVEPOINT part")?;
        let (deltas, wake) = (self.op.deltas.clone(), self.op.wake);
        let (changed, metrics) = (self.op.changed.len(), self.op.metrics.len());
        let out = f(self);
        if out.is_err() {
            exec(self.conn, "ROLLBACK TO part")?;
            self.op.deltas = deltas;
            self.op.wake = wake;
            self.op.changed.truncate(changed);
            self.op.metrics.truncate(metrics);
        }
        exec(self.conn, "RELEASE part")?;
        out
    }

    fn flush_metrics(&mut self) -> Result<()> {
        let rows = std::mem::take(&mut self.batch.metrics);
        for chunk in rows.chunks(METRICS_PER_INSERT) {
            let mut sql = String::from(
                "INSERT INTO task_metrics (ns, job_id, task, queue, attempt, success, duration_ms, recorded_at) VALUES ",
            );
            for i in 0..chunk.len() {
                sql.push_str(if i == 0 { "(?, ?, ?, ?, ?, ?, ?, ?)" } else { ", (?, ?, ?, ?, ?, ?, ?, ?)" });
            }
            let mut stmt = self.conn.prepare_cached(&sql).db()?;
            let mut i = 0;
            let mut bind = |v: &dyn rusqlite::ToSql| -> Result<()> {
                i += 1;
                stmt.raw_bind_parameter(i, v).db()
            };
            for m in chunk {
                bind(&m.ns)?;
                bind(&m.job_id)?;
                bind(&m.task)?;
                bind(&m.queue)?;
                bind(&m.attempt)?;
                bind(&m.success)?;
                bind(&m.duration_ms)?;
                bind(&m.recorded_at)?;
            }
            stmt.raw_execute().db()?;
        }
        Ok(())
    }

    /// Writes the batch's buffered counters and metric rows.
    fn flush(&mut self) -> Result<()> {
        self.flush_counts()?;
        self.flush_metrics()
    }

    fn flush_counts(&mut self) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "INSERT INTO queue_counts (ns, queue, status, n) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (ns, queue, status) DO UPDATE SET n = n + excluded.n",
            )
            .db()?;
        for ((ns, q, s), n) in self.batch.deltas.drain(..) {
            if n != 0 {
                stmt.execute((ns, q, s, n)).db()?;
            }
        }
        Ok(())
    }
}

/// An operation queued for the writer.
pub(crate) trait WriteOp: Send {
    /// Whether it reads state the batch buffers (`queue_counts`, `task_metrics`): the batch's
    /// earlier buffered writes are flushed first.
    fn needs_counts(&self) -> bool;
    /// Runs it; false when it failed and must be rolled back.
    fn run(&mut self, ctx: &mut WriteCtx<'_>) -> bool;
    /// Replies to the caller once the batch's fate is known.
    fn finish(self: Box<Self>, commit: &Result<()>);
}

/// A closure and the channel its caller awaits.
pub(crate) struct Op<T, F> {
    f: Option<F>,
    needs_counts: bool,
    out: Option<Result<T>>,
    tx: Option<oneshot::Sender<Result<T>>>,
}

impl<T, F> Op<T, F> {
    /// Wraps `f`; the reply goes to `tx`.
    pub(crate) fn new(f: F, needs_counts: bool, tx: oneshot::Sender<Result<T>>) -> Self {
        Op { f: Some(f), needs_counts, out: None, tx: Some(tx) }
    }
}

impl<T, F> WriteOp for Op<T, F>
where
    T: Send,
    F: FnOnce(&mut WriteCtx<'_>) -> Result<T> + Send,
{
    fn needs_counts(&self) -> bool {
        self.needs_counts
    }

    fn run(&mut self, ctx: &mut WriteCtx<'_>) -> bool {
        let Some(f) = self.f.take() else { return false };
        let out = catch_unwind(AssertUnwindSafe(|| f(ctx)))
            .unwrap_or_else(|_| Err(Error::backend("sqlite write operation panicked")));
        let ok = out.is_ok();
        self.out = Some(out);
        ok
    }

    fn finish(mut self: Box<Self>, commit: &Result<()>) {
        let reply = match (commit, self.out.take()) {
            (Err(e), None | Some(Ok(_))) => Err(e.clone()),
            (_, Some(out)) => out,
            (Ok(()), None) => Err(Error::backend("sqlite write operation did not run")),
        };
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(reply);
        }
    }
}

/// What a committed batch tells the waiters.
#[derive(Default)]
struct Committed {
    /// The wake generation it bumped, when it made work claimable.
    gen: Option<i64>,
    /// The newest event id of the file, when a reader was blocked on the events stream.
    events_seq: Option<i64>,
}

/// Commits `batch` as one transaction, then wakes waiters and replies to every operation.
pub(crate) fn commit_batch(conn: &Connection, batch: &mut Vec<Box<dyn WriteOp>>, hub: &Hub) {
    let begun = exec(conn, "BEGIN IMMEDIATE");
    commit_begun(conn, batch, hub, begun);
}

/// Like [`commit_batch`], but without waiting for the write lock: when another connection
/// (another process) holds it, returns false at once with `batch` untouched and nothing
/// written. The connection's busy timeout (`busy_timeout`) is restored once the lock is held.
pub(crate) fn try_commit_batch(
    conn: &Connection,
    batch: &mut Vec<Box<dyn WriteOp>>,
    hub: &Hub,
    busy_timeout: Duration,
) -> bool {
    let _ = conn.busy_timeout(Duration::ZERO);
    let begun = conn.prepare_cached("BEGIN IMMEDIATE").and_then(|mut s| s.execute([]));
    let _ = conn.busy_timeout(busy_timeout);
    match begun {
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::DatabaseBusy => false,
        begun => {
            commit_begun(conn, batch, hub, begun.map(drop).db());
            true
        }
    }
}

/// Runs `batch` in the transaction `begun` opened (or answers every operation with the
/// error that kept it from opening) and replies to each.
fn commit_begun(conn: &Connection, batch: &mut Vec<Box<dyn WriteOp>>, hub: &Hub, begun: Result<()>) {
    let track_jobs = hub.has_job_waiters();
    let mut ctx = WriteCtx { conn, op: Effects::default(), batch: Effects::default(), track_jobs };
    let outcome = begun.and_then(|()| run_batch(&mut ctx, batch, hub));
    let effects = std::mem::take(&mut ctx.batch);
    if let Ok(Some(Committed { gen: Some(gen), .. })) = outcome {
        hub.set_own_gen(gen);
    }
    if let Ok(Some(Committed { events_seq: Some(seq), .. })) = outcome {
        hub.saw_events(seq);
    }
    let commit = outcome.map(|_| ());
    if commit.is_ok() {
        if effects.wake {
            hub.bump_work();
        }
        if !effects.changed.is_empty() {
            hub.notify_jobs(&effects.changed);
        }
    }
    for op in batch.drain(..) {
        op.finish(&commit);
    }
}

fn exec(conn: &Connection, sql: &str) -> Result<()> {
    conn.prepare_cached(sql).db()?.execute([]).db()?;
    Ok(())
}

/// Runs the batch in the open transaction and commits it; `Ok(None)` when its single
/// operation failed and was rolled back.
fn run_batch(ctx: &mut WriteCtx<'_>, batch: &mut [Box<dyn WriteOp>], hub: &Hub) -> Result<Option<Committed>> {
    let conn = ctx.conn;
    let single = batch.len() == 1;
    let body = (|| {
        for op in batch.iter_mut() {
            if op.needs_counts() && ctx.batch.dirty() {
                ctx.flush()?;
            }
            if !single {
                exec(conn, "SAVEPOINT op")?;
            }
            if op.run(ctx) {
                let mut done = std::mem::take(&mut ctx.op);
                ctx.batch.absorb(&mut done);
                if !single {
                    exec(conn, "RELEASE op")?;
                }
            } else {
                ctx.op.clear();
                if single {
                    exec(conn, "ROLLBACK")?;
                    return Ok(None);
                }
                exec(conn, "ROLLBACK TO op")?;
                exec(conn, "RELEASE op")?;
            }
        }
        ctx.flush()?;
        let mut done = Committed::default();
        if ctx.batch.wake {
            done.gen = Some(crate::wake::bump_gen(conn)?);
        }
        // Read inside the transaction, where it costs no lock of its own; a reader that
        // registers after this look is woken by the watcher instead.
        if hub.has_event_waiters() {
            done.events_seq = crate::wake::events_seq(conn);
        }
        exec(conn, "COMMIT")?;
        Ok(Some(done))
    })();
    match body {
        Ok(done) => Ok(done),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            ctx.batch.clear();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revoked(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM revoked_tasks", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_failed_savepoint_undoes_its_writes_and_effects_and_keeps_the_operations_own() {
        let conn = Connection::open_in_memory().unwrap();
        crate::schema::migrate(&conn).unwrap();
        exec(&conn, "BEGIN IMMEDIATE").unwrap();
        let mut ctx =
            WriteCtx { conn: &conn, op: Effects::default(), batch: Effects::default(), track_jobs: true };
        ctx.count_delta("ns", "q", JobStatus::Pending, 1);
        let failed: Result<()> = ctx.savepoint(|ctx| {
            ctx.conn.execute("INSERT INTO revoked_tasks (ns, task) VALUES ('ns', 'a')", []).unwrap();
            ctx.count_delta("ns", "q", JobStatus::Pending, 5);
            ctx.count_delta("ns", "other", JobStatus::Pending, 1);
            ctx.wake_work();
            ctx.job_changed("j1");
            Err(Error::invalid("refused"))
        });
        assert_eq!(failed.unwrap_err().code(), "INVALID_ARGUMENT");
        assert_eq!(revoked(&conn), 0, "the savepoint's row is rolled back");
        assert_eq!(ctx.op.deltas, vec![(("ns".to_string(), "q".to_string(), 0), 1)]);
        assert!(!ctx.op.wake && ctx.op.changed.is_empty());

        ctx.savepoint(|ctx| {
            ctx.conn.execute("INSERT INTO revoked_tasks (ns, task) VALUES ('ns', 'b')", []).unwrap();
            ctx.count_delta("ns", "q", JobStatus::Pending, 2);
            ctx.wake_work();
            Ok(())
        })
        .unwrap();
        assert_eq!(revoked(&conn), 1, "a savepoint that succeeds keeps its row");
        assert_eq!(ctx.count("ns", "q", JobStatus::Pending).unwrap(), 3);
        assert!(ctx.op.wake);
        exec(&conn, "COMMIT").unwrap();
    }
}
