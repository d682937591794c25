//! Pooled connections with explicit transactions that can be pipelined.
//!
//! `BEGIN` is sent alongside a transaction's first statement and `COMMIT` alongside its last
//! writes, so a short transaction costs as few round trips as possible. A connection dropped
//! while a transaction is open (an error path, or a caller that cancelled the future) is taken
//! out of the pool and closed rather than handed to the next caller mid-transaction.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use deadpool_postgres::{Object, Pool};
use flexiq_core::{Error, Result};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Statement};
use uuid::Uuid;

use crate::busy::{Busy, Entry};
use crate::error;

/// The text of [`GENERIC_SETTINGS`], for the `BEGIN` strings built at compile time.
macro_rules! generic_settings {
    () => {
        "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)"
    };
}

/// The settings of a transaction whose statements run on the generic plan their prepared
/// statement caches instead of being planned again for each execution's parameters: for large
/// statements that take longer to plan than to run and whose plan does not depend on the
/// parameter values. Sequential scans are off while such a plan is made: these statements
/// find every row through an index, and a plan made when the tables were new and nearly empty
/// (their statistics say so until the first `ANALYZE`) would otherwise scan the jobs table for
/// each claimed job, and keep doing so for the connection's life. One statement, so that it can
/// also be sent prepared.
pub(crate) const GENERIC_SETTINGS: &str = generic_settings!();

/// A pooled connection that knows whether it is inside a transaction.
pub(crate) struct Conn {
    obj: Option<Object>,
    in_tx: AtomicBool,
    /// Its entry among the store's checked-out connections, for closing to cancel.
    _busy: Option<Entry>,
}

impl Conn {
    pub(crate) async fn get(pool: &Pool) -> Result<Conn> {
        let obj = pool.get().await.map_err(error::pool)?;
        Ok(Conn { obj: Some(obj), in_tx: AtomicBool::new(false), _busy: None })
    }

    /// A connection of `pool` recorded in `busy` while it is checked out.
    pub(crate) async fn get_busy(pool: &Pool, busy: &Arc<Busy>) -> Result<Conn> {
        let obj = pool.get().await.map_err(error::pool)?;
        let entry = busy.enter(obj.cancel_token());
        Ok(Conn { obj: Some(obj), in_tx: AtomicBool::new(false), _busy: Some(entry) })
    }

    fn client(&self) -> &Object {
        self.obj.as_ref().expect("connection present until drop")
    }

    /// Prepares (or reuses) a statement on this connection.
    pub(crate) async fn prep(&self, what: &str, sql: &str) -> Result<Statement> {
        self.client().prepare_cached(sql).await.map_err(|e| error::pg(what, e))
    }

    /// Runs a statement and returns its rows.
    pub(crate) async fn rows(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>> {
        let st = self.prep(what, sql).await?;
        self.client().query(&st, params).await.map_err(|e| error::pg(what, e))
    }

    /// Runs a statement and returns how many rows it touched.
    pub(crate) async fn exec(&self, what: &str, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let st = self.prep(what, sql).await?;
        self.client().execute(&st, params).await.map_err(|e| error::pg(what, e))
    }

    /// Runs a statement expected to return at most one row.
    pub(crate) async fn opt(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>> {
        Ok(self.rows(what, sql, params).await?.into_iter().next())
    }

    /// Sends `BEGIN` (call it in the same `join!` as the first statement to pipeline them).
    pub(crate) async fn begin(&self) -> Result<()> {
        self.begin_as("BEGIN").await
    }

    /// Sends `sql`, a `BEGIN` and the settings of the transaction it opens.
    async fn begin_as(&self, sql: &str) -> Result<()> {
        self.in_tx.store(true, Ordering::Relaxed);
        self.client().batch_execute(sql).await.map_err(|e| error::pg("begin", e))
    }

    /// Sends `BEGIN` for a transaction whose commit need not wait for the WAL flush: its
    /// effects are visible at once and become durable with the next flushed commit, and a
    /// crash in between forgets them. Only for writes that are safe to forget (claims and
    /// lease extensions: a forgotten claim leaves the job claimable, and the worker's fenced
    /// ack then reports `Superseded`).
    pub(crate) async fn begin_relaxed(&self) -> Result<()> {
        self.begin_as("BEGIN; SET LOCAL synchronous_commit TO off").await
    }

    /// Like [`Conn::begin_relaxed`], and the transaction's statements run on the generic plan
    /// their prepared statement caches (see [`GENERIC_SETTINGS`]).
    pub(crate) async fn begin_relaxed_generic(&self) -> Result<()> {
        self.begin_as(concat!("BEGIN; SET LOCAL synchronous_commit TO off; ", generic_settings!())).await
    }

    /// Sends `BEGIN` for a transaction whose statements run on their cached generic plans
    /// (see [`GENERIC_SETTINGS`]) and whose commit waits for the WAL flush.
    pub(crate) async fn begin_generic(&self) -> Result<()> {
        self.begin_as(concat!("BEGIN; ", generic_settings!())).await
    }

    /// Sends `COMMIT`.
    pub(crate) async fn commit(&self) -> Result<()> {
        self.client().batch_execute("COMMIT").await.map_err(|e| error::pg("commit", e))?;
        self.in_tx.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Rolls back after a failure; a connection that cannot roll back is discarded on drop.
    pub(crate) async fn rollback(&self) {
        if self.in_tx.load(Ordering::Relaxed) && self.client().batch_execute("ROLLBACK").await.is_ok() {
            self.in_tx.store(false, Ordering::Relaxed);
        }
    }

    /// Runs `body` inside a transaction: commits when it returns `Ok` (unless it already
    /// committed), rolls back otherwise.
    pub(crate) async fn tx<T>(&self, body: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        if !self.in_tx.load(Ordering::Relaxed) {
            self.begin().await?;
        }
        self.tx_lazy(body).await
    }

    /// Like [`Conn::tx`], but `body` sends `BEGIN` itself (pipelined with its first statement).
    pub(crate) async fn tx_lazy<T>(&self, body: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        match body.await {
            Ok(v) => {
                if self.in_tx.load(Ordering::Relaxed) {
                    if let Err(e) = self.commit().await {
                        self.rollback().await;
                        return Err(e);
                    }
                }
                Ok(v)
            }
            Err(e) => {
                self.rollback().await;
                Err(e)
            }
        }
    }
}

/// One statement of a [`Conn::flight`].
pub(crate) struct Stmt<'a> {
    pub(crate) what: &'static str,
    pub(crate) sql: String,
    pub(crate) params: Vec<&'a (dyn ToSql + Sync)>,
}

impl<'a> Stmt<'a> {
    pub(crate) fn new(what: &'static str, sql: String, params: Vec<&'a (dyn ToSql + Sync)>) -> Stmt<'a> {
        Stmt { what, sql, params }
    }
}

/// Where a flight stands in its transaction.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bracket {
    /// Opens the transaction before its statements.
    Begin,
    /// Runs inside the open transaction.
    Inside,
    /// Commits the open transaction after its statements.
    Commit,
    /// Opens a transaction before its statements and commits it after them.
    Whole,
}

