//! The hot path: enqueue and claim run as single scripts; acks, leases and cancels are
//! decided by `flexiq_core::transition` and committed through [`crate::transact`].
//!
//! A heartbeat of started attempts copies each claim sequence into the job's `ss` field; a
//! released attempt whose `ss` lags its claim sequence never reported a start (it sat in a
//! prefetch buffer) and gets the attempt back without a stall. The claim writes nothing for it.

use std::collections::HashMap;
use std::time::Duration;

use crate::conn::{b, n, s};
use crate::row::{self, int, text};
use crate::store::RedisStore;
use crate::transact::transact;
use flexiq_core::store::{
    Ack, AckKind, AckRequest, CancelRequest, ClaimRequest, EnqueueRequest, Enqueued, ExpireRunawayRequest,
    HeartbeatReply, HeartbeatRequest, JobStore, QueueConfig, ReleaseStaleRequest, RequestCancelRequest,
    RequeueRequest, WaitForJobRequest, WaitForWorkRequest, DEFAULT_MAX_STALLED_COUNT,
};
use flexiq_core::{
    transition, AckOutcome, ClaimedJob, Error, Event, Fence, Job, JobId, JobStatus, Refusal, Result,
};

/// Poll interval of `wait_for_job` for changes made by other processes (ms).
const JOB_POLL_MS: u64 = 20;

fn event_of(kind: &AckKind, fence: Fence) -> Event {
    match kind {
        AckKind::Complete { .. } => Event::Complete { fence },
        AckKind::Fail { error, retryable } => {
            Event::Fail { fence, error: error.clone(), retryable: *retryable }
        }
        AckKind::Suspend { until } => Event::Suspend { fence, until: *until },
        AckKind::Defer { until, reason } => Event::Defer { fence, until: *until, reason: reason.clone() },
        AckKind::Cancel { reason } => Event::CancelRunning { fence, reason: reason.clone() },
    }
}

/// Parses a claim reply (`take.lua`'s): per claimed job its id, then its fields in
/// [`row::JOB_FIELDS`] order with the claim applied.
pub(crate) fn claimed(namespace: &str, reply: fred::types::Value) -> Result<Vec<ClaimedJob>> {
    let reply = reply.into_array();
    let mut out = Vec::with_capacity(reply.len() / 2);
    let mut it = reply.into_iter();
    while let (Some(id), Some(fields)) = (it.next(), it.next()) {
        let id = text(&id).unwrap_or_default();
        let job = row::job_from_fields(namespace, &id, fields.into_array())?
            .ok_or_else(|| Error::backend(format!("claimed job {id} vanished")))?;
        let fence = job.fence().ok_or_else(|| Error::backend(format!("claimed job {id} is not running")))?;
        out.push(ClaimedJob { job, fence });
    }
    Ok(out)
}

