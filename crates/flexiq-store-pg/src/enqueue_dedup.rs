//! The one-flight enqueue of a single job whose only check is its dedup key.
//!
//! The general path (`enqueue.rs`) reads the record, decides in Rust and writes: two round
//! trips, where a plain enqueue takes one. Debounced and throttled producers enqueue one job
//! at a time at high rates, so that job gets one round trip too: `BEGIN`, the key's advisory
//! lock, one statement that reads the record and its (locked) holder, decides and writes, and
//! `COMMIT` go to the server as one pipelined flight. The decision is core's `plan_dedup`,
//! sent as its table (`flexiq_core::dedup_table`): the statement looks up the letter for the
//! holder state it reads, so no mode's rule is written in SQL. The statement runs after the
//! lock in the same transaction, so its snapshot sees every earlier enqueue of the key, as the
//! general path's read does. The one plan this statement does not carry out, queueing behind
//! a running holder (`b`), writes nothing here and goes the general way.

use flexiq_core::dedup::DedupOptions;
use flexiq_core::dedup_table::plan_table;
use flexiq_core::store::Enqueued;
use flexiq_core::{NewJob, Result};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::db::{jid, uid, Bracket, Conn, Stmt};
use crate::dedup::lock_key;
use crate::enqueue::{revoked_error, Cols};
use crate::store::PgStore;
use crate::workflow::stage_pair;

/// Reads the record of key `$18` in namespace `$1` and its holder's status (locked when live,
/// else from the archive), picks the plan letter from table `$19` at `$4`, and writes it:
/// `i` inserts job `$5` and gives it the key with expiry `$20`, `e` / `x` extend the hold to
/// `$20`, `r` / `x` give an unstarted holder the job's payload and options; every letter but
/// `i` and `b` writes the holder's `deduplicated` event. Nothing happens when task `$2` is
/// revoked. The statement's row names the revoked task, the letter, the holder and whether the
/// holder was overwritten.
const DECIDE_AND_WRITE: &str = "WITH rev AS (SELECT task FROM {S}.revoked_tasks WHERE namespace = $1 AND task = $2), \
    r AS MATERIALIZED (SELECT job_id, expires_at FROM {S}.dedup_keys WHERE namespace = $1 AND key = $18), \
    h AS MATERIALIZED (SELECT r.job_id, r.expires_at, coalesce(j.status, a.status) AS st, \
        coalesce(j.queue, a.queue) AS queue, coalesce(j.task, a.task) AS task, coalesce(j.attempt, a.attempt) AS attempt \
      FROM r \
      LEFT JOIN LATERAL (SELECT status, queue, task, attempt FROM {S}.jobs WHERE id = r.job_id AND namespace = $1 \
        FOR UPDATE) j ON true \
      LEFT JOIN LATERAL (SELECT status, queue, task, attempt FROM {S}.archived_jobs \
        WHERE id = r.job_id AND namespace = $1) a ON true), \
    p AS MATERIALIZED (SELECT substr($19::text, 3 * coalesce(h.st + 1, 0) \
        + CASE WHEN h.expires_at IS NULL THEN 0 WHEN h.expires_at > $4 THEN 1 ELSE 2 END + 1, 1) AS l, \
        h.job_id AS holder \
      FROM (SELECT 1) AS one LEFT JOIN h ON true WHERE NOT EXISTS (SELECT 1 FROM rev)), \
    q AS (INSERT INTO {S}.queues (namespace, queue) SELECT $1, $3 FROM p WHERE p.l = 'i' ON CONFLICT DO NOTHING), \
    ins AS (INSERT INTO {S}.jobs (id, namespace, queue, task, payload, priority, status, max_retries, \
        backoff_base_ms, backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key, workflow_run_id, \
        workflow_stage_id, workflow_version) \
      SELECT $5, $1, $3, $2, $6, $7, 0, $8, $9, $10, $4, $11, $12, $13, $14, $15, $16, $17 FROM p WHERE p.l = 'i'), \
    rec AS (INSERT INTO {S}.dedup_keys (namespace, key, job_id, queue, expires_at) \
      SELECT $1, $18, $5, $3, $20 FROM p WHERE p.l = 'i' \
      ON CONFLICT (namespace, key) DO UPDATE SET job_id = excluded.job_id, queue = excluded.queue, \
        expires_at = excluded.expires_at), \
    ext AS (UPDATE {S}.dedup_keys d SET expires_at = $20 FROM p \
      WHERE p.l IN ('e', 'x') AND d.namespace = $1 AND d.key = $18), \
    rep AS (UPDATE {S}.jobs j SET payload = $6, priority = $7, run_at = $11, max_retries = $8, \
        backoff_base_ms = $9, backoff_max_ms = $10, timeout_ms = $12, metadata = $13 \
      FROM p WHERE p.l IN ('r', 'x') AND j.id = p.holder AND j.status IN (0, 7) RETURNING j.id), \
    ev AS (INSERT INTO {S}.events (ns, kind, job_id, queue, task, attempt, at_ms, data) \
      SELECT $1, 'deduplicated', h.job_id, h.queue, h.task, h.attempt, $4, jsonb_build_object('key', $18::text) \
      FROM p JOIN h ON h.job_id = p.holder \
      WHERE p.l IN ('g', 'e', 'r', 'x') AND NOT EXISTS (SELECT 1 FROM {S}.events_off WHERE ns = $1))";

