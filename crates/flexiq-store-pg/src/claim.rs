//! Batch claims: `FOR UPDATE SKIP LOCKED` over the per-queue claim index, in one statement.
//!
//! Queues without limits are claimed optimistically in the same flight as `BEGIN` and the lock
//! on limited queues' state rows. Queues with a rate limit or a concurrency cap are claimed
//! with a per-queue cap computed while holding their state row lock, so limits hold across
//! every worker process sharing the database. The state machine decides each claim.

use std::cmp::Reverse;
use std::collections::HashMap;

use flexiq_core::store::ClaimRequest;
use flexiq_core::transition::{transition, Event};
use flexiq_core::{ClaimedJob, Fence, RateLimit, Result, TokenBucket};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::apply::{Change, Effects};
use crate::row::{job, loaded, state_cols, STATE_COL_COUNT};
use crate::store::PgStore;

/// Claim candidates: per eligible queue, the first `cap` claimable rows in claim order.
/// `$5`/`$6` restrict to limited queues with their caps; otherwise only unlimited queues.
pub(crate) fn claim_sql(limited: bool) -> String {
    let (queue_filter, cap) = if limited {
        ("AND q.queue = ANY($5::text[])", "c.cap")
    } else {
        ("AND q.rate_count IS NULL AND q.concurrency IS NULL", "$4::int8")
    };
    let caps = if limited {
        "JOIN unnest($5::text[], $6::int8[]) AS c(queue, cap) ON c.queue = q.queue"
    } else {
        ""
    };
    format!(
        "SELECT {cols}, j.priority, j.run_at FROM \
           (SELECT q.queue, {cap} AS cap FROM {{S}}.queues q {caps} \
            WHERE q.namespace = $1 AND (cardinality($2::text[]) = 0 OR q.queue = ANY($2::text[])) \
              AND NOT q.paused {queue_filter}) AS qs \
         CROSS JOIN LATERAL \
           (SELECT * FROM {{S}}.jobs j WHERE j.namespace = $1 AND j.queue = qs.queue AND j.status IN (0, 6) \
              AND j.run_at <= $3 \
            ORDER BY j.priority DESC, j.run_at, j.id LIMIT qs.cap FOR UPDATE SKIP LOCKED) AS j \
         ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4",
        cols = state_cols("j"),
    )
}

/// Locks the state rows of the limited, unpaused queues among `$2` (empty: all) of namespace
/// `$1`, in queue order.
pub(crate) const LOCK_LIMITED: &str =
    "SELECT queue, rate_count, rate_per_ms, tokens, tokens_at, concurrency \
    FROM {S}.queues WHERE namespace = $1 AND (cardinality($2::text[]) = 0 OR queue = ANY($2::text[])) \
      AND NOT paused AND (rate_count IS NOT NULL OR concurrency IS NOT NULL) \
    ORDER BY queue FOR UPDATE";

/// A limited queue's grant for one claim, decided under its state row lock.
pub(crate) struct Limited {
    pub(crate) queue: String,
    rate: Option<(RateLimit, TokenBucket)>,
    pub(crate) granted: u32,
}

impl PgStore {
    pub(crate) async fn claim_jobs(&self, req: ClaimRequest) -> Result<Vec<ClaimedJob>> {
        req.validate()?;
        let c = self.conn().await?;
        if !self.prefer_locked_claim(req.now) {
            if let Some(claimed) = self.claim_free(&c, &req).await? {
                self.announce_claimed(&claimed);
                return Ok(claimed);
            }
        }
        let ns: &str = &self.ns;
        let limit = i64::from(req.limit);
        let now = req.now;
        let mut fx = Effects::default();
        let claimed = c
            .tx_lazy(async {
                let lock_st = c.prep("claim", &self.sql(LOCK_LIMITED)).await?;
                let free_st = c.prep("claim", &self.sql(&claim_sql(false))).await?;
                let lock_params: [&(dyn ToSql + Sync); 2] = [&ns, &req.queues];
                let free_params: [&(dyn ToSql + Sync); 4] = [&ns, &req.queues, &now, &limit];
                let (_, limited_rows, mut rows) = futures::try_join!(
                    c.begin_relaxed(),
                    async { c.query(&lock_st, &lock_params).await.map_err(|e| crate::error::pg("claim", e)) },
                    async { c.query(&free_st, &free_params).await.map_err(|e| crate::error::pg("claim", e)) },
                )?;
                let mut limited = Vec::new();
                if !limited_rows.is_empty() {
                    limited = self.limited_caps(&c, &limited_rows, req.limit, now).await?;
                    let qs: Vec<&str> =
                        limited.iter().filter(|l| l.granted > 0).map(|l| l.queue.as_str()).collect();
                    let caps: Vec<i64> =
                        limited.iter().filter(|l| l.granted > 0).map(|l| i64::from(l.granted)).collect();
                    if !qs.is_empty() {
                        let more = c
                            .rows(
                                "claim",
                                &self.sql(&claim_sql(true)),
                                &[&ns, &req.queues, &now, &limit, &qs, &caps],
                            )
                            .await?;
                        rows.extend(more);
                        sort_claim_order(&mut rows);
                        rows.truncate(req.limit as usize);
                    }
                }
                let mut changes = Vec::with_capacity(rows.len());
                for r in &rows {
                    let l = loaded(r, 0)?;
                    let next =
                        transition(&l.state, &Event::Claim, now).map_err(|x| x.into_error(&l.state.id))?;
                    let mut ch = Change::new(l, next);
                    ch.worker = Some(req.worker_id.clone());
                    changes.push(ch);
                }
                if !limited.is_empty() {
                    self.settle_tokens(&c, &mut limited, &changes, now).await?;
                }
                let order: Vec<Uuid> = changes.iter().map(|ch| ch.before.id).collect();
                let updated = self.write_and_commit(&c, &changes, now, true, &mut fx).await?;
                let mut by_id: HashMap<Uuid, Row> =
                    updated.into_iter().map(|r| (r.get::<_, Uuid>(0), r)).collect();
                let mut out = Vec::with_capacity(order.len());
                for id in order {
                    if let Some(r) = by_id.remove(&id) {
                        let j = job(&r)?;
                        let fence = Fence { attempt: j.attempt, started_at: now, claim_seq: j.claim_seq };
                        out.push(ClaimedJob { job: j, fence });
                    }
                }
                Ok(out)
            })
            .await?;
        // Claims make no work claimable, but waiters on these jobs see them start.
        self.shared.hub.publish(&self.ns, false, &fx.jobs);
        Ok(claimed)
    }

