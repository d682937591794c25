//! Enqueue: one multi-row statement (UNNEST arrays) per batch, or `COPY` for large ones.
//!
//! A batch without unique keys, dedup keys, workflow stages, dependencies or an admission cap
//! is a single autocommitted statement (from `COPY_MIN_JOBS` jobs on, a `COPY` in a short
//! transaction instead, see `enqueue_copy.rs`) that checks revoked tasks, registers queues and
//! inserts every row.
//! A single job whose only check is a dedup key takes one flight of its own (`enqueue_dedup.rs`).
//! Batches that need more (dedupe against live jobs, dedup records read and written under
//! their key's lock (see `dedup.rs`), a (run, stage) pair that must not have a row yet,
//! dependency edges, `max_pending` checked under the queue's row lock) run the same insert
//! inside a transaction after those checks.
//!
//! The batch's own rules (valid jobs, no id twice, dependencies only on earlier jobs, flow
//! policies only on edges to earlier jobs) are `EnqueueRequest::validate` in core. A job with
//! dependencies starts where its edges put it (`flows::standing` over the dependencies'
//! statuses read under lock, or decided earlier in the batch, and each edge's policy); when a
//! dependency already failed under a policy that ends the job, that event goes through the
//! state machine before the insert; the row is inserted waiting and moved where the event left
//! it (cancelled or failed) by an update in the same flight, so the events triggers write
//! `enqueued` and then the ending event, as the other stores do. Each
//! edge is written with its policy code. A LIFO job is placed at the enqueue's own time
//! ([`placed_run_at`]), so later enqueues claim first.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use flexiq_core::flow::EdgePolicy;
use flexiq_core::start::DependencyClass;
use flexiq_core::store::{placed_run_at, EnqueueRequest, Enqueued};
use flexiq_core::transition::{transition, JobState};
use flexiq_core::{Error, JobStatus, NewJob, Result};
use uuid::Uuid;

use crate::db::{i64_of, jid, uid, Bracket, Conn, Stmt};
use crate::dedup::{DedupBatch, DedupRead, Placed};
use crate::flows::{policy_code, standing, EdgeView, Standing};
use crate::row::{code, status};
use crate::store::PgStore;
use crate::workflow::stage_pair;

/// The inserts of a simple batch; the statement then selects refused (revoked) tasks.
const FAST_INSERT_CTES: &str = "WITH rev AS (SELECT task FROM {S}.revoked_tasks WHERE namespace = $1 AND task = ANY($2::text[])), \
    q AS (INSERT INTO {S}.queues (namespace, queue) SELECT $1, x FROM unnest($3::text[]) AS x \
          WHERE NOT EXISTS (SELECT 1 FROM rev) ON CONFLICT DO NOTHING), \
    ins AS (INSERT INTO {S}.jobs (id, namespace, queue, task, payload, priority, status, max_retries, \
          backoff_base_ms, backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key, workflow_run_id, workflow_stage_id, \
          workflow_version) \
        SELECT u.id, $1, u.queue, u.task, u.payload, u.priority, 0, u.max_retries, u.bb, u.bm, $4, u.run_at, \
          u.timeout, u.metadata, u.grp, u.wr, u.ws, u.wv \
        FROM unnest($5::uuid[], $6::text[], $7::text[], $8::bytea[], $9::int4[], $10::int4[], $11::int8[], \
          $12::int8[], $13::int8[], $14::int8[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[]) \
          AS u(id, queue, task, payload, priority, max_retries, bb, bm, run_at, timeout, metadata, grp, wr, ws, wv) \
        WHERE NOT EXISTS (SELECT 1 FROM rev))";

/// The statement for a simple batch: refused tasks come back as rows. With `notify`, it also
/// sends the work NOTIFY (`$20` channel, `$21` payload) when nothing was refused; that row
/// has a NULL task.
fn fast_insert_sql(notify: bool) -> String {
    let mut sql = format!("{FAST_INSERT_CTES} SELECT task FROM rev");
    if notify {
        sql.push_str(
            " UNION ALL SELECT NULL::text FROM (SELECT pg_notify($20, $21)) AS n WHERE NOT EXISTS (SELECT 1 FROM rev)",
        );
    }
    sql
}

