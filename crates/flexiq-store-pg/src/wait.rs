//! `wait_for_work` and `wait_for_job`: block on the hub's notifiers with a capped timeout.
//!
//! A work wait first registers its waker, then asks the database whether work is already
//! claimable (closing the race with an enqueue that committed just before) and when the
//! earliest delayed job comes due, so it wakes for that too.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flexiq_core::{JobId, Result};

use crate::db::uid;
use crate::store::PgStore;
use crate::wake::{JOB_POLL_MS, WORK_POLL_MS};

/// Earliest `run_at` of a claimable job in unlimited, unpaused queues of the namespace, read
/// from the claim index (there is no index on `run_at` alone: it would cost every enqueue one
/// more index entry). Per eligible queue, the distinct priorities of claimable jobs are
/// walked with one seek each (a recursive loose index scan), and the first job of each
/// priority in claim order (`run_at`, then id) is that priority's earliest; the minimum over
/// them is the answer. A queue holding few distinct priorities costs a few seeks.
const NEXT_DUE: &str = "SELECT min(d.run_at) FROM {S}.queues q CROSS JOIN LATERAL ( \
      WITH RECURSIVE pr(p) AS ( \
        (SELECT j.priority FROM {S}.jobs j WHERE j.namespace = $1 AND j.queue = q.queue AND j.status IN (0, 6) \
          ORDER BY j.priority DESC LIMIT 1) \
        UNION ALL \
        SELECT (SELECT j.priority FROM {S}.jobs j WHERE j.namespace = $1 AND j.queue = q.queue \
            AND j.status IN (0, 6) AND j.priority < pr.p ORDER BY j.priority DESC LIMIT 1) \
        FROM pr WHERE pr.p IS NOT NULL) \
      SELECT (SELECT j.run_at FROM {S}.jobs j WHERE j.namespace = $1 AND j.queue = q.queue \
            AND j.status IN (0, 6) AND j.priority = pr.p \
          ORDER BY j.priority DESC, j.run_at, j.id LIMIT 1) AS run_at \
      FROM pr WHERE pr.p IS NOT NULL) AS d \
    WHERE q.namespace = $1 AND (cardinality($2::text[]) = 0 OR q.queue = ANY($2::text[])) \
      AND NOT q.paused AND q.rate_count IS NULL AND q.concurrency IS NULL";

/// The wall clock (Unix ms), for the few calls that carry no `now`.
pub(crate) fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

impl PgStore {
    pub(crate) async fn wait_work(&self, queues: &[String], timeout_ms: u64) -> Result<()> {
        self.check_open()?;
        let notify = self.shared.hub.work_notify(&self.ns);
        let notified = notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let mut wait_ms = timeout_ms.min(WORK_POLL_MS);
        if wait_ms == 0 {
            return Ok(());
        }
        let next_due: Option<i64> = {
            let c = self.conn().await?;
            let ns: &str = &self.ns;
            c.rows("wait for work", &self.sql(NEXT_DUE), &[&ns, &queues]).await?[0].get(0)
        };
        if let Some(due) = next_due {
            let until = due - wall_ms();
            if until <= 0 {
                return Ok(());
            }
            wait_ms = wait_ms.min(until as u64);
        }
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(Duration::from_millis(wait_ms)) => {}
        }
        self.check_open()
    }

    pub(crate) async fn wait_job(&self, id: &JobId, timeout_ms: u64) -> Result<()> {
        self.check_open()?;
        let u = uid(id)?;
        let notify = self.shared.hub.job_notify(u);
        {
            let notified = notify.notified();
            tokio::pin!(notified);
            let wait = Duration::from_millis(timeout_ms.min(JOB_POLL_MS));
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
        self.shared.hub.release_job(u, notify);
        self.check_open()
    }
}