impl Conn {
    /// Sends `stmts` to the server in order without waiting for each reply (one round trip for
    /// all of them), with `BEGIN` before or `COMMIT` after as `bracket` says, and returns each
    /// statement's rows in order, or the first statement's error.
    ///
    /// Every statement is prepared first, so each request goes out on its future's first poll,
    /// and the futures are first polled in order: the server runs them in exactly that order.
    /// When a statement fails, the server refuses the rest of the transaction and turns a
    /// pipelined `COMMIT` into a rollback, so a failed flight never commits part of itself.
    pub(crate) async fn flight(&self, bracket: Bracket, stmts: &[Stmt<'_>]) -> Result<Vec<Vec<Row>>> {
        use std::future::Future;
        use std::pin::Pin;
        use std::task::Poll;
        type Step<'f> = Pin<Box<dyn Future<Output = Result<Vec<Row>>> + Send + 'f>>;
        let prepared = futures::future::try_join_all(stmts.iter().map(|s| self.prep(s.what, &s.sql))).await?;
        let mut steps: Vec<Step<'_>> = Vec::with_capacity(stmts.len() + 1);
        if matches!(bracket, Bracket::Begin | Bracket::Whole) {
            steps.push(Box::pin(async { self.begin().await.map(|_| Vec::new()) }));
        }
        for (s, st) in stmts.iter().zip(&prepared) {
            steps.push(Box::pin(async move {
                self.client().query(st, &s.params).await.map_err(|e| error::pg(s.what, e))
            }));
        }
        if matches!(bracket, Bracket::Commit | Bracket::Whole) {
            steps.push(Box::pin(async { self.commit().await.map(|_| Vec::new()) }));
        }
        let mut done: Vec<Option<Result<Vec<Row>>>> = (0..steps.len()).map(|_| None).collect();
        futures::future::poll_fn(|cx| {
            let mut pending = false;
            for (step, out) in steps.iter_mut().zip(done.iter_mut()) {
                if out.is_none() {
                    match step.as_mut().poll(cx) {
                        Poll::Ready(r) => *out = Some(r),
                        Poll::Pending => pending = true,
                    }
                }
            }
            if pending {
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        })
        .await;
        let mut out = Vec::with_capacity(stmts.len());
        let skip = usize::from(matches!(bracket, Bracket::Begin | Bracket::Whole));
        for (i, r) in done.into_iter().enumerate() {
            let rows = r.expect("every step finished")?;
            if i >= skip && out.len() < stmts.len() {
                out.push(rows);
            }
        }
        Ok(out)
    }
}

impl Deref for Conn {
    type Target = tokio_postgres::Client;
    fn deref(&self) -> &tokio_postgres::Client {
        self.client()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if self.in_tx.load(Ordering::Relaxed) {
            if let Some(obj) = self.obj.take() {
                // Never hand a connection with an open transaction back to the pool.
                drop(Object::take(obj));
            }
        }
    }
}

/// Parses a job id into the stored UUID.
pub(crate) fn uid(id: &flexiq_core::JobId) -> Result<Uuid> {
    Uuid::parse_str(id.as_str())
        .map_err(|_| Error::invalid(format!("job id {:?} is not a UUID", id.as_str())))
}

/// The job id of a stored UUID.
pub(crate) fn jid(u: Uuid) -> flexiq_core::JobId {
    flexiq_core::JobId::from_trusted(u.hyphenated().to_string())
}

/// Converts an unsigned count or duration into the signed column type, refusing overflow.
pub(crate) fn i64_of(what: &str, v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::invalid(format!("{what} {v} is too large")))
}
