//! Transitions decided in Rust by `flexiq_core::transition` and committed atomically.
//!
//! A [`Plan`] collects field writes for every job an operation touches (cascades to
//! dependents included) together with the version each job was read at, plus the history
//! rows to append. `commit.lua` applies it only if every version still matches, deriving all
//! index changes from the old and new fields; on a mismatch [`transact`] re-reads and decides
//! again. So there is one state machine, and no client-side race can commit a stale decision.
//!
//! A job failing for good walks the jobs depending on it, each edge applying its policy
//! (`EdgePolicy::on_child_failed`): the dependent is cancelled or failed (and walked in turn),
//! released, or the edge settles (or is cut) and the dependent is released once every edge it
//! has left is settled (`flow::edge_settled`), the rule a completion's release follows too.

use std::collections::{HashMap, HashSet};

use flexiq_core::flow::{edge_settled, ChildFailure};
use flexiq_core::history::{DeadJob, JobError};
use flexiq_core::id::new_row_id;
use flexiq_core::stats::MetricRow;
use flexiq_core::{transition, EdgePolicy, Error, Event, EventKind, JobStatus, Next, Result};
use fred::types::Value;

use crate::conn::{n, s};
use crate::dead::DeadEntry;
use crate::keys::member;
use crate::row::{self, StateRow, STATE_FIELDS};
use crate::store::Ctx;

/// How many times a plan is re-decided after losing a version race.
const MAX_ROUNDS: usize = 64;

struct Op {
    guard: bool,
    id: String,
    version: String,
    set: Vec<(&'static str, Value)>,
    del: Vec<&'static str>,
}

enum Work {
    /// The job failed for good with this last error (`None`: the stored one stands).
    Failed {
        id: String,
        error: Option<String>,
    },
    Release(String),
    /// A waiting job whose edges this plan cut: released once every edge left is settled.
    Recheck(StateRow),
    DeadLetter {
        id: String,
        attempt: u32,
        error: Option<String>,
        queue: String,
        task: String,
    },
}

/// The writes one operation will commit.
pub(crate) struct Plan {
    now: i64,
    ops: Vec<Op>,
    raw: Vec<Vec<Value>>,
    /// Events besides status changes (which `commit.lua` writes itself): kind, job id, queue,
    /// task, attempt, data (JSON).
    events: Vec<[Value; 6]>,
    planned: HashMap<String, JobStatus>,
    work: Vec<Work>,
    /// Jobs this plan moves through the state machine (each at most once).
    moved: HashSet<String>,
    /// Edge lists this plan rewrote, by job.
    edges: HashMap<String, Vec<(String, EdgePolicy)>>,
}

impl Plan {
    fn new(now: i64) -> Self {
        Plan {
            now,
            ops: Vec::new(),
            raw: Vec::new(),
            events: Vec::new(),
            planned: HashMap::new(),
            work: Vec::new(),
            moved: HashSet::new(),
            edges: HashMap::new(),
        }
    }

    /// Whether the job already has a write in this plan.
    pub(crate) fn touches(&self, id: &str) -> bool {
        self.planned.contains_key(id)
    }

