//! Claims from queues without a rate limit or concurrency cap in one round trip.
//!
//! Most claims touch only unlimited queues, and for them the locked path's second flight
//! (decide in Rust, then write) buys nothing: a claim's outcome depends only on the job's
//! attempt counter, its claim sequence and the clock. So the state machine is asked once per
//! claim for what a claim writes (status, attempt step, `started_at`), and one autocommitted
//! statement locks the candidates with `SKIP LOCKED`, writes that change plus
//! `claim_seq + 1` and returns the claimed rows; it relaxes its own commit as `begin_relaxed`
//! does for the locked path (`set_config('synchronous_commit', 'off', true)` lasts until its
//! implicit transaction ends). Each returned row carries the status, attempt and claim
//! sequence it had before, and is checked against `transition(Event::Claim)`; a mismatch is
//! reported as a backend error naming the job.
//!
//! The statement claims nothing when any eligible queue has limits (their caps must be
//! computed under the queue's row lock, see `claim.rs`); it says so, and the caller takes the
//! locked path, which stays preferred for a while so limited namespaces pay no extra trip.

use std::sync::atomic::{AtomicI64, Ordering};

use flexiq_core::store::ClaimRequest;
use flexiq_core::transition::{transition, Event, JobState};
use flexiq_core::{ClaimedJob, Error, Fence, JobStatus, Result};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::db::Conn;
use crate::error::{corrupt, pg};
use crate::row::{code, job, job_cols, status, JOB_COLS};
use crate::store::PgStore;

/// How long (ms) after seeing limited queues claims go straight to the locked path.
const LIMITED_HINT_MS: i64 = 1_000;

/// Remembers when this namespace last had limited queues among a claim's eligible ones.
#[derive(Debug, Default)]
pub(crate) struct LimitedHint(AtomicI64);

impl LimitedHint {
    pub(crate) fn seen(&self, now: i64) {
        self.0.store(now, Ordering::Relaxed);
    }

    pub(crate) fn recent(&self, now: i64) -> bool {
        let at = self.0.load(Ordering::Relaxed);
        at != 0 && now.saturating_sub(at) < LIMITED_HINT_MS && now >= at
    }
}

fn free_claim_sql() -> String {
    let eligible =
        "q.namespace = $1 AND (cardinality($2::text[]) = 0 OR q.queue = ANY($2::text[])) AND NOT q.paused";
    format!(
        "WITH lim AS (SELECT EXISTS (SELECT 1 FROM {{S}}.queues q WHERE {eligible} \
            AND (q.rate_count IS NOT NULL OR q.concurrency IS NOT NULL)) AS limited \
            FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed), \
         c AS (SELECT j.id, j.status AS st0, j.attempt AS at0, j.claim_seq AS seq0 FROM \
           (SELECT q.queue FROM {{S}}.queues q WHERE {eligible} \
              AND q.rate_count IS NULL AND q.concurrency IS NULL AND NOT (SELECT limited FROM lim)) AS qs \
           CROSS JOIN LATERAL \
           (SELECT j.id, j.status, j.attempt, j.claim_seq, j.priority, j.run_at FROM {{S}}.jobs j \
            WHERE j.namespace = $1 AND j.queue = qs.queue AND j.status IN (0, 6) AND j.run_at <= $3 \
            ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4 FOR UPDATE SKIP LOCKED) AS j \
           ORDER BY j.priority DESC, j.run_at, j.id LIMIT $4), \
         u AS (UPDATE {{S}}.jobs j SET status = $5, attempt = j.attempt + $6, started_at = $3, \
              finished_at = NULL, heartbeat_at = NULL, worker_id = $7, claim_seq = j.claim_seq + 1 \
            FROM c WHERE j.id = c.id RETURNING {cols}, c.st0, c.at0, c.seq0) \
         SELECT u.*, lim.limited FROM lim LEFT JOIN u ON true \
         ORDER BY u.priority DESC, u.run_at, u.id",
        cols = job_cols("j"),
    )
}

