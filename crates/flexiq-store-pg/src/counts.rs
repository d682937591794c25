//! Job counts per (namespace, queue, status), kept by triggers (migration 5), so `stats`,
//! `stats_by_queue` and `count_pending` read a handful of rows instead of counting jobs.
//!
//! Every statement that inserts, deletes or changes the status of job rows adds its
//! aggregated deltas to the counter rows of the backend that ran it (slot = its pid), in the
//! same transaction. A backend runs one transaction at a time, so no two transactions ever
//! contend for a counter row, and concurrent claimers and ackers of one queue do not queue up
//! behind each other's commits. A count is the sum over slots. Backends come and go, so
//! [`PgStore::fold_counts`] moves the rows of backends that no longer exist into slot 0; it
//! runs with the stale-lease sweep and archival, skips rows it cannot lock at once, and only
//! one fold runs at a time.

use std::collections::BTreeMap;

use flexiq_core::cursor::fingerprint;
use flexiq_core::{Result, Stats};

use crate::row::status;
use crate::store::PgStore;

/// Moves the counter rows of backends that are gone into slot 0 and drops rows left at zero.
const FOLD: &str = "WITH gone AS ( \
      DELETE FROM {S}.job_counts c USING ( \
        SELECT namespace, queue, status, slot FROM {S}.job_counts k WHERE k.slot <> 0 \
          AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = k.slot) \
        FOR UPDATE SKIP LOCKED) AS d \
      WHERE c.namespace = d.namespace AND c.queue = d.queue AND c.status = d.status AND c.slot = d.slot \
      RETURNING c.namespace, c.queue, c.status, c.n), \
    folded AS (INSERT INTO {S}.job_counts AS c (namespace, queue, status, slot, n) \
      SELECT namespace, queue, status, 0, sum(n)::int8 FROM gone \
      GROUP BY namespace, queue, status ORDER BY namespace, queue, status \
      ON CONFLICT (namespace, queue, status, slot) DO UPDATE SET n = c.n + excluded.n \
      RETURNING 1) \
    SELECT count(*) FROM gone";

const DROP_ZEROS: &str = "DELETE FROM {S}.job_counts WHERE slot = 0 AND n = 0";

fn fold_lock_key(schema: &str) -> i64 {
    fingerprint(&["flexiq-fold-counts", schema]) as i64
}

impl PgStore {
    /// Folds the counter rows of backends that have gone into slot 0; returns how many rows
    /// it folded (0 when another fold holds the lock).
    pub(crate) async fn fold_counts(&self) -> Result<u64> {
        let c = self.conn().await?;
        let what = "fold job counts";
        let key = fold_lock_key(self.schema());
        let (fold, zeros) = (self.sql(FOLD), self.sql(DROP_ZEROS));
        c.tx(async {
            let got: bool = c.rows(what, "SELECT pg_try_advisory_xact_lock($1)", &[&key]).await?[0].get(0);
            if !got {
                return Ok(0);
            }
            let n: i64 = c.rows(what, &fold, &[]).await?[0].get(0);
            if n > 0 {
                c.exec(what, &zeros, &[]).await?;
            }
            Ok(n.max(0) as u64)
        })
        .await
    }

    /// Counts per status of the namespace, or of one of its queues.
    pub(crate) async fn counted(&self, queue: Option<&str>) -> Result<Stats> {
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT status, sum(n)::int8 FROM {S}.job_counts WHERE namespace = $1 \
             AND ($2::text IS NULL OR queue = $2) GROUP BY status",
        );
        let c = self.conn().await?;
        let mut s = Stats::default();
        for r in c.rows("stats", &sql, &[&ns, &queue]).await? {
            s.add(status(r.get(0))?, r.get::<_, i64>(1).max(0) as u64);
        }
        Ok(s)
    }

    /// Counts per queue and status of the namespace; queues whose counts are all zero are left out.
    pub(crate) async fn counted_by_queue(&self) -> Result<BTreeMap<String, Stats>> {
        let ns: &str = &self.ns;
        let sql = self.sql(
            "SELECT queue, status, sum(n)::int8 FROM {S}.job_counts WHERE namespace = $1 \
             GROUP BY queue, status HAVING sum(n) <> 0",
        );
        let c = self.conn().await?;
        let mut map: BTreeMap<String, Stats> = BTreeMap::new();
        for r in c.rows("stats by queue", &sql, &[&ns]).await? {
            map.entry(r.get(0)).or_default().add(status(r.get(1))?, r.get::<_, i64>(2).max(0) as u64);
        }
        Ok(map)
    }
}

/// Pending counts of the queues `$2` of namespace `$1`, for the admission cap (read inside
/// the enqueue's transaction, under the queues' row locks).
pub(crate) const PENDING_OF_QUEUES: &str = "SELECT queue, sum(n)::int8 FROM {S}.job_counts \
    WHERE namespace = $1 AND queue = ANY($2) AND status = 0 GROUP BY queue";
