//! Fenced completions written by one statement, alone or with the fair claim that follows
//! them, each sent in one flight with `BEGIN` and `COMMIT`.
//!
//! An ack in general takes two flights: its rows locked and judged by the state machine, then
//! its write with `COMMIT`. A completion needs no read first: the state machine's answer is a
//! plain completion (`Next::is_plain_completion`) if the fence still names the running
//! attempt, and nothing otherwise. So the fence check is the `UPDATE`'s own condition, and the
//! completion and its metric rows are data-modifying parts of one statement. Workers ack
//! completions in batches, and workflow hosts that claim ahead send each completion with the
//! claim of their next job, which the runtime joins into one `ack_and_claim_fair` call: there
//! the claim is one more part of the same statement (`workflow_claim_free.rs`), and the
//! triggers of `jobs` (counts, events) fire once for both updates, over all their rows.
//!
//! The statement completes only jobs without dependents; an ack it did not complete (its fence
//! is stale, the job is gone, of another namespace or has dependents to release) takes the
//! judged path after the commit, which decides it with the state machine and cascades where
//! needed. The claim's snapshot still sees the completed jobs as running, so the capped claim
//! takes them out of its per-group counts. Rows are updated in id order, as the judged path
//! locks them, so two batches never wait on each other in a cycle. Every commit here waits for
//! the WAL flush, as every ack's does.

use std::collections::HashSet;

use flexiq_core::store::{Ack, AckKind, ClaimFairRequest};
use flexiq_core::transition::{transition, Event};
use flexiq_core::{AckOutcome, ClaimedJob, Fence, JobState, JobStatus, Result};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::claim_free::{claimed_from_rows, limited_seen};
use crate::db::uid;
use crate::row::code;
use crate::store::PgStore;
use crate::workflow_claim::GROUP;

/// Fenced completions, as the statement's parameter arrays.
pub(crate) struct Completes {
    ids: Vec<Uuid>,
    attempts: Vec<i32>,
    started: Vec<i64>,
    seqs: Vec<i64>,
    results: Vec<Option<Vec<u8>>>,
}

impl Completes {
    /// The acks as completions in job id order, when every one completes a different job and
    /// the state machine writes a completion as `completes_sql` does.
    pub(crate) fn of(acks: &[Ack], now: i64) -> Result<Option<Completes>> {
        let n = acks.len();
        if acks.first().is_some_and(|a| !is_plain(&a.fence, now)) {
            return Ok(None);
        }
        let mut out = Completes {
            ids: Vec::with_capacity(n),
            attempts: Vec::with_capacity(n),
            started: Vec::with_capacity(n),
            seqs: Vec::with_capacity(n),
            results: Vec::with_capacity(n),
        };
        let mut sorted = Vec::with_capacity(n);
        for a in acks {
            let AckKind::Complete { result } = &a.kind else { return Ok(None) };
            sorted.push((uid(&a.job_id)?, a, result));
        }
        sorted.sort_by_key(|(id, _, _)| *id);
        if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
            // A job acked twice: only the first ack applies, which the judged path decides.
            return Ok(None);
        }
        for (id, a, result) in sorted {
            out.ids.push(id);
            out.attempts.push(a.fence.attempt.min(i32::MAX as u32) as i32);
            out.started.push(a.fence.started_at);
            out.seqs.push(a.fence.claim_seq.min(i64::MAX as u64) as i64);
            out.results.push(result.clone());
        }
        Ok(Some(out))
    }

    /// The parameters of `completes_sql`, in order.
    pub(crate) fn params(&self) -> [&(dyn ToSql + Sync); 5] {
        [&self.ids, &self.attempts, &self.started, &self.seqs, &self.results]
    }
}