/// What the state machine says a claim writes, as (status code, attempt step).
pub(crate) fn claim_effect(now: i64) -> Result<(i16, i32)> {
    let probe = JobState::probe(JobStatus::Pending, 0);
    let n = transition(&probe, &Event::Claim, now).map_err(|e| e.into_error(&probe.id))?;
    if n.started_at != Some(now) || n.finished_at.is_some() || n.run_at.is_some() || n.clear_lease {
        return Err(Error::backend(format!("claim transition {n:?} cannot be written in one statement")));
    }
    Ok((code(n.status), n.attempt as i32))
}

impl PgStore {
    /// Whether claims should skip the single-flight attempt (limits were seen recently).
    pub(crate) fn prefer_locked_claim(&self, now: i64) -> bool {
        self.limited.recent(now)
    }

    /// Claims from unlimited queues in one round trip. `None` when an eligible queue has
    /// limits: nothing was claimed and the locked path must run.
    pub(crate) async fn claim_free(&self, c: &Conn, req: &ClaimRequest) -> Result<Option<Vec<ClaimedJob>>> {
        let (st, step) = claim_effect(req.now)?;
        let ns: &str = &self.ns;
        let limit = i64::from(req.limit);
        let what = "claim";
        let stmt = c.prep(what, &self.sql(&free_claim_sql())).await?;
        let params: [&(dyn ToSql + Sync); 7] =
            [&ns, &req.queues, &req.now, &limit, &st, &step, &req.worker_id];
        let rows = c.query(&stmt, &params).await.map_err(|e| pg(what, e))?;
        if limited_seen(&rows) {
            self.limited.seen(req.now);
            return Ok(None);
        }
        claimed_from_rows(&rows, req.now).map(Some)
    }
}

/// Whether a one-statement claim found limited queues: its rows end with the `limited` flag
/// (one row with no job when nothing was claimed).
pub(crate) fn limited_seen(rows: &[Row]) -> bool {
    rows.first().map(|r| r.get::<_, bool>(r.len() - 1)).unwrap_or(false)
}

/// The jobs a one-statement claim returned: each row holds [`JOB_COLS`] as written, then the
/// status, attempt and claim sequence the job had before (rows without a job are skipped).
/// Each is checked against what the state machine decides for the claim.
pub(crate) fn claimed_from_rows(rows: &[Row], now: i64) -> Result<Vec<ClaimedJob>> {
    let ncols = JOB_COLS.split(", ").count();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        if r.get::<_, Option<uuid::Uuid>>(0).is_none() {
            continue;
        }
        let j = job(r)?;
        let before = JobState {
            id: j.id.as_str().to_string(),
            status: status(r.get(ncols))?,
            attempt: u32::try_from(r.get::<_, i32>(ncols + 1))
                .map_err(|_| corrupt(format!("attempt of job {}", j.id)))?,
            max_retries: j.max_retries,
            started_at: None,
            claim_seq: u64::try_from(r.get::<_, i64>(ncols + 2))
                .map_err(|_| corrupt(format!("claim_seq of job {}", j.id)))?,
            stall_count: j.stall_count,
            backoff: j.backoff,
        };
        let next = transition(&before, &Event::Claim, now).map_err(|e| e.into_error(j.id.as_str()))?;
        if next.status != j.status
            || next.attempt != j.attempt
            || next.started_at != j.started_at
            || next.claim_seq != Some(j.claim_seq)
        {
            return Err(Error::backend(format!(
                "claim of job {} wrote status {:?} attempt {} claim_seq {}, not what the state machine decided",
                j.id, j.status, j.attempt, j.claim_seq
            )));
        }
        let fence = Fence { attempt: j.attempt, started_at: now, claim_seq: j.claim_seq };
        out.push(ClaimedJob { job: j, fence });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_writes_running_and_one_more_attempt() {
        assert_eq!(claim_effect(1_000).unwrap(), (code(JobStatus::Running), 1));
    }

    #[test]
    fn the_limited_hint_expires() {
        let h = LimitedHint::default();
        assert!(!h.recent(5_000));
        h.seen(5_000);
        assert!(h.recent(5_000));
        assert!(h.recent(5_000 + LIMITED_HINT_MS - 1));
        assert!(!h.recent(5_000 + LIMITED_HINT_MS));
        assert!(!h.recent(4_000), "a clock that went back does not keep the hint");
    }
}