/// The insert of a batch that needed checks; with `skip_taken`, a row whose unique key or
/// stage another job took meanwhile is skipped (the caller checks the returned ids), else
/// such a conflict fails the statement.
fn full_insert_sql(skip_taken: bool) -> String {
    let mut sql = FULL_INSERT_ROWS.to_string();
    if skip_taken {
        sql.push_str(" ON CONFLICT DO NOTHING");
    }
    sql.push_str(" RETURNING id");
    sql
}

const FULL_INSERT_ROWS: &str = "INSERT INTO {S}.jobs (id, namespace, queue, task, payload, priority, status, max_retries, \
      backoff_base_ms, backoff_max_ms, created_at, run_at, timeout_ms, metadata, group_key, workflow_run_id, \
      workflow_stage_id, unique_key, depends_on, has_dependents, finished_at, last_error, workflow_version) \
    SELECT u.id, $1, u.queue, u.task, u.payload, u.priority, u.status, u.max_retries, u.bb, u.bm, $2, u.run_at, \
      u.timeout, u.metadata, u.grp, u.wr, u.ws, u.ukey, \
      CASE WHEN u.deps = '' THEN '{}'::uuid[] ELSE string_to_array(u.deps, ',')::uuid[] END, \
      u.has_deps, u.finished_at, u.last_error, u.wv \
    FROM unnest($3::uuid[], $4::text[], $5::text[], $6::bytea[], $7::int4[], $8::int2[], $9::int4[], $10::int8[], \
      $11::int8[], $12::int8[], $13::int8[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], \
      $19::text[], $20::bool[], $21::int8[], $22::text[], $23::text[]) \
      AS u(id, queue, task, payload, priority, status, max_retries, bb, bm, run_at, timeout, metadata, grp, wr, ws, \
        ukey, deps, has_deps, finished_at, last_error, wv)";

/// Column arrays of the common insert fields.
#[derive(Default)]
pub(crate) struct Cols {
    pub(crate) id: Vec<Uuid>,
    pub(crate) queue: Vec<String>,
    pub(crate) task: Vec<String>,
    pub(crate) payload: Vec<Vec<u8>>,
    pub(crate) priority: Vec<i32>,
    pub(crate) max_retries: Vec<i32>,
    pub(crate) bb: Vec<i64>,
    pub(crate) bm: Vec<i64>,
    pub(crate) run_at: Vec<i64>,
    pub(crate) timeout: Vec<Option<i64>>,
    pub(crate) metadata: Vec<Option<String>>,
    pub(crate) grp: Vec<Option<String>>,
    pub(crate) wr: Vec<Option<String>>,
    pub(crate) ws: Vec<Option<String>>,
    pub(crate) wv: Vec<Option<String>>,
}

impl Cols {
    pub(crate) fn push(&mut self, id: Uuid, j: NewJob, now: i64) -> Result<()> {
        self.id.push(id);
        self.priority.push(j.priority);
        self.max_retries.push(i32::try_from(j.max_retries).map_err(|_| {
            Error::invalid(format!("max_retries {} of job {} is too large", j.max_retries, j.id))
        })?);
        self.bb.push(i64_of("backoff base ms", j.backoff.base_ms)?);
        self.bm.push(i64_of("backoff max ms", j.backoff.max_ms)?);
        self.run_at.push(placed_run_at(j.run_at, now));
        self.timeout.push(j.timeout_ms.map(|t| i64_of("timeout ms", t)).transpose()?);
        self.queue.push(j.queue);
        self.task.push(j.task);
        self.payload.push(j.payload);
        self.metadata.push(j.metadata);
        self.grp.push(j.group_key);
        self.wr.push(j.workflow_run_id);
        self.ws.push(j.workflow_stage_id);
        self.wv.push(j.workflow_version);
        Ok(())
    }
}

/// Whose transaction a checked enqueue ([`PgStore::enqueue_checked`]) runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxScope {
    /// Its own: opened with its first flight and committed with its last, or by the caller's
    /// `tx_lazy` wrapper.
    Own,
    /// The caller's, already open, which the caller commits or rolls back.
    Caller,
}

/// The error for a batch naming a revoked task: the whole batch is refused.
pub(crate) fn revoked_error(task: &str) -> Error {
    Error::TaskRevoked { task: task.to_string() }
}