impl RedisStore {
    /// Applies a lease event to every id; returns the ids it applied to. `event` gives each
    /// job's event from the job as read inside the transaction (its queue's stall budget), or
    /// `None` to leave it alone, so a job that finished and was claimed again after it was
    /// listed is left alone.
    async fn lease_event(
        &self,
        ids: Vec<String>,
        now: i64,
        event: impl Fn(&row::StateRow) -> Option<Event> + Sync,
    ) -> Result<Vec<JobId>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ctx = &self.ctx;
        let out = transact(ctx, &ids, now, |plan, rows| {
            let mut done = Vec::new();
            for row in rows.iter().flatten() {
                let Some(event) = event(row) else { continue };
                if let Ok(next) = transition(&row.state(), &event, now) {
                    plan.apply(ctx, row, &next, vec![]);
                    done.push(JobId::from_trusted(row.id.clone()));
                }
            }
            Ok(done)
        })
        .await?;
        self.changed();
        Ok(out)
    }

    /// Renews the leases of `req`'s jobs still held by their fences; `record_start` also copies
    /// each attempt's claim sequence into `ss` (its start was reported).
    async fn renew(&self, req: HeartbeatRequest, record_start: bool) -> Result<Vec<HeartbeatReply>> {
        self.ctx.check()?;
        let HeartbeatRequest { jobs, now } = req;
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = jobs.iter().map(|(id, _)| id.to_string()).collect();
        transact(&self.ctx, &ids, now, |plan, rows| {
            let mut out = Vec::with_capacity(jobs.len());
            for ((_, fence), row) in jobs.iter().zip(rows) {
                let reply = match row {
                    Some(row) if row.holds(*fence) => {
                        if !plan.touches(&row.id) {
                            let mut set = vec![("hb", n(now))];
                            if record_start {
                                set.push(("ss", n(i64::try_from(row.claim_seq).unwrap_or(i64::MAX))));
                            }
                            plan.write(row, set, vec![]);
                        }
                        HeartbeatReply {
                            outcome: AckOutcome::Acknowledged,
                            cancel_requested: row.cancel_requested,
                        }
                    }
                    Some(row) => HeartbeatReply {
                        outcome: AckOutcome::Superseded,
                        cancel_requested: row.cancel_requested,
                    },
                    None => HeartbeatReply { outcome: AckOutcome::Superseded, cancel_requested: false },
                };
                out.push(reply);
            }
            Ok(out)
        })
        .await
    }

    /// Acks decided by the state machine from fresh reads and committed through a plan.
    async fn ack_general(&self, acks: &[&Ack], now: i64) -> Result<Vec<AckOutcome>> {
        let ctx = &self.ctx;
        let ids: Vec<String> = acks.iter().map(|a| a.job_id.to_string()).collect();
        transact(ctx, &ids, now, |plan, rows| {
            let mut out = Vec::with_capacity(acks.len());
            for (ack, row) in acks.iter().zip(rows) {
                let Some(row) = row else {
                    out.push(AckOutcome::Superseded);
                    continue;
                };
                if plan.touches(&row.id) {
                    out.push(AckOutcome::Superseded);
                    continue;
                }
                match transition(&row.state(), &event_of(&ack.kind, ack.fence), now) {
                    Ok(next) => {
                        let mut set = Vec::new();
                        if let AckKind::Complete { result: Some(r) } = &ack.kind {
                            set.push(("res", b(r.clone())));
                        }
                        plan.apply(ctx, row, &next, set);
                        out.push(AckOutcome::Acknowledged);
                    }
                    Err(Refusal::Superseded) | Err(Refusal::Illegal { .. }) => {
                        out.push(AckOutcome::Superseded)
                    }
                }
            }
            Ok(out)
        })
        .await
    }

    pub(crate) fn changed(&self) {
        self.ctx.waker.work_changed();
        self.ctx.waker.job_changed();
    }

    /// The stall budget of the queue of each job of `ids` (`QueueConfig::stall_budget`), by
    /// queue name: one read of the jobs' queues, then one of those queues' controls.
    async fn stall_budgets(&self, ids: &[String]) -> Result<HashMap<String, u32>> {
        let reads = ids.iter().map(|id| ("HGET", vec![s(self.ctx.keys.job(id)), s("q")])).collect();
        let mut queues: Vec<String> = self.ctx.conn.pipeline(reads).await?.iter().filter_map(text).collect();
        queues.sort();
        queues.dedup();
        let reads =
            queues.iter().map(|q| ("HGET", vec![s(self.ctx.keys.k(&format!("qc:{q}"))), s("ms")])).collect();
        let stored = self.ctx.conn.pipeline(reads).await?;
        Ok(queues
            .into_iter()
            .zip(stored)
            .map(|(q, ms)| {
                let max_stalled_count = int(&ms).map(|m| u32::try_from(m.max(0)).unwrap_or(u32::MAX));
                (q, QueueConfig { max_stalled_count, ..QueueConfig::default() }.stall_budget())
            })
            .collect())
    }

    /// Ids in a lease set whose score is below `cutoff`.
    async fn lease_ids(&self, set: &str, cutoff: i64) -> Result<Vec<String>> {
        let v = self
            .ctx
            .conn
            .cmd(
                "ZRANGE",
                vec![
                    s(self.ctx.keys.k(set)),
                    s("-inf"),
                    s(format!("({cutoff}")),
                    s("BYSCORE"),
                    s("LIMIT"),
                    n(0),
                    n(1000),
                ],
            )
            .await?;
        Ok(row::strings(v))
    }

    /// Up to 1,000 running jobs that started before `cutoff` (a sweep takes the rest next
    /// time, as with the heartbeat set). A job starts after it was created, so they are among
    /// the running jobs created before `cutoff`: a prefix of the running listing index, paged
    /// through here (its length is bounded by the jobs running at once) and filtered on each
    /// job's start time.
    async fn started_before(&self, cutoff: i64) -> Result<Vec<String>> {
        const PAGE: i64 = 1_000;
        let index = self.ctx.keys.k(&format!("ix:s:{}", JobStatus::Running.code()));
        let (mut from, mut ids) = (s("-"), Vec::new());
        loop {
            let range = vec![
                s(index.as_str()),
                from,
                s(format!("({}", crate::keys::pad(cutoff))),
                s("BYLEX"),
                s("LIMIT"),
                n(0),
                n(PAGE),
            ];
            let members = row::strings(self.ctx.conn.cmd("ZRANGE", range).await?);
            let Some(last) = members.last() else { break };
            from = s(format!("({last}"));
            let full = members.len() as i64 == PAGE;
            let page: Vec<String> = members.iter().map(|m| crate::keys::member_id(m).to_string()).collect();
            let reads = page.iter().map(|id| ("HGET", vec![s(self.ctx.keys.job(id)), s("sa")])).collect();
            let starts = self.ctx.conn.pipeline(reads).await?;
            for (id, sa) in page.into_iter().zip(starts) {
                if int(&sa).is_some_and(|at| at < cutoff) {
                    ids.push(id);
                }
            }
            if !full || ids.len() >= PAGE as usize {
                break;
            }
        }
        ids.truncate(PAGE as usize);
        Ok(ids)
    }

    /// Applies an operator event to one job: `Ok(None)` when unknown, `Ok(Some(false))`
    /// when refused by the state machine.
    pub(crate) async fn job_event(&self, id: &JobId, event: Event, now: i64) -> Result<Option<bool>> {
        let ctx = &self.ctx;
        let ids = vec![id.to_string()];
        let out = transact(ctx, &ids, now, |plan, rows| {
            let Some(row) = &rows[0] else { return Ok(None) };
            match transition(&row.state(), &event, now) {
                Ok(next) => {
                    plan.apply(ctx, row, &next, vec![]);
                    Ok(Some(true))
                }
                Err(_) => Ok(Some(false)),
            }
        })
        .await?;
        self.changed();
        Ok(out)
    }
}