/// Whether the state machine completes the attempt `fence` names as a plain completion. What
/// it writes does not depend on the fence's values, so one ack's answer stands for the batch.
fn is_plain(fence: &Fence, now: i64) -> bool {
    let mut state = JobState::probe(JobStatus::Running, fence.attempt);
    state.started_at = Some(fence.started_at);
    state.claim_seq = fence.claim_seq;
    transition(&state, &Event::Complete { fence: *fence }, now)
        .is_ok_and(|next| next.is_plain_completion(fence.attempt, now))
}

/// The CTEs completing the running attempts named by `$p`.. (ids, attempts, start times,
/// claim sequences, results) at `$now` in namespace `$1`, and writing their metric rows.
/// `done` returns each completed job's id, task, queue, attempt, start and group.
///
/// The status test is written `j.status + 0` so that no partial index of running jobs can
/// serve it: a plan made before the table's first `ANALYZE` (the host loop's generic plans are
/// made then and kept) took such an index as the cheapest way in and walked every running job
/// of the namespace for each call. Only the primary key is left, one probe per ack.
pub(crate) fn completes_sql(now: u32, p: u32) -> String {
    let (attempts, started, seqs, results) = (p + 1, p + 2, p + 3, p + 4);
    format!(
        "done AS (UPDATE {{S}}.jobs j SET status = {completed}, finished_at = ${now}, worker_id = NULL, \
            heartbeat_at = NULL, result = a.result \
            FROM unnest(${p}::uuid[], ${attempts}::int4[], ${started}::int8[], ${seqs}::int8[], ${results}::bytea[]) \
              AS a(id, attempt, started_at, seq, result) \
            WHERE j.id = a.id AND j.namespace = $1 AND j.status + 0 = {running} AND j.attempt = a.attempt \
              AND j.started_at = a.started_at AND j.claim_seq = a.seq AND NOT j.has_dependents \
            RETURNING j.id, j.task, j.queue, j.attempt, j.started_at, {GROUP} AS k), \
         met AS (INSERT INTO {{S}}.task_metrics (namespace, job_id, task, queue, attempt, success, duration_ms, recorded_at) \
            SELECT $1, d.id, d.task, d.queue, d.attempt, true, greatest(${now} - d.started_at, 0), ${now} FROM done d)",
        completed = code(JobStatus::Completed),
        running = code(JobStatus::Running),
    )
}

/// The ids a completing statement completed (see `output` in `workflow_claim_free.rs`).
fn acked(rows: &[Row]) -> Vec<Uuid> {
    rows.first().and_then(|r| r.get::<_, Option<Vec<Uuid>>>(r.len() - 2)).unwrap_or_default()
}

impl PgStore {
    /// Completes `acks` (given as `completes`) and makes the fair claim `claim` in one flight;
    /// acks it did not complete, and a claim that met limited queues, take the ordinary paths
    /// after the commit. Returns the acks' outcomes in order and the claim.
    pub(crate) async fn complete_and_claim(
        &self,
        acks: Vec<Ack>,
        completes: Completes,
        claim: ClaimFairRequest,
    ) -> Result<(Vec<AckOutcome>, Result<Vec<ClaimedJob>>)> {
        let now = claim.now;
        let c = self.conn().await?;
        let rows = c.tx_lazy(self.free_flight(&c, &claim, Some(&completes), c.begin_generic())).await?;
        let done = acked(&rows);
        self.shared.hub.publish(&self.ns, false, &done);
        let claimed = if limited_seen(&rows) {
            self.fair_limited.seen(now);
            self.claim_fair_locked(claim).await
        } else {
            let claimed = claimed_from_rows(&rows, now);
            if let Ok(jobs) = &claimed {
                self.announce_claimed(jobs);
            }
            claimed
        };
        let outcomes = self.ack_the_rest(acks, &done, now).await?;
        Ok((outcomes, claimed))
    }