    /// Caps for limited queues, computed under their row locks.
    pub(crate) async fn limited_caps(
        &self,
        c: &crate::db::Conn,
        rows: &[Row],
        limit: u32,
        now: i64,
    ) -> Result<Vec<Limited>> {
        let ns: &str = &self.ns;
        let mut out = Vec::with_capacity(rows.len());
        let capped: Vec<String> =
            rows.iter().filter(|r| r.get::<_, Option<i32>>(5).is_some()).map(|r| r.get(0)).collect();
        let mut running: HashMap<String, i64> = HashMap::new();
        if !capped.is_empty() {
            // A fresh statement after the lock: it sees every claim committed before ours.
            let sql = self.sql(
                "SELECT queue, count(*) FROM {S}.jobs WHERE namespace = $1 AND queue = ANY($2) AND status = 1 GROUP BY queue",
            );
            for r in c.rows("claim", &sql, &[&ns, &capped]).await? {
                running.insert(r.get(0), r.get(1));
            }
        }
        for r in rows {
            let queue: String = r.get(0);
            let rate = rate_of(r, 1, now);
            let concurrency: Option<i32> = r.get(5);
            let mut granted = limit;
            if let Some(cap) = concurrency {
                let busy = running.get(&queue).copied().unwrap_or(0);
                granted = granted.min((i64::from(cap) - busy).max(0) as u32);
            }
            let mut rate = rate;
            if let Some((lim, bucket)) = rate.as_mut() {
                granted = bucket.take(*lim, granted, now);
            }
            out.push(Limited { queue, rate, granted });
        }
        Ok(out)
    }

    /// Gives back tokens granted but not used, and stores each bucket.
    pub(crate) async fn settle_tokens(
        &self,
        c: &crate::db::Conn,
        limited: &mut [Limited],
        changes: &[Change],
        now: i64,
    ) -> Result<()> {
        let ns: &str = &self.ns;
        let (mut qs, mut tokens, mut at) = (Vec::new(), Vec::new(), Vec::new());
        for l in limited.iter_mut() {
            if let Some((_, bucket)) = l.rate.as_mut() {
                let used = changes.iter().filter(|ch| ch.before.queue == l.queue).count() as u32;
                bucket.tokens += f64::from(l.granted.saturating_sub(used));
                qs.push(l.queue.clone());
                tokens.push(bucket.tokens);
                at.push(bucket.updated_at.max(now));
            }
        }
        if qs.is_empty() {
            return Ok(());
        }
        let sql = self.sql(
            "UPDATE {S}.queues q SET tokens = u.tokens, tokens_at = u.at \
             FROM unnest($2::text[], $3::float8[], $4::int8[]) AS u(queue, tokens, at) \
             WHERE q.namespace = $1 AND q.queue = u.queue",
        );
        c.exec("claim", &sql, &[&ns, &qs, &tokens, &at]).await?;
        Ok(())
    }
}

/// A queue's rate limit and its bucket as stored, from the columns `rate_count, rate_per_ms,
/// tokens, tokens_at` starting at `at`; a bucket never used starts full at `now`. `None`
/// without a rate limit.
pub(crate) fn rate_of(r: &Row, at: usize, now: i64) -> Option<(RateLimit, TokenBucket)> {
    let (count, per_ms) = (r.get::<_, Option<i32>>(at)?, r.get::<_, Option<i64>>(at + 1)?);
    let lim = RateLimit { count: count.max(1) as u32, per_ms: per_ms.max(1) as u64 };
    let bucket = match (r.get::<_, Option<f64>>(at + 2), r.get::<_, Option<i64>>(at + 3)) {
        (Some(tokens), Some(updated_at)) => TokenBucket { tokens, updated_at },
        _ => TokenBucket::full(lim, now),
    };
    Some((lim, bucket))
}

/// Sorts candidate rows (state columns, then priority and run_at) into claim order.
fn sort_claim_order(rows: &mut [Row]) {
    let (priority, run_at) = (STATE_COL_COUNT, STATE_COL_COUNT + 1);
    rows.sort_by_key(|r| (Reverse(r.get::<_, i32>(priority)), r.get::<_, i64>(run_at), r.get::<_, Uuid>(0)));
}
