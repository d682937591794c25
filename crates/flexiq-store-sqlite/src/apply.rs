//! Applying the state machine's [`Next`] to a job row and its side records.
//!
//! The one UPDATE that writes any transition, the counter deltas, error rows, dead letters,
//! metric rows, and the hand-off to dependents (`flows.rs`: release when every edge is settled,
//! each edge's policy when a dependency failed for good). Every status change in this crate
//! ends here.

use flexiq_core::id::new_row_id;
use flexiq_core::transition::{transition, Event, JobState, Next};
use flexiq_core::{Error, JobStatus, Result};

use crate::claim::Claimers;
use crate::error::SqlResultExt;
use crate::flows;
use crate::row::Loaded;
use crate::writer::{MetricInsert, WriteCtx};

/// Column values a transition writes beside the [`Next`].
#[derive(Default, Clone, Copy)]
pub(crate) struct Extras<'a> {
    /// Result bytes of a completion.
    pub(crate) result: Option<&'a [u8]>,
    /// The claiming worker.
    pub(crate) worker_id: Option<&'a str>,
}

/// Writes `next` for the job `st` of `ns` and every side record it asks for, then propagates to
/// dependents.
pub(crate) fn apply(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    st: &Loaded,
    next: &Next,
    now: i64,
    extras: Extras<'_>,
) -> Result<()> {
    write_next(ctx, ns, st, next, now, extras)?;
    if st.has_dependents && next.cancel_dependents {
        flows::on_failed(ctx, ns, &st.id, now)?;
    } else if st.has_dependents && next.release_dependents {
        flows::release_dependents(ctx, ns, &st.id, now)?;
    }
    Ok(())
}

/// Runs `event` through the state machine and applies it; `Ok(None)` when it was refused.
pub(crate) fn fire(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    st: &Loaded,
    event: &Event,
    now: i64,
    extras: Extras<'_>,
) -> Result<Option<Next>> {
    match transition(&st.job_state(), event, now) {
        Ok(next) => {
            apply(ctx, ns, st, &next, now, extras)?;
            Ok(Some(next))
        }
        Err(_) => Ok(None),
    }
}

/// The write of plain claims: `?4` is a JSON array of rowids. Each claim takes the next claim
/// sequence number, which is never given back.
pub(crate) const CLAIMS_UPDATE: &str =
    "UPDATE jobs SET status = ?1, attempt = attempt + 1, claim_seq = claim_seq + 1, started_at = ?2, \
    heartbeat_at = ?2, worker_id = ?3 WHERE rowid IN (SELECT value FROM json_each(?4))";

/// The write of plain claims for several workers: `?3` is a JSON array of `[rowid, worker]`.
pub(crate) const CLAIMS_UPDATE_EACH: &str =
    "UPDATE jobs SET status = ?1, attempt = attempt + 1, claim_seq = claim_seq + 1, started_at = ?2, \
    heartbeat_at = ?2, worker_id = k.value ->> 1 FROM json_each(?3) AS k WHERE jobs.rowid = k.value ->> 0";

/// Writes claims decided by the state machine, the n-th to `workers.nth(n)`. Every claim that
/// is the plain claim shape (running, attempt + 1, claim sequence + 1, started now, nothing
/// else) is written by one UPDATE over the rows' ids; anything else is applied one by one.
pub(crate) fn apply_claims(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    claims: &[(Loaded, Next)],
    now: i64,
    workers: Claimers<'_>,
) -> Result<()> {
    let shape = transition(&JobState::probe(JobStatus::Pending, 0), &Event::Claim, now).ok();
    let mut rowids = String::from("[");
    let mut plain = Vec::with_capacity(claims.len());
    for (n, (st, next)) in claims.iter().enumerate() {
        let worker_id = workers.nth(n).ok_or_else(|| {
            Error::backend(format!("job {} was claimed for place {n} with no worker", st.id))
        })?;
        let is_plain = shape.as_ref().is_some_and(|shape| {
            let mut expect = shape.clone();
            expect.attempt = st.attempt + 1;
            expect.claim_seq = Some(st.claim_seq + 1);
            *next == expect && next.started_at == Some(now) && !st.has_dependents
        });
        if is_plain {
            if !plain.is_empty() {
                rowids.push(',');
            }
            match workers {
                Claimers::One(_) => rowids.push_str(&st.rowid.to_string()),
                Claimers::Each(_) => rowids.push_str(&serde_json::json!([st.rowid, worker_id]).to_string()),
            }
            plain.push((st, next));
        } else {
            apply(ctx, ns, st, next, now, Extras { result: None, worker_id: Some(worker_id) })?;
        }
    }
    rowids.push(']');
    if plain.is_empty() {
        return Ok(());
    }
    let running = JobStatus::Running.code();
    match workers {
        Claimers::One(worker_id) => {
            ctx.conn.prepare_cached(CLAIMS_UPDATE).db()?.execute((running, now, worker_id, &rowids)).db()?
        }
        Claimers::Each(_) => {
            ctx.conn.prepare_cached(CLAIMS_UPDATE_EACH).db()?.execute((running, now, &rowids)).db()?
        }
    };
    for (st, next) in plain {
        ctx.count_delta(ns, &st.queue, st.status, -1);
        ctx.count_delta(ns, &st.queue, next.status, 1);
        ctx.job_changed(&st.id);
    }
    Ok(())
}