    /// Completes `acks` (given as `completes`) in one flight; the acks it did not complete
    /// take the ordinary path after the commit. One outcome per ack, in order.
    pub(crate) async fn complete_jobs(
        &self,
        acks: Vec<Ack>,
        completes: Completes,
        now: i64,
    ) -> Result<Vec<AckOutcome>> {
        let ns: &str = &self.ns;
        let what = "complete";
        let c = self.conn().await?;
        let sql = self.sql(&format!("WITH {} SELECT array_agg(d.id) FROM done d", completes_sql(2, 3)));
        let st = c.prep(what, &sql).await?;
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&ns, &now];
        params.extend(completes.params());
        let row = c
            .tx_lazy(async {
                let (_, row, _) = futures::try_join!(
                    c.begin(),
                    async { c.query_one(&st, &params).await.map_err(|e| crate::error::pg(what, e)) },
                    c.commit(),
                )?;
                Ok(row)
            })
            .await?;
        let done: Vec<Uuid> = row.get::<_, Option<Vec<Uuid>>>(0).unwrap_or_default();
        self.shared.hub.publish(&self.ns, false, &done);
        self.ack_the_rest(acks, &done, now).await
    }

    /// The outcomes of `acks` once the ones in `done` are completed: those acknowledged, the
    /// others as the ordinary ack path decides them (a stale fence, a job gone or of another
    /// namespace, or one with dependents to release). If that path fails, the error is
    /// returned although `done` is written: the caller's retry then finds those jobs completed
    /// and superseded, never completed twice.
    async fn ack_the_rest(&self, acks: Vec<Ack>, done: &[Uuid], now: i64) -> Result<Vec<AckOutcome>> {
        let done: HashSet<&Uuid> = done.iter().collect();
        let mut outcomes = vec![AckOutcome::Acknowledged; acks.len()];
        let mut left_at = Vec::new();
        let mut left = Vec::new();
        for (i, a) in acks.into_iter().enumerate() {
            if !done.contains(&uid(&a.job_id)?) {
                left_at.push(i);
                left.push(a);
            }
        }
        if !left.is_empty() {
            for (i, o) in left_at.into_iter().zip(self.ack_judged(left, now).await?) {
                outcomes[i] = o;
            }
        }
        Ok(outcomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexiq_core::JobId;

    fn ack(kind: AckKind) -> Ack {
        let fence = Fence { attempt: 2, started_at: 1_000, claim_seq: 3 };
        Ack { job_id: JobId::from_trusted("00000000-0000-0000-0000-000000000001"), fence, kind }
    }

    #[test]
    fn only_a_batch_of_completions_is_written_in_one_statement() {
        let done = ack(AckKind::Complete { result: Some(b"r".to_vec()) });
        let mut other = ack(AckKind::Complete { result: None });
        other.job_id = JobId::from_trusted("00000000-0000-0000-0000-000000000000");
        let c = Completes::of(&[done.clone(), other], 2_000).unwrap().unwrap();
        assert!(c.ids[0] < c.ids[1], "in id order");
        assert_eq!((c.attempts[1], c.started[1], c.seqs[1]), (2, 1_000, 3));
        assert_eq!((c.results[0].as_deref(), c.results[1].as_deref()), (None, Some(&b"r"[..])));
        assert!(Completes::of(&[done.clone(), done.clone()], 2_000).unwrap().is_none(), "a job acked twice");
        let failed = ack(AckKind::Fail { error: "x".into(), retryable: false });
        assert!(Completes::of(&[done, failed], 2_000).unwrap().is_none());
    }

    #[test]
    fn a_malformed_job_id_is_refused() {
        let mut bad = ack(AckKind::Complete { result: None });
        bad.job_id = JobId::from_trusted("not-a-uuid");
        assert!(Completes::of(&[bad], 2_000).is_err());
    }

    #[test]
    fn the_completion_checks_the_whole_fence_and_skips_jobs_with_dependents() {
        let sql = completes_sql(3, 10);
        for cond in [
            "j.attempt = a.attempt",
            "j.started_at = a.started_at",
            "j.claim_seq = a.seq",
            "NOT j.has_dependents",
        ] {
            assert!(sql.contains(cond), "{cond}");
        }
        assert!(sql.contains("$14::bytea[]"));
    }
}
