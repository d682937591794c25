//! Dedup records: [`Deduplication`] for [`PgStore`], and the part of enqueue that reads and
//! writes them ([`DedupBatch`]).
//!
//! A record (`dedup_keys`, migration 10) maps a namespace's key to the job holding it, its
//! queue and when the hold lapses. An enqueue carrying dedup keys first takes a
//! transaction-scoped advisory lock per key (in lock-key order, so two batches cannot
//! deadlock), which serializes every enqueue of one key even before its record exists; then it
//! reads the records and locks the holders' rows, so a holder cannot be claimed between the
//! read of its status and the decision. The lock and the reads go to the server as one
//! pipelined flight ([`DedupRead`]), and the writes ([`DedupWrites`]) ride with the batch's
//! insert, so dedup adds no round trip of its own. Each job of the batch, in batch order, is decided by
//! `flexiq_core::dedup::plan_dedup` against the record as the batch left it so far, and
//! exactly that plan is written. Removing a job deletes the records it holds (`remove.rs`,
//! retention and `purge_completed`).

use std::collections::{BTreeSet, HashMap};

use flexiq_core::cursor::fingerprint;
use flexiq_core::dedup::{plan_dedup, validate_dedup_key, DedupHold, DedupPlan};
use flexiq_core::flow::EdgePolicy;
use flexiq_core::store::{DedupJobIdRequest, Deduplication};
use flexiq_core::{JobId, JobStatus, NewJob, Result};
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::db::{jid, uid, Stmt};
use crate::enqueue::Cols;
use crate::row::status;
use crate::store::PgStore;

/// A key's record and its holder's status, in namespace `$1` for key `$2`; the holder's
/// status from the hot table, else the archive (NULL when the job is gone).
const READ_HOLD: &str = "SELECT d.job_id, d.expires_at, coalesce(j.status, a.status) FROM {S}.dedup_keys d \
    LEFT JOIN {S}.jobs j ON j.id = d.job_id AND j.namespace = d.namespace \
    LEFT JOIN {S}.archived_jobs a ON a.id = d.job_id AND a.namespace = d.namespace \
    WHERE d.namespace = $1 AND d.key = $2";

/// Takes the advisory locks `$1` in order.
const LOCK_KEYS: &str =
    "SELECT pg_advisory_xact_lock(k) FROM (SELECT k FROM unnest($1::int8[]) AS k ORDER BY k OFFSET 0) AS s";

/// The records of keys `$2` in namespace `$1` with their holders' statuses, each live holder
/// locked (in id order, so two batches cannot deadlock on them); the status comes from the hot
/// table, else the archive, and is NULL when the holder is gone. Each holder is reached by its
/// id, so the read costs one index probe per key however large the tables grow (the keys are
/// found by the primary key, not by walking the job index in id order: `OFFSET 0` keeps the
/// sort above the lookup).
const RECORDS: &str = "WITH r AS MATERIALIZED (SELECT * FROM (SELECT key, job_id, queue, expires_at FROM {S}.dedup_keys \
      WHERE namespace = $1 AND key = ANY($2) OFFSET 0) AS k ORDER BY job_id) \
    SELECT r.key, r.job_id, r.queue, r.expires_at, coalesce(h.status, a.status) FROM r \
    LEFT JOIN LATERAL (SELECT j.status FROM {S}.jobs j WHERE j.id = r.job_id AND j.namespace = $1 FOR UPDATE) h ON true \
    LEFT JOIN LATERAL (SELECT x.status FROM {S}.archived_jobs x WHERE x.id = r.job_id AND x.namespace = $1) a ON true";

/// Writes records in namespace `$1`.
const UPSERT: &str = "INSERT INTO {S}.dedup_keys (namespace, key, job_id, queue, expires_at) \
    SELECT $1, u.key, u.job_id, u.queue, u.expires_at \
    FROM unnest($2::text[], $3::uuid[], $4::text[], $5::int8[]) AS u(key, job_id, queue, expires_at) \
    ON CONFLICT (namespace, key) DO UPDATE SET job_id = excluded.job_id, queue = excluded.queue, \
      expires_at = excluded.expires_at";