/// The write of plain completions: `?3` is a JSON array of `[rowid, result hex or null,
/// attempt, started_at, claim_seq]`. The fence (running, attempt, start and claim sequence)
/// is checked again by the UPDATE itself, so a row that moved since its state was read is
/// left alone and the batch fails instead of overwriting it.
pub(crate) const COMPLETIONS_UPDATE: &str =
    "UPDATE jobs SET status = ?1, finished_at = ?2, heartbeat_at = NULL, \
    worker_id = NULL, result = COALESCE(unhex(k.value ->> 1), jobs.result) \
    FROM json_each(?3) AS k WHERE jobs.rowid = k.value ->> 0 AND jobs.status = 1 \
    AND jobs.attempt = k.value ->> 2 AND jobs.started_at = k.value ->> 3 \
    AND jobs.claim_seq = k.value ->> 4";

/// Whether `next` is the plain completion of `st`: completed, same attempt, finished now, lease
/// cleared, a success metric, and nothing else (no dependents to release).
pub(crate) fn is_plain_completion(st: &Loaded, next: &Next, now: i64) -> bool {
    next.is_plain_completion(st.attempt, now) && !st.has_dependents
}

/// Writes plain completions (see [`is_plain_completion`]) with one UPDATE, and their
/// counters, metric rows and wake-ups.
pub(crate) fn apply_completions(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    done: &[(Loaded, Next, Option<Vec<u8>>)],
    now: i64,
) -> Result<()> {
    let Some(first) = done.first() else { return Ok(()) };
    let rows: Vec<serde_json::Value> = done
        .iter()
        .map(|(st, _, result)| {
            let result = result.as_ref().map(hex::encode);
            serde_json::json!([st.rowid, result, st.attempt, st.started_at, st.claim_seq])
        })
        .collect();
    let list = serde_json::Value::Array(rows).to_string();
    let written = ctx
        .conn
        .prepare_cached(COMPLETIONS_UPDATE)
        .db()?
        .execute((first.1.status.code(), now, &list))
        .db()?;
    if written != done.len() {
        let ids: Vec<&str> = done.iter().map(|(st, _, _)| st.id.as_str()).collect();
        return Err(Error::backend(format!(
            "{} of {} plain completions found their fence moved under the writer (jobs {})",
            done.len() - written,
            done.len(),
            ids.join(", ")
        )));
    }
    for (st, next, _) in done {
        ctx.count_delta(ns, &st.queue, st.status, -1);
        ctx.count_delta(ns, &st.queue, next.status, 1);
        ctx.record_metric(MetricInsert::ended(ns, st, true, now));
        ctx.wake_work();
        ctx.job_changed(&st.id);
    }
    Ok(())
}

/// Writes `next` for `st` and its side records, without looking at dependents.
pub(crate) fn write_next(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    st: &Loaded,
    next: &Next,
    now: i64,
    extras: Extras<'_>,
) -> Result<()> {
    let conn = ctx.conn;
    conn.prepare_cached(
        "UPDATE jobs SET status = ?2, attempt = ?3,
            run_at = COALESCE(?4, run_at),
            started_at = COALESCE(?5, started_at),
            heartbeat_at = CASE WHEN ?9 THEN NULL ELSE COALESCE(?5, heartbeat_at) END,
            finished_at = COALESCE(?6, finished_at),
            last_error = COALESCE(?7, last_error),
            worker_id = CASE WHEN ?9 THEN NULL ELSE COALESCE(?8, worker_id) END,
            cancel_requested = CASE WHEN ?10 THEN 0 ELSE cancel_requested END,
            result = COALESCE(?11, result),
            claim_seq = COALESCE(?12, claim_seq),
            stall_count = COALESCE(?13, stall_count)
         WHERE rowid = ?1",
    )
    .db()?
    .execute(rusqlite::params![
        st.rowid,
        next.status.code(),
        next.attempt,
        next.run_at,
        next.started_at,
        next.finished_at,
        next.last_error,
        extras.worker_id,
        next.clear_lease,
        next.clear_cancel_request,
        extras.result,
        next.claim_seq,
        next.stall_count,
    ])
    .db()?;
    if next.status != st.status {
        ctx.count_delta(ns, &st.queue, st.status, -1);
        ctx.count_delta(ns, &st.queue, next.status, 1);
    }
    if let Some(err) = &next.error_record {
        conn.prepare_cached(
            "INSERT INTO job_errors (id, ns, job_id, attempt, error, failed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .db()?
        .execute((new_row_id(), ns, &st.id, st.attempt, err, now))
        .db()?;
    }
    if let Some(success) = next.metric {
        ctx.record_metric(MetricInsert::ended(ns, st, success, now));
    }
    if next.dead_letter {
        conn.prepare_cached(
            "INSERT INTO dead_letters (id, ns, original_job_id, queue, task, payload, error, retry_count,
                failed_at, metadata, priority, max_retries, backoff_base, backoff_max, timeout_ms,
                group_key, wf_run, wf_stage, wf_version)
             SELECT ?1, ns, id, queue, task, payload, last_error, attempt, ?2, metadata, priority,
                max_retries, backoff_base, backoff_max, timeout_ms, group_key, wf_run, wf_stage, wf_version
             FROM jobs WHERE id = ?3",
        )
        .db()?
        .execute((new_row_id(), now, &st.id))
        .db()?;
    }
    if next.status.is_claimable() || st.status == JobStatus::Running {
        ctx.wake_work();
    }
    ctx.job_changed(&st.id);
    Ok(())
}