    /// Adds a plain field write guarded by the job's version.
    pub(crate) fn write(&mut self, row: &StateRow, set: Vec<(&'static str, Value)>, del: Vec<&'static str>) {
        self.planned.entry(row.id.clone()).or_insert(row.status);
        self.ops.push(Op { guard: false, id: row.id.clone(), version: row.version.clone(), set, del });
    }

    fn guard(&mut self, id: &str, version: String) {
        self.ops.push(Op { guard: true, id: id.to_string(), version, set: vec![], del: vec![] });
    }

    /// Commits nothing unless `row` is still at the version it was read at.
    pub(crate) fn guard_row(&mut self, row: &StateRow) {
        self.guard(&row.id, row.version.clone());
    }

    /// The edges of `row` as this plan leaves them.
    fn edges_of(&self, row: &StateRow) -> Vec<(String, EdgePolicy)> {
        self.edges.get(&row.id).cloned().unwrap_or_else(|| row.edges.clone())
    }

    /// Cuts the edges from `row` to `deps`: its edge fields are rewritten and it leaves their
    /// sets of dependents.
    pub(crate) fn cut_edges(&mut self, ctx: &Ctx, row: &StateRow, deps: &[&str]) {
        let left: Vec<(String, EdgePolicy)> =
            self.edges_of(row).into_iter().filter(|(d, _)| !deps.contains(&d.as_str())).collect();
        let (d, dp) = row::edge_fields(&left);
        let (mut set, mut del) = (Vec::new(), Vec::new());
        match d {
            Some(d) => set.push(("d", s(d))),
            None => del.push("d"),
        }
        match dp {
            Some(dp) => set.push(("dp", s(dp))),
            None => del.push("dp"),
        }
        self.write(row, set, del);
        for d in deps {
            self.raw(vec![s("SREM"), s(ctx.keys.k(&format!("dep:{d}"))), s(row.id.clone())]);
        }
        self.edges.insert(row.id.clone(), left);
    }

    /// Releases `row` when it is waiting and, once this plan is committed, every edge it has
    /// is settled.
    pub(crate) fn recheck(&mut self, row: StateRow) {
        self.work.push(Work::Recheck(row));
    }

    /// Appends a raw command run after the job writes.
    pub(crate) fn raw(&mut self, args: Vec<Value>) {
        self.raw.push(args);
    }

    /// Writes event `kind` about `row` with `data` (JSON) when the plan commits, unless the
    /// namespace has events switched off.
    pub(crate) fn event(&mut self, row: &StateRow, kind: EventKind, data: String) {
        self.events.push([
            s(kind.as_str()),
            s(row.id.clone()),
            s(row.queue.clone()),
            s(row.task.clone()),
            n(i64::from(row.attempt)),
            s(data),
        ]);
    }

    /// Applies what `transition` decided for `row`, with extra fields (result bytes).
    pub(crate) fn apply(
        &mut self,
        ctx: &Ctx,
        row: &StateRow,
        next: &Next,
        mut set: Vec<(&'static str, Value)>,
    ) {
        let now = self.now;
        set.push(("st", n(i64::from(next.status.code()))));
        set.push(("a", n(i64::from(next.attempt))));
        if let Some(r) = next.run_at {
            set.push(("r", n(r)));
        }
        if let Some(sa) = next.started_at {
            set.push(("sa", n(sa)));
        }
        if let Some(cs) = next.claim_seq {
            set.push(("cs", n(i64::try_from(cs).unwrap_or(i64::MAX))));
        }
        if let Some(sc) = next.stall_count {
            set.push(("sc", n(i64::from(sc))));
        }
        if let Some(f) = next.finished_at {
            set.push(("f", n(f)));
        }
        if let Some(e) = &next.last_error {
            set.push(("e", s(e.clone())));
        }
        let mut del = Vec::new();
        if next.clear_lease {
            del.extend(["w", "hb"]);
        }
        if next.clear_cancel_request {
            del.push("cr");
        }
        self.write(row, set, del);
        self.planned.insert(row.id.clone(), next.status);
        self.moved.insert(row.id.clone());
        if let Some(error) = &next.error_record {
            let rec = JobError {
                id: new_row_id(),
                job_id: row.id.clone(),
                attempt: row.attempt,
                error: error.clone(),
                failed_at: now,
            };
            let json = serde_json::to_string(&rec).unwrap_or_default();
            self.raw(vec![s("ZADD"), s(ctx.keys.k(&format!("err:{}", row.id))), n(now), s(json)]);
            self.raw(vec![s("ZADD"), s(ctx.keys.k("errix")), s("NX"), n(now), s(row.id.clone())]);
        }
        if let Some(success) = next.metric {
            let rec = MetricRow {
                job_id: row.id.clone(),
                task: row.task.clone(),
                queue: row.queue.clone(),
                attempt: row.attempt,
                success,
                duration_ms: row.started_at.map(|s| (now - s).max(0) as u64).unwrap_or(0),
                recorded_at: now,
            };
            let json = format!("{}|{}", new_row_id(), serde_json::to_string(&rec).unwrap_or_default());
            self.raw(vec![s("ZADD"), s(ctx.keys.k("metrics")), n(now), s(json)]);
        }
        if next.dead_letter {
            self.work.push(Work::DeadLetter {
                id: row.id.clone(),
                attempt: row.attempt,
                error: next.last_error.clone(),
                queue: row.queue.clone(),
                task: row.task.clone(),
            });
        }
        if next.cancel_dependents {
            self.work.push(Work::Failed { id: row.id.clone(), error: next.last_error.clone() });
        }
        if next.release_dependents {
            self.work.push(Work::Release(row.id.clone()));
        }
    }

    /// Follows cascades (dependents of failed jobs by their edges' policies, dependents of
    /// completed ones released) and builds dead-letter rows, reading what they need.
    async fn expand(&mut self, ctx: &Ctx) -> Result<()> {
        let mut guarded: HashSet<String> = HashSet::new();
        while let Some(w) = self.work.pop() {
            match w {
                Work::DeadLetter { id, attempt, error, queue, task } => {
                    let fields = ["p", "m", "g", "wr", "ws", "wv"].map(s);
                    let mut args = vec![s(ctx.keys.job(&id))];
                    args.extend(fields);
                    let v = ctx.conn.cmd("HMGET", args).await?.into_array();
                    let field = |k: usize| v.get(k).and_then(row::text);
                    let dead = DeadEntry {
                        job: DeadJob {
                            id: new_row_id(),
                            original_job_id: id,
                            queue,
                            task_name: task.clone(),
                            payload: v.first().and_then(row::bytes).unwrap_or_default(),
                            error,
                            retry_count: attempt,
                            failed_at: self.now,
                            metadata: field(1),
                        },
                        group_key: field(2),
                        workflow_run_id: field(3),
                        workflow_stage_id: field(4),
                        workflow_version: field(5),
                    };
                    let dead_id = dead.job.id.clone();
                    let m = member(self.now, &dead_id);
                    let json = serde_json::to_string(&dead).map_err(Error::backend)?;
                    self.raw(vec![s("HSET"), s(ctx.keys.k("dlq")), s(dead_id.clone()), s(json)]);
                    self.raw(vec![s("HSET"), s(ctx.keys.k("dlqt")), s(dead_id.clone()), s(task.clone())]);
                    self.raw(vec![s("HSET"), s(ctx.keys.k("dlqm")), s(dead_id), s(m.clone())]);
                    self.raw(vec![s("ZADD"), s(ctx.keys.k("dlix")), n(0), s(m.clone())]);
                    self.raw(vec![s("ZADD"), s(ctx.keys.k(&format!("dlt:{task}"))), n(0), s(m)]);
                }
                Work::Failed { id, error } => self.on_failed(ctx, &id, error, &mut guarded).await?,
                Work::Release(id) => {
                    for row in dependents(ctx, &id).await?.into_iter().flatten() {
                        self.release_if_settled(ctx, &row, &mut guarded).await?;
                    }
                }
                Work::Recheck(row) => self.release_if_settled(ctx, &row, &mut guarded).await?,
            }
        }
        Ok(())
    }

    /// Applies `event` to `row` unless the state machine refuses it.
    fn fire(&mut self, ctx: &Ctx, row: &StateRow, event: &Event) {
        if let Ok(next) = transition(&row.state(), event, self.now) {
            self.apply(ctx, row, &next, vec![]);
        }
    }

    /// Releases `row` if it is waiting, not moved yet, and every edge it has is settled.
    async fn release_if_settled(
        &mut self,
        ctx: &Ctx,
        row: &StateRow,
        guarded: &mut HashSet<String>,
    ) -> Result<()> {
        if self.moved.contains(&row.id) || row.status != JobStatus::Waiting {
            return Ok(());
        }
        if self.deps_met(ctx, row, guarded).await? {
            self.fire(ctx, row, &Event::DependenciesMet);
        }
        Ok(())
    }

    /// What job `id` failing for good (last error `error`, or the stored one) does to each job
    /// depending on it, by the policy of that job's edge to it.
    async fn on_failed(
        &mut self,
        ctx: &Ctx,
        id: &str,
        error: Option<String>,
        guarded: &mut HashSet<String>,
    ) -> Result<()> {
        let mut child_error = error.clone();
        let mut error_read = error.is_some();
        for row in dependents(ctx, id).await?.into_iter().flatten() {
            if self.moved.contains(&row.id) {
                continue;
            }
            let Some(policy) = self.edges_of(&row).iter().find(|(d, _)| d == id).map(|(_, p)| *p) else {
                continue;
            };
            match policy.on_child_failed() {
                ChildFailure::CancelParent => {
                    self.fire(ctx, &row, &Event::DependencyFailed { dependency: id.to_string() })
                }
                ChildFailure::FailParent => {
                    if !error_read {
                        child_error = last_error(ctx, id).await?;
                        error_read = true;
                    }
                    let event = Event::ChildFailed { child: id.to_string(), error: child_error.clone() };
                    self.fire(ctx, &row, &event);
                }
                ChildFailure::ReleaseParent => self.fire(ctx, &row, &Event::DependenciesMet),
                ChildFailure::SettleEdge => self.release_if_settled(ctx, &row, guarded).await?,
                ChildFailure::RemoveEdge => {
                    self.cut_edges(ctx, &row, &[id]);
                    self.release_if_settled(ctx, &row, guarded).await?;
                }
            }
        }
        Ok(())
    }

    /// Whether every edge of `row` is settled (`flow::edge_settled`, counting this plan's
    /// writes; a dependency gone from the store counts as never having been one). Jobs read
    /// unsettled are guarded, so a concurrent change re-decides.
    async fn deps_met(&mut self, ctx: &Ctx, row: &StateRow, guarded: &mut HashSet<String>) -> Result<bool> {
        let mut met = true;
        let mut unknown = Vec::new();
        for (d, policy) in self.edges_of(row) {
            match self.planned.get(&d) {
                Some(st) => met &= edge_settled(policy, *st),
                None => unknown.push((d, policy)),
            }
        }
        if unknown.is_empty() {
            return Ok(met);
        }
        let cmds = unknown
            .iter()
            .flat_map(|(d, _)| {
                [
                    ("HMGET", vec![s(ctx.keys.job(d)), s("st"), s("v")]),
                    ("HGET", vec![s(ctx.keys.archived(d)), s("st")]),
                ]
            })
            .collect();
        let replies = ctx.conn.pipeline(cmds).await?;
        for ((d, policy), pair) in unknown.iter().zip(replies.chunks(2)) {
            let live = pair[0].clone().into_array();
            let (st, version) = match live.first().and_then(row::text) {
                Some(st) => (Some(st), live.get(1).and_then(row::text)),
                None => (row::text(&pair[1]), None),
            };
            let settled = match st {
                Some(st) => edge_settled(*policy, row::status(&st)?),
                None => true,
            };
            if !settled {
                met = false;
                if let Some(v) = version {
                    if guarded.insert(d.clone()) {
                        self.guard(d, v);
                    }
                }
            }
        }
        Ok(met)
    }

    /// Sends the plan; false when some version moved (nothing was written).
    async fn commit(&self, ctx: &Ctx) -> Result<bool> {
        let mut args = Vec::with_capacity(4 + self.ops.len() * 12);
        args.push(n(self.now));
        args.push(n(self.ops.len() as i64));
        for op in &self.ops {
            args.push(s(if op.guard { "g" } else { "w" }));
            args.push(s(op.id.clone()));
            args.push(s(op.version.clone()));
            args.push(n(op.set.len() as i64));
            for (k, v) in &op.set {
                args.push(s(*k));
                args.push(v.clone());
            }
            args.push(n(op.del.len() as i64));
            args.extend(op.del.iter().map(|d| s(*d)));
        }
        args.push(n(self.raw.len() as i64));
        for r in &self.raw {
            args.push(n(r.len() as i64));
            args.extend(r.iter().cloned());
        }
        args.push(n(self.events.len() as i64));
        for e in &self.events {
            args.extend(e.iter().cloned());
        }
        let reply = ctx.conn.script(&ctx.conn.scripts.commit, &ctx.keys.base, args).await?;
        let first = reply.into_array().first().and_then(row::text);
        Ok(first.as_deref() == Some("OK"))
    }
}

/// Reads the state of several jobs in one pipeline.
pub(crate) async fn read_states(ctx: &Ctx, ids: &[String]) -> Result<Vec<Option<StateRow>>> {
    let cmds = ids
        .iter()
        .map(|id| {
            let mut a = vec![s(ctx.keys.job(id))];
            a.extend(STATE_FIELDS.iter().map(|f| s(*f)));
            ("HMGET", a)
        })
        .collect();
    let replies = ctx.conn.pipeline(cmds).await?;
    ids.iter().zip(replies).map(|(id, v)| StateRow::parse(id, v)).collect()
}

/// The last error of job `id`, live or archived.
async fn last_error(ctx: &Ctx, id: &str) -> Result<Option<String>> {
    let cmds =
        vec![("HGET", vec![s(ctx.keys.job(id)), s("e")]), ("HGET", vec![s(ctx.keys.archived(id)), s("e")])];
    Ok(ctx.conn.pipeline(cmds).await?.iter().find_map(row::text))
}

/// The jobs depending on `id`, read for a transition.
pub(crate) async fn dependents(ctx: &Ctx, id: &str) -> Result<Vec<Option<StateRow>>> {
    let ids = row::strings(ctx.conn.cmd("SMEMBERS", vec![s(ctx.keys.k(&format!("dep:{id}")))]).await?);
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    read_states(ctx, &ids).await
}

/// Reads `ids`, lets `decide` fill a plan from their states, and commits it atomically,
/// deciding again from fresh reads whenever another writer got there first.
pub(crate) async fn transact<T, F>(ctx: &Ctx, ids: &[String], now: i64, mut decide: F) -> Result<T>
where
    F: FnMut(&mut Plan, &[Option<StateRow>]) -> Result<T> + Send,
    T: Send,
{
    for _ in 0..MAX_ROUNDS {
        let rows = read_states(ctx, ids).await?;
        let mut plan = Plan::new(now);
        let out = decide(&mut plan, &rows)?;
        if plan.ops.is_empty() && plan.raw.is_empty() && plan.events.is_empty() {
            return Ok(out);
        }
        plan.expand(ctx).await?;
        if plan.commit(ctx).await? {
            return Ok(out);
        }
    }
    Err(Error::backend_retryable(format!(
        "jobs {} kept changing under concurrent writers; try again",
        ids.join(", ")
    )))
}