/// The statement's result row; with `notify`, it also sends the work NOTIFY (`$21` channel,
/// `$22` payload) when a job was inserted or a holder overwritten.
fn decide_sql(notify: bool) -> String {
    let mut sql = DECIDE_AND_WRITE.to_string();
    if notify {
        sql.push_str(
            ", n AS (SELECT pg_notify($21, $22) FROM p WHERE p.l = 'i' OR EXISTS (SELECT 1 FROM rep))",
        );
    }
    sql.push_str(" SELECT (SELECT task FROM rev LIMIT 1), p.l, p.holder, EXISTS (SELECT 1 FROM rep)");
    if notify {
        sql.push_str(", (SELECT count(*) FROM n)");
    }
    sql.push_str(" FROM (SELECT 1) AS one LEFT JOIN p ON true");
    sql
}

/// The dedup options of a batch this path takes: one job with a dedup key and no other
/// check (no unique key, dependency, stage or admission cap).
pub(crate) fn single_deduped(jobs: &[NewJob], max_pending: Option<u64>) -> Option<&DedupOptions> {
    let [j] = jobs else { return None };
    if max_pending.is_some() || j.unique_key.is_some() || !j.depends_on.is_empty() || stage_pair(j).is_some()
    {
        return None;
    }
    j.dedup.as_ref()
}

/// What the flight did.
pub(crate) struct Decided {
    pub(crate) enqueued: Enqueued,
    /// A job was inserted or a holder overwritten (work may have become due).
    pub(crate) work: bool,
}

impl PgStore {
    /// Enqueues `job` (which [`single_deduped`] accepted) in one flight; `None` when its plan
    /// is to queue behind a running holder, which this flight leaves to the general path
    /// (having written nothing). With `notify`, the statement sends the work NOTIFY itself.
    pub(crate) async fn enqueue_deduped(
        &self,
        c: &Conn,
        job: NewJob,
        now: i64,
        notify: bool,
    ) -> Result<Option<Decided>> {
        let Some(d) = job.dedup.clone() else { return Ok(None) };
        let ns: &str = &self.ns;
        let id = uid(&job.id)?;
        let job_id = job.id.clone();
        let lock = lock_key(self.schema(), ns, &d.id);
        let table = plan_table(&d);
        let expires = d.expires_at(now);
        let mut cols = Cols::default();
        cols.push(id, job, now)?;
        let channel = crate::wake::CHANNEL;
        let payload = self.shared.hub.work_payload(ns);
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![
            &ns,
            &cols.task[0],
            &cols.queue[0],
            &now,
            &cols.id[0],
            &cols.payload[0],
            &cols.priority[0],
            &cols.max_retries[0],
            &cols.bb[0],
            &cols.bm[0],
            &cols.run_at[0],
            &cols.timeout[0],
            &cols.metadata[0],
            &cols.grp[0],
            &cols.wr[0],
            &cols.ws[0],
            &cols.wv[0],
            &d.id,
            &table,
            &expires,
        ];
        if notify {
            params.extend([&channel as &(dyn ToSql + Sync), &payload]);
        }
        let stmts = [
            Stmt::new("enqueue", "SELECT pg_advisory_xact_lock($1)".to_string(), vec![&lock]),
            Stmt::new("enqueue", self.sql(&decide_sql(notify)), params),
        ];
        let rows = c.flight(Bracket::Whole, &stmts).await?;
        let row = rows.get(1).and_then(|r| r.first()).ok_or_else(|| {
            flexiq_core::Error::backend(format!("the dedup enqueue of job {job_id} returned no row"))
        })?;
        if let Some(task) = row.get::<_, Option<String>>(0) {
            return Err(revoked_error(&task));
        }
        let letter: Option<String> = row.get(1);
        let holder: Option<Uuid> = row.get(2);
        let replaced: bool = row.get(3);
        Ok(match (letter.as_deref(), holder) {
            (Some("i"), _) => Some(Decided { enqueued: Enqueued { id: job_id, created: true }, work: true }),
            (Some("b"), _) => None,
            (Some(_), Some(h)) => {
                Some(Decided { enqueued: Enqueued { id: jid(h), created: false }, work: replaced })
            }
            (l, h) => {
                return Err(flexiq_core::Error::backend(format!(
                    "the dedup enqueue of job {job_id} under key {} read plan {l:?} for holder {h:?}",
                    d.id
                )))
            }
        })
    }
}