impl PgStore {
    pub(crate) async fn enqueue_jobs(&self, req: EnqueueRequest) -> Result<Vec<Enqueued>> {
        req.validate()?;
        if req.jobs.is_empty() {
            return Ok(Vec::new());
        }
        let simple = req.max_pending.is_none()
            && req.jobs.iter().all(|j| {
                j.unique_key.is_none()
                    && j.dedup.is_none()
                    && j.depends_on.is_empty()
                    && stage_pair(j).is_none()
            });
        let c = self.conn().await?;
        if simple {
            // Held until the jobs are published: one simple enqueue at a time sends its work
            // NOTIFY from its own statement.
            let inline = self.shared.hub.try_inline();
            let notify = inline.is_some();
            let ns: &str = &self.ns;
            let out = if req.jobs.len() >= crate::enqueue_copy::COPY_MIN_JOBS {
                self.enqueue_copy(&c, req.jobs, req.now, notify).await?.map_err(|t| revoked_error(&t))?
            } else {
                self.enqueue_fast(&c, req, notify).await?
            };
            if notify {
                self.shared.hub.publish_notified(ns);
            } else {
                self.shared.hub.publish(ns, true, &[]);
            }
            return Ok(out);
        }
        if crate::enqueue_dedup::single_deduped(&req.jobs, req.max_pending).is_some() {
            let inline = self.shared.hub.try_inline();
            let notify = inline.is_some();
            let job = req.jobs[0].clone();
            if let Some(d) = self.enqueue_deduped(&c, job, req.now, notify).await? {
                if notify && d.work {
                    self.shared.hub.publish_notified(&self.ns);
                } else if d.work {
                    self.shared.hub.publish(&self.ns, true, &[]);
                } else {
                    self.shared.hub.publish_events(&self.ns);
                }
                return Ok(vec![d.enqueued]);
            }
        }
        let (out, replaced) = self.enqueue_full(&c, req).await?;
        let created = out.iter().any(|e| e.created);
        if created || replaced {
            self.shared.hub.publish(&self.ns, true, &[]);
        } else {
            // Every job was absorbed: only their events are new.
            self.shared.hub.publish_events(&self.ns);
        }
        Ok(out)
    }