/// Gives the unstarted holders `$1` the payload and options of the jobs that replaced them.
const REPLACE: &str = "UPDATE {S}.jobs AS j SET payload = u.payload, priority = u.priority, run_at = u.run_at, \
      max_retries = u.max_retries, backoff_base_ms = u.bb, backoff_max_ms = u.bm, timeout_ms = u.timeout, \
      metadata = u.metadata \
    FROM unnest($1::uuid[], $2::bytea[], $3::int4[], $4::int8[], $5::int4[], $6::int8[], $7::int8[], $8::int8[], \
      $9::text[]) AS u(id, payload, priority, run_at, max_retries, bb, bm, timeout, metadata) \
    WHERE j.id = u.id AND j.status IN (0, 7) RETURNING j.id";

/// The advisory lock of one key of one namespace in one schema.
pub(crate) fn lock_key(schema: &str, ns: &str, key: &str) -> i64 {
    fingerprint(&["flexiq-dedup", schema, ns, key]) as i64
}

/// A key's record as the batch sees it.
struct Record {
    hold: DedupHold,
    queue: String,
    /// Changed by the batch: written back at the end.
    dirty: bool,
}

/// Where an enqueued job went.
pub(crate) enum Placed {
    /// Insert it (with any edge the plan added).
    Insert,
    /// Insert nothing: the holder stands for it.
    Ignored(Uuid),
}

/// The dedup records an enqueue batch reads and writes, locked for its transaction.
#[derive(Default)]
pub(crate) struct DedupBatch {
    records: HashMap<String, Record>,
    /// Holders to overwrite, each with the last job that replaced it.
    replace: HashMap<Uuid, NewJob>,
}

/// Gives `target` the payload and options of `from` (its id, queue and task stay).
fn replace_fields(target: &mut NewJob, from: NewJob) {
    target.payload = from.payload;
    target.priority = from.priority;
    target.run_at = from.run_at;
    target.max_retries = from.max_retries;
    target.backoff = from.backoff;
    target.timeout_ms = from.timeout_ms;
    target.metadata = from.metadata;
}

/// The keys an enqueue batch carries, and the flight that locks and reads them.
pub(crate) struct DedupRead {
    keys: Vec<String>,
    locks: Vec<i64>,
}