#[async_trait::async_trait]
impl JobStore for RedisStore {
    async fn enqueue(&self, req: EnqueueRequest) -> Result<Vec<Enqueued>> {
        self.ctx.check()?;
        req.validate()?;
        if req.jobs.is_empty() {
            return Ok(Vec::new());
        }
        if crate::enqueue_plain::qualifies(&req.jobs, req.max_pending, req.now) {
            let args = crate::enqueue_plain::plain_args(&req.jobs, req.now);
            return crate::enqueue_plain::run_plain(&self.ctx, &req.jobs, args).await;
        }
        let args = crate::enqueue::enqueue_args(&req.jobs, req.max_pending, req.now, None);
        crate::enqueue::run_enqueue(&self.ctx, args).await
    }

    async fn claim(&self, req: ClaimRequest) -> Result<Vec<ClaimedJob>> {
        self.ctx.check()?;
        req.validate()?;
        let mut a =
            vec![n(req.now), n(i64::from(req.limit)), s(req.worker_id.clone()), n(req.queues.len() as i64)];
        a.extend(req.queues.iter().map(|q| s(q.clone())));
        let reply = self.ctx.conn.script(&self.ctx.conn.scripts.claim, &self.ctx.keys.base, a).await?;
        let out = claimed(&self.ctx.ns, reply)?;
        if !out.is_empty() {
            self.ctx.waker.job_changed();
        }
        Ok(out)
    }

