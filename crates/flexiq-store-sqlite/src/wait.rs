//! `wait_for_work` and `wait_for_job`: block on the hub's signals, the next due delayed job,
//! or the timeout, whichever comes first.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flexiq_core::{JobId, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::claim::{claimable_queues, queue_row};
use crate::error::{closed, SqlResultExt};
use crate::SqliteStore;

/// Most distinct priorities inspected per queue when looking for the next due job.
const MAX_PRIORITY_HOPS: usize = 64;

/// The next lower priority holding claimable jobs in a queue.
pub(crate) const NEXT_PRIORITY: &str = "SELECT priority FROM jobs WHERE ns = ?1 AND queue = ?2
    AND status IN (0, 6) AND priority < ?3 ORDER BY priority DESC LIMIT 1";
/// The earliest future `run_at` at one priority of a queue.
pub(crate) const NEXT_RUN_AT: &str = "SELECT MIN(run_at) FROM jobs WHERE ns = ?1 AND queue = ?2
    AND status IN (0, 6) AND priority = ?3 AND run_at > ?4";

/// The wall clock (Unix ms), for writes whose request carries no `now`.
pub(crate) fn wall_clock_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Milliseconds from `now` until something in `queues` may become claimable by time alone: the
/// earliest future `run_at` (one index seek per distinct priority) or a rate-limit refill.
pub(crate) fn next_due(conn: &Connection, ns: &str, queues: &[String], now: i64) -> Result<Option<u64>> {
    let queues = if queues.is_empty() { claimable_queues(conn, ns)? } else { queues.to_vec() };
    let mut best: Option<i64> = None;
    let mut consider = |t: i64| best = Some(best.map_or(t, |b| b.min(t)));
    for q in &queues {
        let row = queue_row(conn, ns, q)?;
        if row.paused {
            continue;
        }
        if let Some(limit) = row.rate {
            consider(now + (limit.per_ms / u64::from(limit.count)).max(1) as i64);
        }
        let mut below = i64::MAX;
        for _ in 0..MAX_PRIORITY_HOPS {
            let p: Option<i64> = conn
                .prepare_cached(NEXT_PRIORITY)
                .db()?
                .query_row((ns, q, below), |r| r.get(0))
                .optional()
                .db()?;
            let Some(p) = p else { break };
            let t: Option<i64> =
                conn.prepare_cached(NEXT_RUN_AT).db()?.query_row((ns, q, p, now), |r| r.get(0)).db()?;
            if let Some(t) = t {
                consider(t);
            }
            below = p;
        }
    }
    Ok(best.map(|t| (t - now).max(1) as u64))
}

/// See [`flexiq_core::store::JobStore::wait_for_work`].
pub(crate) async fn wait_for_work(s: &SqliteStore, queues: &[String], timeout_ms: u64) -> Result<()> {
    s.check_open()?;
    let mut rx = s.hub().subscribe_work();
    let current = *rx.borrow_and_update();
    if s.swap_seen_gen(current) != current {
        return Ok(());
    }
    let (ns, qs, now) = (s.ns(), queues.to_vec(), wall_clock_ms());
    let due = s.read(move |conn| next_due(conn, &ns, &qs, now)).await?;
    let wait = Duration::from_millis(due.map_or(timeout_ms, |d| d.min(timeout_ms)));
    tokio::select! {
        changed = rx.changed() => changed.map_err(|_| closed())?,
        _ = tokio::time::sleep(wait) => {}
    }
    s.swap_seen_gen(*rx.borrow());
    Ok(())
}

struct Unwatch<'a>(&'a SqliteStore, &'a str);

impl Drop for Unwatch<'_> {
    fn drop(&mut self) {
        self.0.hub().unwatch_job(self.1);
    }
}

/// See [`flexiq_core::store::JobStore::wait_for_job`].
pub(crate) async fn wait_for_job(s: &SqliteStore, id: &JobId, timeout_ms: u64) -> Result<()> {
    s.check_open()?;
    let notify = s.hub().watch_job(id.as_str());
    let _guard = Unwatch(s, id.as_str());
    let notified = notify.notified();
    tokio::pin!(notified);
    notified.as_mut().enable();
    let _ = tokio::time::timeout(Duration::from_millis(timeout_ms), notified).await;
    Ok(())
}