impl DedupRead {
    /// The keys `jobs` carry; `None` when no job carries one.
    pub(crate) fn of(store: &PgStore, jobs: &[NewJob]) -> Option<DedupRead> {
        let keys: Vec<String> = jobs
            .iter()
            .filter_map(|j| j.dedup.as_ref().map(|d| d.id.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if keys.is_empty() {
            return None;
        }
        let mut locks: Vec<i64> = keys.iter().map(|k| lock_key(store.schema(), &store.ns, k)).collect();
        locks.sort_unstable();
        locks.dedup();
        Some(DedupRead { keys, locks })
    }

    /// The two statements, in order: take the key locks, then read the records and lock their
    /// holders. `ns` is the namespace parameter.
    pub(crate) fn stmts<'a>(&'a self, store: &PgStore, ns: &'a (dyn ToSql + Sync)) -> Vec<Stmt<'a>> {
        let what = "enqueue";
        vec![
            Stmt::new(what, LOCK_KEYS.to_string(), vec![&self.locks]),
            Stmt::new(what, store.sql(RECORDS), vec![ns, &self.keys]),
        ]
    }
}

impl DedupBatch {
    /// The batch's view of its records from the rows of [`DedupRead::stmts`]' read.
    pub(crate) fn from_rows(records: &[Row]) -> Result<DedupBatch> {
        let mut map = HashMap::with_capacity(records.len());
        for r in records {
            let hold = DedupHold {
                job_id: jid(r.get(1)),
                expires_at: r.get(3),
                holder_status: r.get::<_, Option<i16>>(4).map(status).transpose()?,
            };
            map.insert(r.get::<_, String>(0), Record { hold, queue: r.get(2), dirty: false });
        }
        Ok(DedupBatch { records: map, replace: HashMap::new() })
    }

    /// Decides `job` (id `id`) against its key's record at `now` and notes what the plan
    /// writes. A job queued behind a running holder gets the edge on it here
    /// (`ignore_dependency`, so it runs however the holder ends).
    pub(crate) fn place(&mut self, id: Uuid, job: &mut NewJob, now: i64) -> Result<Placed> {
        let Some(d) = job.dedup.clone() else { return Ok(Placed::Insert) };
        let record = self.records.get_mut(&d.id);
        let plan = plan_dedup(&d, record.as_ref().map(|r| &r.hold), now);
        let (expires_at, status) = match plan {
            DedupPlan::Insert { expires_at } => (expires_at, JobStatus::Pending),
            DedupPlan::Ignore { holder, extend_to, replace } => {
                let h = uid(&holder)?;
                if let (Some(r), Some(at)) = (record, extend_to) {
                    r.hold.expires_at = Some(at);
                    r.dirty = true;
                }
                if replace {
                    self.replace.insert(h, job.clone());
                }
                return Ok(Placed::Ignored(h));
            }
            DedupPlan::InsertBehind { holder } => {
                if job.dep_policies.is_empty() {
                    job.dep_policies = vec![EdgePolicy::CancelDependent; job.depends_on.len()];
                }
                job.depends_on.push(holder);
                job.dep_policies.push(EdgePolicy::IgnoreDependency);
                (d.expires_at(now), JobStatus::Waiting)
            }
        };
        let hold = DedupHold { job_id: jid(id), expires_at, holder_status: Some(status) };
        self.records.insert(d.id, Record { hold, queue: job.queue.clone(), dirty: true });
        Ok(Placed::Insert)
    }

    /// Applies the replacements whose holder is a job of the batch itself to that job.
    pub(crate) fn replace_in_batch(&mut self, creating: &mut [(Uuid, NewJob)]) {
        for (id, j) in creating.iter_mut() {
            if let Some(from) = self.replace.remove(id) {
                replace_fields(j, from);
            }
        }
    }

    /// What the batch writes: the changed records, and the existing holders it replaces.
    pub(crate) fn writes(self, now: i64) -> Result<DedupWrites> {
        let mut w = DedupWrites::default();
        for (key, r) in self.records.into_iter().filter(|(_, r)| r.dirty) {
            w.keys.push(key);
            w.ids.push(uid(&r.hold.job_id)?);
            w.queues.push(r.queue);
            w.expiry.push(r.hold.expires_at);
        }
        let mut holders: Vec<(Uuid, NewJob)> = self.replace.into_iter().collect();
        holders.sort_by_key(|h| h.0);
        for (h, j) in holders {
            w.replaced.push(h, j, now)?;
        }
        Ok(w)
    }
}

/// The writes of a [`DedupBatch`], as column arrays for its statements.
#[derive(Default)]
pub(crate) struct DedupWrites {
    keys: Vec<String>,
    ids: Vec<Uuid>,
    queues: Vec<String>,
    expiry: Vec<Option<i64>>,
    /// The holders to overwrite (`id`) with the fields they take.
    replaced: Cols,
}

impl DedupWrites {
    /// The upsert of the changed records, when there is one.
    pub(crate) fn records<'a>(&'a self, store: &PgStore, ns: &'a (dyn ToSql + Sync)) -> Option<Stmt<'a>> {
        (!self.keys.is_empty()).then(|| {
            Stmt::new(
                "enqueue",
                store.sql(UPSERT),
                vec![ns, &self.keys, &self.ids, &self.queues, &self.expiry],
            )
        })
    }

    /// The overwrite of the replaced holders, when there is one; it returns a row per holder
    /// overwritten (one that had not started yet, and may have become due).
    pub(crate) fn replacements<'a>(&'a self, store: &PgStore) -> Option<Stmt<'a>> {
        let r = &self.replaced;
        (!r.id.is_empty()).then(|| {
            Stmt::new(
                "enqueue",
                store.sql(REPLACE),
                vec![
                    &r.id,
                    &r.payload,
                    &r.priority,
                    &r.run_at,
                    &r.max_retries,
                    &r.bb,
                    &r.bm,
                    &r.timeout,
                    &r.metadata,
                ],
            )
        })
    }
}