    async fn ack(&self, req: AckRequest) -> Result<Vec<AckOutcome>> {
        self.ctx.check()?;
        let AckRequest { acks, now } = req;
        if acks.is_empty() {
            return Ok(Vec::new());
        }
        let mut named: HashMap<&str, usize> = HashMap::with_capacity(acks.len());
        for a in &acks {
            *named.entry(a.job_id.as_str()).or_default() += 1;
        }
        let plain: Vec<usize> = (0..acks.len())
            .filter(|&i| {
                let a = &acks[i];
                matches!(a.kind, AckKind::Complete { .. })
                    && named[a.job_id.as_str()] == 1
                    && crate::complete::is_plain(a.fence, now)
            })
            .collect();
        let mut out: Vec<Option<AckOutcome>> = vec![None; acks.len()];
        if !plain.is_empty() {
            let batch: Vec<&Ack> = plain.iter().map(|&i| &acks[i]).collect();
            let done = crate::complete::complete(&self.ctx, &batch, now).await?;
            for (i, o) in plain.into_iter().zip(done) {
                out[i] = o;
            }
        }
        let rest: Vec<usize> = (0..acks.len()).filter(|&i| out[i].is_none()).collect();
        if !rest.is_empty() {
            let batch: Vec<&Ack> = rest.iter().map(|&i| &acks[i]).collect();
            let done = self.ack_general(&batch, now).await?;
            for (i, o) in rest.into_iter().zip(done) {
                out[i] = Some(o);
            }
        }
        self.changed();
        Ok(out.into_iter().map(|o| o.unwrap_or(AckOutcome::Superseded)).collect())
    }

    async fn heartbeat(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        self.renew(req, true).await
    }

    async fn renew_buffered(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        self.renew(req, false).await
    }

    async fn release_stale(&self, req: ReleaseStaleRequest) -> Result<Vec<JobId>> {
        self.ctx.check()?;
        let ReleaseStaleRequest { stale_after_ms, now } = req;
        let cutoff = now.saturating_sub(i64::try_from(stale_after_ms).unwrap_or(i64::MAX));
        let ids = self.lease_ids("hb", cutoff).await?;
        // The queues' stall budgets are settings read just before the jobs: a budget changed
        // in between applies from the next release on, as if this one ran first.
        let budgets = self.stall_budgets(&ids).await?;
        self.lease_event(ids, now, |r| {
            let max_stalled = budgets.get(&r.queue).copied().unwrap_or(DEFAULT_MAX_STALLED_COUNT);
            Some(Event::HeartbeatLost { max_stalled, started: r.start_reported() })
        })
        .await
    }

    async fn expire_runaway(&self, req: ExpireRunawayRequest) -> Result<Vec<JobId>> {
        self.ctx.check()?;
        let ExpireRunawayRequest { absolute_cap_ms, now } = req;
        let cutoff = now.saturating_sub(i64::try_from(absolute_cap_ms).unwrap_or(i64::MAX));
        let ids = self.started_before(cutoff).await?;
        self.lease_event(ids, now, |r| {
            r.started_at.is_some_and(|at| at < cutoff).then_some(Event::RunawayExpired)
        })
        .await
    }

    async fn requeue(&self, req: RequeueRequest) -> Result<bool> {
        self.ctx.check()?;
        Ok(self.job_event(&req.id, Event::Requeue, req.now).await?.unwrap_or(false))
    }

    async fn cancel(&self, req: CancelRequest) -> Result<bool> {
        self.ctx.check()?;
        let CancelRequest { id, now } = req;
        self.job_event(&id, Event::Cancel, now).await?.ok_or(Error::JobNotFound(id))
    }

