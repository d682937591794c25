//! [`Deduplication`] and the dedup records enqueue reads and writes.
//!
//! A record is one `dedup_keys` row per (namespace, key): the job holding the key, its queue
//! and when the hold lapses by itself (schema version 7). Enqueue reads the record and the
//! holder's status in its own write ([`hold`]), asks core's [`flexiq_core::dedup::plan_dedup`]
//! and writes exactly the plan: a new holder ([`take`]) or the kept one ([`keep`]). The single
//! writer makes the read and the write one step, so concurrent duplicates cannot both insert.
//! Every removal of a job row drops the record it holds ([`release_held`]).

use flexiq_core::dedup::{validate_dedup_key, DedupHold};
use flexiq_core::store::{placed_run_at, DedupJobIdRequest, Deduplication};
use flexiq_core::{JobId, NewJob, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::enqueue::dep_status;
use crate::error::SqlResultExt;
use crate::writer::WriteCtx;
use crate::SqliteStore;

/// The record of key `?2` in `?1`.
pub(crate) const RECORD: &str = "SELECT job_id, expires_at FROM dedup_keys WHERE ns = ?1 AND key = ?2";

/// The removal of the record held by job `?2` of `?1`: the holder's key is found through
/// `dedup_keys_job`, then the record by its key.
pub(crate) const RELEASE_HELD: &str = "DELETE FROM dedup_keys WHERE ns = ?1
    AND key IN (SELECT key FROM dedup_keys WHERE ns = ?1 AND job_id = ?2)";

/// Key `?2` of `?1` taken by job `?3` of queue `?4`, lapsing at `?5`.
const TAKE: &str = "INSERT INTO dedup_keys (ns, key, job_id, queue, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
    ON CONFLICT (ns, key) DO UPDATE SET job_id = excluded.job_id, queue = excluded.queue,
        expires_at = excluded.expires_at";

/// Key `?2` of `?1` taken by job `?3` of queue `?4`, lapsing at `?5`, when it has no record.
const TAKE_FREE: &str =
    "INSERT INTO dedup_keys (ns, key, job_id, queue, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
    ON CONFLICT (ns, key) DO NOTHING";

/// A holder that has not started takes a duplicate's payload and options; its id, queue, task
/// and status stay.
const REPLACE: &str = "UPDATE jobs SET payload = ?3, priority = ?4, run_at = ?5, max_retries = ?6,
    backoff_base = ?7, backoff_max = ?8, timeout_ms = ?9, metadata = ?10
    WHERE id = ?1 AND ns = ?2 AND status IN (0, 7)";

/// The record of `key` in `ns` with its holder's status (`None` when the holder is gone).
pub(crate) fn hold(conn: &Connection, ns: &str, key: &str) -> Result<Option<DedupHold>> {
    let row: Option<(String, Option<i64>)> = conn
        .prepare_cached(RECORD)
        .db()?
        .query_row((ns, key), |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()
        .db()?;
    let Some((id, expires_at)) = row else { return Ok(None) };
    let job_id = JobId::from_trusted(id);
    let holder_status = dep_status(conn, ns, &job_id)?;
    Ok(Some(DedupHold { job_id, expires_at, holder_status }))
}

/// Gives `key` of `ns` to `job`, lapsing at `expires_at`, if the key has no record; true when
/// it had none (the record is then written).
pub(crate) fn take_free(
    conn: &Connection,
    ns: &str,
    key: &str,
    job: &NewJob,
    expires_at: Option<i64>,
) -> Result<bool> {
    let n = conn
        .prepare_cached(TAKE_FREE)
        .db()?
        .execute((ns, key, job.id.as_str(), &job.queue, expires_at))
        .db()?;
    Ok(n == 1)
}

/// Gives `key` of `ns` to the newly inserted `job`, lapsing at `expires_at`.
pub(crate) fn take(
    conn: &Connection,
    ns: &str,
    key: &str,
    job: &NewJob,
    expires_at: Option<i64>,
) -> Result<()> {
    conn.prepare_cached(TAKE).db()?.execute((ns, key, job.id.as_str(), &job.queue, expires_at)).db()?;
    Ok(())
}

/// A duplicate `job` kept out: the record of its dedup key moves its expiry to `extend_to`
/// when set, and with `replace` the holder takes `job`'s payload and options (claimers are
/// woken, as its new `run_at` may be due).
pub(crate) fn keep(
    ctx: &mut WriteCtx<'_>,
    ns: &str,
    job: &NewJob,
    holder: &JobId,
    extend_to: Option<i64>,
    replace: bool,
    now: i64,
) -> Result<()> {
    let conn = ctx.conn;
    if let (Some(at), Some(d)) = (extend_to, &job.dedup) {
        conn.prepare_cached("UPDATE dedup_keys SET expires_at = ?3 WHERE ns = ?1 AND key = ?2")
            .db()?
            .execute((ns, &d.id, at))
            .db()?;
    }
    if replace {
        let written = conn
            .prepare_cached(REPLACE)
            .db()?
            .execute(rusqlite::params![
                holder.as_str(),
                ns,
                job.payload,
                job.priority,
                placed_run_at(job.run_at, now),
                job.max_retries,
                job.backoff.base_ms,
                job.backoff.max_ms,
                job.timeout_ms,
                job.metadata,
            ])
            .db()?;
        if written > 0 {
            ctx.wake_work();
            ctx.job_changed(holder.as_str());
        }
    }
    Ok(())
}

/// Drops the record job `id` of `ns` holds, if it still names it.
pub(crate) fn release_held(conn: &Connection, ns: &str, id: &str) -> Result<()> {
    conn.prepare_cached(RELEASE_HELD).db()?.execute((ns, id)).db()?;
    Ok(())
}

#[async_trait::async_trait]
impl Deduplication for SqliteStore {
    async fn dedup_job_id(&self, req: DedupJobIdRequest) -> Result<Option<JobId>> {
        req.validate()?;
        let ns = self.ns();
        self.read(move |conn| Ok(hold(conn, &ns, &req.key)?.filter(|h| h.is_live(req.now)).map(|h| h.job_id)))
            .await
    }

    async fn delete_dedup_key(&self, key: &str) -> Result<bool> {
        validate_dedup_key(key)?;
        let (ns, key) = (self.ns(), key.to_string());
        self.write_small(false, move |ctx| {
            let n = ctx
                .conn
                .prepare_cached("DELETE FROM dedup_keys WHERE ns = ?1 AND key = ?2")
                .db()?
                .execute((&*ns, &key))
                .db()?;
            Ok(n > 0)
        })
        .await
    }
}