#[async_trait::async_trait]
impl Deduplication for PgStore {
    async fn dedup_job_id(&self, req: DedupJobIdRequest) -> Result<Option<JobId>> {
        req.validate()?;
        let ns: &str = &self.ns;
        let c = self.conn().await?;
        let Some(r) = c.opt("read dedup key", &self.sql(READ_HOLD), &[&ns, &req.key]).await? else {
            return Ok(None);
        };
        let holder_status = r.get::<_, Option<i16>>(2).map(status).transpose()?;
        let hold = DedupHold { job_id: jid(r.get(0)), expires_at: r.get(1), holder_status };
        Ok(hold.is_live(req.now).then_some(hold.job_id))
    }

    async fn delete_dedup_key(&self, key: &str) -> Result<bool> {
        validate_dedup_key(key)?;
        let ns: &str = &self.ns;
        let sql = self.sql("DELETE FROM {S}.dedup_keys WHERE namespace = $1 AND key = $2");
        let c = self.conn().await?;
        Ok(c.exec("delete dedup key", &sql, &[&ns, &key]).await? > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexiq_core::dedup::{DedupMode, DedupOptions};
    use flexiq_core::EnqueueOptions;

    fn job(payload: &str, mode: DedupMode, ttl_ms: Option<u64>, replace: bool) -> NewJob {
        let dedup = DedupOptions { id: "k".into(), mode, ttl_ms, extend: false, replace };
        let opts = EnqueueOptions { dedup: Some(dedup), ..Default::default() };
        NewJob::build("t", payload.as_bytes().to_vec(), opts, 0).unwrap()
    }

    #[test]
    fn a_later_job_of_the_batch_sees_the_key_an_earlier_one_took() {
        let mut b = DedupBatch::default();
        let mut first = job("a", DedupMode::Debounce, Some(100), true);
        let first_id = uid(&first.id).unwrap();
        assert!(matches!(b.place(first_id, &mut first, 0).unwrap(), Placed::Insert));
        let mut second = job("b", DedupMode::Debounce, Some(100), true);
        let second_id = uid(&second.id).unwrap();
        assert!(matches!(b.place(second_id, &mut second, 10).unwrap(), Placed::Ignored(h) if h == first_id));
        let mut creating = vec![(first_id, first)];
        b.replace_in_batch(&mut creating);
        assert_eq!(creating[0].1.payload, b"b", "the unstarted holder of the batch takes the payload");
        assert!(b.replace.is_empty());
    }

    #[test]
    fn a_job_behind_a_running_holder_waits_on_it_whatever_it_ends() {
        let holder = Uuid::now_v7();
        let hold =
            DedupHold { job_id: jid(holder), expires_at: None, holder_status: Some(JobStatus::Running) };
        let mut b = DedupBatch::default();
        b.records.insert("k".into(), Record { hold, queue: "default".into(), dirty: false });
        let mut j = job("a", DedupMode::KeepLastIfActive, None, false);
        let id = uid(&j.id).unwrap();
        assert!(matches!(b.place(id, &mut j, 0).unwrap(), Placed::Insert));
        assert_eq!(j.depends_on, vec![jid(holder)]);
        assert_eq!(j.dep_policies, vec![EdgePolicy::IgnoreDependency]);
        let r = &b.records["k"];
        assert!(r.dirty && r.hold.job_id == jid(id) && r.hold.holder_status == Some(JobStatus::Waiting));
    }

    #[test]
    fn lock_keys_differ_per_schema_namespace_and_key() {
        let base = lock_key("s", "ns", "k");
        assert_ne!(base, lock_key("s2", "ns", "k"));
        assert_ne!(base, lock_key("s", "ns2", "k"));
        assert_ne!(base, lock_key("s", "ns", "k2"));
    }
}