    async fn request_cancel(&self, req: RequestCancelRequest) -> Result<bool> {
        self.ctx.check()?;
        let RequestCancelRequest { id, now } = req;
        let ctx = &self.ctx;
        let ids = vec![id.to_string()];
        let out = transact(ctx, &ids, now, |plan, rows| {
            let Some(row) = &rows[0] else { return Ok(None) };
            if row.status.is_terminal() {
                return Ok(Some(false));
            }
            if row.status == JobStatus::Running {
                plan.write(row, vec![("cr", s("1"))], vec![]);
                return Ok(Some(true));
            }
            match transition(&row.state(), &Event::Cancel, now) {
                Ok(next) => {
                    plan.apply(ctx, row, &next, vec![("cr", s("1"))]);
                    Ok(Some(true))
                }
                Err(_) => Ok(Some(false)),
            }
        })
        .await?;
        self.changed();
        out.ok_or(Error::JobNotFound(id))
    }

    async fn is_cancel_requested(&self, id: &JobId) -> Result<bool> {
        self.ctx.check()?;
        let v = self
            .ctx
            .conn
            .cmd("HMGET", vec![s(self.ctx.keys.job(id.as_str())), s("st"), s("cr")])
            .await?
            .into_array();
        if v.first().and_then(text).is_none() {
            return Err(Error::JobNotFound(id.clone()));
        }
        Ok(v.get(1).and_then(text).as_deref() == Some("1"))
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>> {
        self.ctx.check()?;
        let v = self.ctx.conn.cmd("HGETALL", vec![s(self.ctx.keys.job(id.as_str()))]).await?;
        row::job_from_hash(&self.ctx.ns, id.as_str(), v)
    }

    async fn get_result(&self, id: &JobId) -> Result<Option<Vec<u8>>> {
        self.ctx.check()?;
        let v = self
            .ctx
            .conn
            .cmd("HMGET", vec![s(self.ctx.keys.job(id.as_str())), s("st"), s("res")])
            .await?
            .into_array();
        let Some(st) = v.first().and_then(text) else { return Err(Error::JobNotFound(id.clone())) };
        if row::status(&st)? != JobStatus::Completed {
            return Ok(None);
        }
        Ok(v.get(1).and_then(row::bytes))
    }

    async fn wait_for_work(&self, req: WaitForWorkRequest) -> Result<()> {
        self.ctx.check()?;
        let WaitForWorkRequest { queues, timeout_ms } = req;
        let queues: Vec<String> = if queues.is_empty() {
            row::strings(self.ctx.conn.cmd("SMEMBERS", vec![s(self.ctx.keys.k("queues"))]).await?)
        } else {
            queues
        };
        let cmds = queues
            .iter()
            .map(|q| ("ZRANGE", vec![s(self.ctx.keys.k(&format!("dy:{q}"))), n(0), n(0), s("WITHSCORES")]))
            .collect();
        let due = self
            .ctx
            .conn
            .pipeline(cmds)
            .await?
            .into_iter()
            .filter_map(|v| v.into_array().get(1).and_then(int))
            .min();
        self.ctx.waker.wait_work(Duration::from_millis(timeout_ms), due).await
    }

    async fn wait_for_job(&self, req: WaitForJobRequest) -> Result<()> {
        self.ctx.check()?;
        let WaitForJobRequest { id, timeout_ms } = req;
        let key = self.ctx.keys.job(id.as_str());
        let read = || async {
            let v = self.ctx.conn.cmd("HMGET", vec![s(key.clone()), s("v"), s("ps")]).await?.into_array();
            Ok::<_, Error>((v.first().and_then(text), v.get(1).and_then(text)))
        };
        let start = read().await?;
        let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            self.ctx.waker.wait_job_signal(left.min(Duration::from_millis(JOB_POLL_MS))).await;
            if read().await? != start {
                return Ok(());
            }
        }
    }
}
