//! Dedup records: [`Deduplication`] for [`PgStore`], and the part of enqueue that reads and
//! writes them ([`DedupBatch`]).
//!
//! A record (`dedup_keys`, migration 10) maps a namespace's key to the job holding it, its
//! queue and when the hold lapses. An enqueue carrying dedup keys first takes a
//! transaction-scoped advisory lock per key (in lock-key order, so two batches cannot
//! deadlock), which serializes every enqueue of one key even before its record exists; then it
//! reads the records and locks the holders' rows, so a holder cannot be claimed between the
//! read of its status and the decision. Each job of the batch, in batch order, is decided by
//! `flexiq_core::dedup::plan_dedup` against the record as the batch left it so far, and
//! exactly that plan is written. Removing a job deletes the records it holds (`remove.rs`,
//! retention and `purge_completed`).

use std::collections::{BTreeSet, HashMap};

use flexiq_core::cursor::fingerprint;
use flexiq_core::dedup::{plan_dedup, validate_dedup_key, DedupHold, DedupPlan};
use flexiq_core::flow::EdgePolicy;
use flexiq_core::store::{placed_run_at, DedupJobIdRequest, Deduplication};
use flexiq_core::{Error, JobId, JobStatus, NewJob, Result};
use uuid::Uuid;

use crate::db::{i64_of, jid, uid, Conn};
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

/// The records of keys `$2` in namespace `$1`.
const RECORDS: &str =
    "SELECT key, job_id, queue, expires_at FROM {S}.dedup_keys WHERE namespace = $1 AND key = ANY($2)";

/// Locks the live holders `$2` of namespace `$1` in id order.
const LOCK_HOLDERS: &str =
    "SELECT id, status FROM {S}.jobs WHERE namespace = $1 AND id = ANY($2) ORDER BY id FOR UPDATE";

/// The archived holders among `$2`.
const ARCHIVED_HOLDERS: &str =
    "SELECT id, status FROM {S}.archived_jobs WHERE namespace = $1 AND id = ANY($2)";

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
    WHERE j.id = u.id AND j.status IN (0, 7)";

/// The advisory lock of one key of one namespace in one schema.
fn lock_key(schema: &str, ns: &str, key: &str) -> i64 {
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

impl DedupBatch {
    /// Locks the keys `jobs` carry and reads their records and holders, inside the open
    /// transaction; empty when no job carries one.
    pub(crate) async fn load(store: &PgStore, c: &Conn, jobs: &[NewJob]) -> Result<DedupBatch> {
        let keys: Vec<&str> = jobs
            .iter()
            .filter_map(|j| j.dedup.as_ref().map(|d| d.id.as_str()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if keys.is_empty() {
            return Ok(DedupBatch::default());
        }
        let ns: &str = &store.ns;
        let what = "enqueue";
        let mut locks: Vec<i64> = keys.iter().map(|k| lock_key(store.schema(), ns, k)).collect();
        locks.sort_unstable();
        locks.dedup();
        c.exec(what, LOCK_KEYS, &[&locks]).await?;
        let rows = c.rows(what, &store.sql(RECORDS), &[&ns, &keys]).await?;
        let holders: Vec<Uuid> = rows.iter().map(|r| r.get(1)).collect::<BTreeSet<_>>().into_iter().collect();
        let mut statuses: HashMap<Uuid, JobStatus> = HashMap::new();
        if !holders.is_empty() {
            for r in c.rows(what, &store.sql(LOCK_HOLDERS), &[&ns, &holders]).await? {
                statuses.insert(r.get(0), status(r.get(1))?);
            }
            let gone: Vec<Uuid> = holders.iter().filter(|h| !statuses.contains_key(h)).copied().collect();
            if !gone.is_empty() {
                for r in c.rows(what, &store.sql(ARCHIVED_HOLDERS), &[&ns, &gone]).await? {
                    statuses.insert(r.get(0), status(r.get(1))?);
                }
            }
        }
        let mut records = HashMap::with_capacity(rows.len());
        for r in &rows {
            let holder: Uuid = r.get(1);
            let hold = DedupHold {
                job_id: jid(holder),
                expires_at: r.get(3),
                holder_status: statuses.get(&holder).copied(),
            };
            records.insert(r.get::<_, String>(0), Record { hold, queue: r.get(2), dirty: false });
        }
        Ok(DedupBatch { records, replace: HashMap::new() })
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

    /// Writes the changed records and overwrites the existing holders being replaced, inside
    /// the open transaction; true when a holder was overwritten (it may have become due).
    pub(crate) async fn write(self, store: &PgStore, c: &Conn, now: i64) -> Result<bool> {
        let ns: &str = &store.ns;
        let what = "enqueue";
        let (mut keys, mut ids, mut queues, mut expiry) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (key, r) in self.records.into_iter().filter(|(_, r)| r.dirty) {
            keys.push(key);
            ids.push(uid(&r.hold.job_id)?);
            queues.push(r.queue);
            expiry.push(r.hold.expires_at);
        }
        if !keys.is_empty() {
            c.exec(what, &store.sql(UPSERT), &[&ns, &keys, &ids, &queues, &expiry]).await?;
        }
        if self.replace.is_empty() {
            return Ok(false);
        }
        let mut holders: Vec<(Uuid, NewJob)> = self.replace.into_iter().collect();
        holders.sort_by_key(|h| h.0);
        let n = holders.len();
        let (mut id, mut payload, mut priority, mut run_at) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut retries, mut bb, mut bm, mut timeout, mut metadata) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (h, j) in holders {
            id.push(h);
            priority.push(j.priority);
            run_at.push(placed_run_at(j.run_at, now));
            retries.push(i32::try_from(j.max_retries).map_err(|_| {
                Error::invalid(format!("max_retries {} of job {} is too large", j.max_retries, j.id))
            })?);
            bb.push(i64_of("backoff base ms", j.backoff.base_ms)?);
            bm.push(i64_of("backoff max ms", j.backoff.max_ms)?);
            timeout.push(j.timeout_ms.map(|t| i64_of("timeout ms", t)).transpose()?);
            payload.push(j.payload);
            metadata.push(j.metadata);
        }
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] =
            [&id, &payload, &priority, &run_at, &retries, &bb, &bm, &timeout, &metadata];
        Ok(c.exec(what, &store.sql(REPLACE), &params).await? > 0)
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