    /// Inserts a simple batch in one autocommitted statement; with `notify`, the statement
    /// also sends the work NOTIFY, so other processes hear of the jobs at commit. The caller
    /// publishes the jobs in-process.
    async fn enqueue_fast(&self, c: &Conn, req: EnqueueRequest, notify: bool) -> Result<Vec<Enqueued>> {
        let n = req.jobs.len();
        let mut cols = Cols::default();
        let mut out = Vec::with_capacity(n);
        for j in req.jobs {
            let id = uid(&j.id)?;
            out.push(Enqueued { id: j.id.clone(), created: true });
            cols.push(id, j, req.now)?;
        }
        let tasks: Vec<&String> = cols.task.iter().collect::<BTreeSet<_>>().into_iter().collect();
        let queues: Vec<&String> = cols.queue.iter().collect::<BTreeSet<_>>().into_iter().collect();
        let ns: &str = &self.ns;
        let payload = self.shared.hub.work_payload(ns);
        let channel = crate::wake::CHANNEL;
        let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
            &ns,
            &tasks,
            &queues,
            &req.now,
            &cols.id,
            &cols.queue,
            &cols.task,
            &cols.payload,
            &cols.priority,
            &cols.max_retries,
            &cols.bb,
            &cols.bm,
            &cols.run_at,
            &cols.timeout,
            &cols.metadata,
            &cols.grp,
            &cols.wr,
            &cols.ws,
            &cols.wv,
        ];
        if notify {
            params.extend([&channel as &(dyn tokio_postgres::types::ToSql + Sync), &payload]);
        }
        let rows = c.rows("enqueue", &self.sql(&fast_insert_sql(notify)), &params).await?;
        if let Some(task) = rows.iter().find_map(|r| r.get::<_, Option<String>>(0)) {
            return Err(revoked_error(&task));
        }
        Ok(out)
    }

    /// Enqueues a batch that needs checks first, in one transaction; also says whether a
    /// deduplicated job overwrote a holder (which may have become due).
    async fn enqueue_full(&self, c: &Conn, req: EnqueueRequest) -> Result<(Vec<Enqueued>, bool)> {
        self.enqueue_checked(c, req, TxScope::Own).await
    }

    /// The checks and writes of [`PgStore::enqueue_full`], in a transaction of their own or,
    /// with [`TxScope::Caller`], inside the caller's open one, which they neither open nor
    /// commit (the scheduler fires its slots so, beside the write that advances it); on an
    /// error the caller rolls back.
    pub(crate) async fn enqueue_checked(
        &self,
        c: &Conn,
        req: EnqueueRequest,
        scope: TxScope,
    ) -> Result<(Vec<Enqueued>, bool)> {
        let ns: &str = &self.ns;
        let now = req.now;
        let body = async {
            // One flight opens the transaction and reads what the decisions need: revoked
            // tasks, live unique keys, and the dedup records under their key locks.
            let tasks: Vec<&String> =
                req.jobs.iter().map(|j| &j.task).collect::<BTreeSet<_>>().into_iter().collect();
            let keys: Vec<&String> = req.jobs.iter().filter_map(|j| j.unique_key.as_ref()).collect();
            let dedup_read = DedupRead::of(self, &req.jobs);
            let mut reads = vec![Stmt::new(
                "enqueue",
                self.sql(
                    "SELECT task FROM {S}.revoked_tasks WHERE namespace = $1 AND task = ANY($2) LIMIT 1",
                ),
                vec![&ns, &tasks],
            )];
            if !keys.is_empty() {
                reads.push(Stmt::new(
                    "enqueue",
                    self.sql(
                        "SELECT unique_key, id FROM {S}.jobs WHERE namespace = $1 AND unique_key = ANY($2) AND status IN (0, 1, 6, 7)",
                    ),
                    vec![&ns, &keys],
                ));
            }
            if let Some(d) = &dedup_read {
                reads.extend(d.stmts(self, &ns));
            }
            let open = if scope == TxScope::Own { Bracket::Begin } else { Bracket::Inside };
            let mut read = c.flight(open, &reads).await?.into_iter();
            if let Some(r) = read.next().unwrap_or_default().first() {
                return Err(revoked_error(r.get(0)));
            }
            // Unique keys against live jobs, then within the batch.
            let mut live: HashMap<String, Uuid> = HashMap::new();
            if !keys.is_empty() {
                for r in read.next().unwrap_or_default() {
                    live.insert(r.get(0), r.get(1));
                }
            }
            // Dedup records, then each job decided in batch order.
            let mut dedup = match dedup_read {
                Some(_) => {
                    let records = read.nth(1).unwrap_or_default();
                    DedupBatch::from_rows(&records)?
                }
                None => DedupBatch::default(),
            };
            let mut out = Vec::with_capacity(req.jobs.len());
            let mut alias: HashMap<Uuid, Uuid> = HashMap::new();
            // The jobs that absorbed an enqueue, with the key they held, for their events.
            let (mut absorbed, mut absorbed_keys): (Vec<Uuid>, Vec<String>) = (Vec::new(), Vec::new());
            let mut creating: Vec<(Uuid, NewJob)> = Vec::new();
            for mut j in req.jobs {
                let id = uid(&j.id)?;
                if let Some(k) = &j.unique_key {
                    if let Some(existing) = live.get(k) {
                        alias.insert(id, *existing);
                        out.push(Enqueued { id: jid(*existing), created: false });
                        absorbed.push(*existing);
                        absorbed_keys.push(k.clone());
                        continue;
                    }
                    live.insert(k.clone(), id);
                }
                let key = j.dedup.as_ref().map(|d| d.id.clone());
                if let Placed::Ignored(holder) = dedup.place(id, &mut j, now)? {
                    alias.insert(id, holder);
                    out.push(Enqueued { id: jid(holder), created: false });
                    absorbed.push(holder);
                    absorbed_keys.extend(key);
                    continue;
                }
                out.push(Enqueued { id: j.id.clone(), created: true });
                creating.push((id, j));
            }
            dedup.replace_in_batch(&mut creating);
            // Dependencies: earlier jobs of the batch (validated), or existing jobs locked and
            // flagged. A dependency on a deduplicated job of the batch is one on the live job.
            let batch_pos: HashMap<Uuid, usize> =
                creating.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
            let mut external: BTreeSet<Uuid> = BTreeSet::new();
            let mut deps_of: Vec<Vec<(Uuid, EdgePolicy)>> = Vec::with_capacity(creating.len());
            for (_, j) in &creating {
                let mut deps = Vec::with_capacity(j.depends_on.len());
                for (k, d) in j.depends_on.iter().enumerate() {
                    let d = uid(d)?;
                    let d = alias.get(&d).copied().unwrap_or(d);
                    if !batch_pos.contains_key(&d) {
                        external.insert(d);
                    }
                    deps.push((d, j.dep_policies.get(k).copied().unwrap_or_default()));
                }
                deps_of.push(deps);
            }
            let mut dep_status: HashMap<Uuid, (JobStatus, Option<String>)> = HashMap::new();
            if !external.is_empty() {
                let ext: Vec<Uuid> = external.iter().copied().collect();
                let sql = self.sql(
                    "UPDATE {S}.jobs SET has_dependents = true WHERE id IN \
                     (SELECT id FROM {S}.jobs WHERE namespace = $1 AND id = ANY($2) ORDER BY id FOR UPDATE) \
                     RETURNING id, status, last_error",
                );
                for r in c.rows("enqueue", &sql, &[&ns, &ext]).await? {
                    dep_status.insert(r.get(0), (status(r.get(1))?, r.get(2)));
                }
                // A dependency only the archive holds is finished: its edge is decided by the
                // status it was archived with, as on every store.
                let gone: Vec<Uuid> = ext.iter().filter(|d| !dep_status.contains_key(d)).copied().collect();
                if !gone.is_empty() {
                    let sql = self.sql(
                        "SELECT id, status, last_error FROM {S}.archived_jobs WHERE namespace = $1 AND id = ANY($2)",
                    );
                    for r in c.rows("enqueue", &sql, &[&ns, &gone]).await? {
                        dep_status.insert(r.get(0), (status(r.get(1))?, r.get(2)));
                    }
                }
                if let Some(missing) = ext.iter().find(|d| !dep_status.contains_key(d)) {
                    return Err(Error::invalid(format!(
                        "dependency {} not found in namespace {ns}",
                        jid(*missing)
                    )));
                }
            }
            // Starting statuses: where each job stands over its edges (`flows::standing`), then
            // the event that ends it (a dependency failed under a policy that ends it) through
            // the state machine from `waiting`. An edge whose dependency already failed under
            // `remove_dependency` is not written.
            let mut has_deps = vec![false; creating.len()];
            let mut st: Vec<JobStatus> = Vec::with_capacity(creating.len());
            let mut finished = Vec::with_capacity(creating.len());
            let mut last_error: Vec<Option<String>> = Vec::with_capacity(creating.len());
            let mut kept: Vec<Vec<(Uuid, EdgePolicy)>> = Vec::with_capacity(creating.len());
            for (i, (id, j)) in creating.iter().enumerate() {
                let mut edges = Vec::with_capacity(deps_of[i].len());
                for &(d, policy) in &deps_of[i] {
                    let (status, error) = match batch_pos.get(&d) {
                        Some(p) => (st[*p], last_error[*p].clone()),
                        None => dep_status.get(&d).cloned().ok_or_else(|| {
                            Error::invalid(format!(
                                "dependency {} of job {} not found in namespace {ns}",
                                jid(d),
                                j.id
                            ))
                        })?,
                    };
                    edges.push(EdgeView { dep: d, policy, status, error });
                }
                let start = standing(edges.iter().cloned())?;
                let cut = |e: &EdgeView| {
                    e.policy == EdgePolicy::RemoveDependency
                        && DependencyClass::of(e.status) == DependencyClass::Failed
                };
                kept.push(edges.iter().filter(|e| !cut(e)).map(|e| (e.dep, e.policy)).collect());
                for (d, _) in kept.last().into_iter().flatten() {
                    if let Some(p) = batch_pos.get(d) {
                        has_deps[*p] = true;
                    }
                }
                let mut s = start.insert_status();
                let (mut fin, mut err) = (None, None);
                if let Standing::Fails(ev) = start {
                    let state = JobState {
                        id: id.hyphenated().to_string(),
                        status: s,
                        attempt: 0,
                        max_retries: j.max_retries,
                        started_at: None,
                        claim_seq: 0,
                        stall_count: 0,
                        backoff: j.backoff,
                    };
                    let next = transition(&state, &ev, now).map_err(|r| r.into_error(&state.id))?;
                    s = next.status;
                    fin = next.finished_at;
                    err = next.last_error;
                }
                st.push(s);
                finished.push(fin);
                last_error.push(err);
            }
            // Admission cap, checked under each queue's row lock.
            let mut new_pending: BTreeMap<&str, u64> = BTreeMap::new();
            for (i, (_, j)) in creating.iter().enumerate() {
                if st[i] == JobStatus::Pending {
                    *new_pending.entry(j.queue.as_str()).or_default() += 1;
                }
            }
            let all_queues: Vec<String> =
                creating.iter().map(|(_, j)| j.queue.clone()).collect::<BTreeSet<_>>().into_iter().collect();
            let reg_sql = self.sql(
                "INSERT INTO {S}.queues (namespace, queue) SELECT $1, x FROM unnest($2::text[]) AS x ON CONFLICT DO NOTHING",
            );
            // Queues are registered with the writes, or first when the cap locks their rows.
            let mut registered = all_queues.is_empty();
            if let Some(cap) = req.max_pending {
                c.exec("enqueue", &reg_sql, &[&ns, &all_queues]).await?;
                registered = true;
                let qs: Vec<&str> = new_pending.keys().copied().collect();
                let lock = self.sql(
                    "SELECT queue FROM {S}.queues WHERE namespace = $1 AND queue = ANY($2) ORDER BY queue FOR UPDATE",
                );
                c.rows("enqueue", &lock, &[&ns, &qs]).await?;
                let count = self.sql(crate::counts::PENDING_OF_QUEUES);
                let counts: HashMap<String, i64> = c
                    .rows("enqueue", &count, &[&ns, &qs])
                    .await?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
                for (q, add) in &new_pending {
                    let pending = counts.get(*q).copied().unwrap_or(0) as u64;
                    if pending + add > cap {
                        return Err(Error::QueueFull { queue: q.to_string(), pending, max_pending: cap });
                    }
                }
            }
            let dedup = dedup.writes(now)?;
            let stages: Vec<(Uuid, String, String)> = creating
                .iter()
                .filter_map(|(id, j)| stage_pair(j).map(|(r, s)| (*id, r.to_string(), s.to_string())))
                .collect();
            self.refuse_taken_stages(c, &stages).await?;
            // With no unique key or stage, no concurrent enqueue can take a row the batch
            // inserts, so the insert needs no check after it: the writes and the commit go as
            // one flight, and a conflict on a job id fails the flight (and so the transaction).
            let checked = stages.is_empty() && creating.iter().all(|(_, j)| j.unique_key.is_none());
            let mut cols = Cols::default();
            let mut ukeys = Vec::with_capacity(creating.len());
            let mut deps_text = Vec::with_capacity(creating.len());
            let (mut edge_dep, mut edge_job, mut edge_policy) = (Vec::new(), Vec::new(), Vec::new());
            let inserting = !creating.is_empty();
            for (i, (id, j)) in creating.into_iter().enumerate() {
                ukeys.push(j.unique_key.clone());
                deps_text.push(
                    kept[i].iter().map(|(d, _)| d.hyphenated().to_string()).collect::<Vec<_>>().join(","),
                );
                for (d, policy) in &kept[i] {
                    edge_dep.push(*d);
                    edge_job.push(id);
                    edge_policy.push(policy_code(*policy));
                }
                cols.push(id, j, now)?;
            }
            // A job its failed dependency ends is inserted waiting and then moved to where the
            // event left it, in the same flight: its events are `enqueued` then the ending one,
            // as the other stores write them.
            let ending: Vec<usize> = (0..st.len()).filter(|&i| finished[i].is_some()).collect();
            let waiting = |i: usize| ending.contains(&i);
            let codes: Vec<i16> = st
                .iter()
                .enumerate()
                .map(|(i, s)| code(if waiting(i) { JobStatus::Waiting } else { *s }))
                .collect();
            let insert_finished: Vec<Option<i64>> =
                finished.iter().enumerate().map(|(i, f)| if waiting(i) { None } else { *f }).collect();
            let insert_error: Vec<Option<String>> = last_error
                .iter()
                .enumerate()
                .map(|(i, e)| if waiting(i) { None } else { e.clone() })
                .collect();
            let end_id: Vec<Uuid> = ending.iter().map(|&i| cols.id[i]).collect();
            let end_code: Vec<i16> = ending.iter().map(|&i| code(st[i])).collect();
            let end_at: Vec<Option<i64>> = ending.iter().map(|&i| finished[i]).collect();
            let end_error: Vec<Option<String>> = ending.iter().map(|&i| last_error[i].clone()).collect();
            let mut writes = Vec::with_capacity(5);
            if !registered {
                writes.push(Stmt::new("enqueue", reg_sql, vec![&ns, &all_queues]));
            }
            writes.extend(dedup.records(self, &ns));
            let replace_at = dedup.replacements(self).map(|st| {
                writes.push(st);
                writes.len() - 1
            });
            let insert_at = inserting.then(|| {
                writes.push(Stmt::new(
                    "enqueue",
                    self.sql(&full_insert_sql(!checked)),
                    vec![
                        &ns,
                        &now,
                        &cols.id,
                        &cols.queue,
                        &cols.task,
                        &cols.payload,
                        &cols.priority,
                        &codes,
                        &cols.max_retries,
                        &cols.bb,
                        &cols.bm,
                        &cols.run_at,
                        &cols.timeout,
                        &cols.metadata,
                        &cols.grp,
                        &cols.wr,
                        &cols.ws,
                        &ukeys,
                        &deps_text,
                        &has_deps,
                        &insert_finished,
                        &insert_error,
                        &cols.wv,
                    ],
                ));
                writes.len() - 1
            });
            if !end_id.is_empty() {
                writes.push(Stmt::new(
                    "enqueue",
                    self.sql(
                        "UPDATE {S}.jobs j SET status = u.st, finished_at = u.fin, last_error = u.err \
                         FROM unnest($2::uuid[], $3::int2[], $4::int8[], $5::text[]) AS u(id, st, fin, err) \
                         WHERE j.namespace = $1 AND j.id = u.id",
                    ),
                    vec![&ns, &end_id, &end_code, &end_at, &end_error],
                ));
            }
            if !edge_dep.is_empty() {
                writes.push(Stmt::new(
                    "enqueue",
                    self.sql(
                        "INSERT INTO {S}.job_deps (depends_on, job_id, namespace, policy) \
                         SELECT d, j, $1, p FROM unnest($2::uuid[], $3::uuid[], $4::int2[]) AS u(d, j, p)",
                    ),
                    vec![&ns, &edge_dep, &edge_job, &edge_policy],
                ));
            }
            if !absorbed.is_empty() {
                let sql = self.sql(&crate::event_writes::deduplicated_sql());
                writes.push(Stmt::new("enqueue", sql, vec![&ns, &now, &absorbed, &absorbed_keys]));
            }
            let bracket = if checked && scope == TxScope::Own { Bracket::Commit } else { Bracket::Inside };
            let done = c.flight(bracket, &writes).await?;
            let replaced = replace_at.is_some_and(|i| !done[i].is_empty());
            if let Some(i) = insert_at.filter(|_| !checked) {
                if done[i].len() != cols.id.len() {
                    // A row skipped for its id is a job the table already holds (`Conflict`);
                    // else a concurrent enqueue took a unique key or a stage first: name the stage.
                    let got: BTreeSet<Uuid> = done[i].iter().map(|r| r.get(0)).collect();
                    let skipped: Vec<Uuid> = cols.id.iter().filter(|id| !got.contains(id)).copied().collect();
                    let held = self.sql("SELECT id FROM {S}.jobs WHERE id = ANY($1) ORDER BY id LIMIT 1");
                    if let Some(r) = c.opt("enqueue", &held, &[&skipped]).await? {
                        return Err(Error::Conflict(format!("job {} already exists", jid(r.get(0)))));
                    }
                    let lost: Vec<_> = stages.into_iter().filter(|(id, _, _)| !got.contains(id)).collect();
                    self.refuse_taken_stages(c, &lost).await?;
                    return Err(Error::backend_retryable(format!(
                        "a concurrent enqueue in namespace {ns} took one of the batch's unique keys; retry the enqueue"
                    )));
                }
            }
            Ok((out, replaced))
        };
        match scope {
            TxScope::Own => c.tx_lazy(body).await,
            TxScope::Caller => body.await,
        }
    }
}
