//! Metrics, partial results, logs, progress (each report an event of the stream) and replays.

use flexiq_core::id::new_row_id;
use flexiq_core::store::{
    AppendLogRequest, GetMetricsRequest, History, JobStore, PartialsRequest, PublishPartialRequest,
    ReplayRequest, SetProgressRequest,
};
use flexiq_core::{
    AckOutcome, EnqueueOptions, Error, EventKind, Job, JobId, JobStatus, LogEntry, MetricRow, NewJob,
    Partial, ReplayEntry, Result,
};

use crate::conn::{b, n, s};
use crate::enqueue::{enqueue_args, run_enqueue};
use crate::row::{self, int};
use crate::store::RedisStore;
use crate::transact::transact;

impl RedisStore {
    /// A job from the live table or, failing that, the archive.
    pub(crate) async fn any_job(&self, id: &JobId) -> Result<Option<Job>> {
        if let Some(j) = self.get(id).await? {
            return Ok(Some(j));
        }
        let v = self.ctx.conn.cmd("HGETALL", vec![s(self.ctx.keys.archived(id.as_str()))]).await?;
        row::job_from_hash(&self.ctx.ns, id.as_str(), v)
    }

    /// Runs one operation of `small.lua`, returning its integer reply.
    pub(crate) async fn small_op(&self, args: Vec<fred::types::Value>) -> Result<i64> {
        let v = self.ctx.conn.script(&self.ctx.conn.scripts.small, &self.ctx.keys.base, args).await?;
        Ok(int(&v).unwrap_or(0))
    }
}

/// Strips the `<row id or seq>|` prefix that keeps sorted-set members unique.
fn after_bar(m: &str) -> &str {
    m.split_once('|').map(|(_, rest)| rest).unwrap_or(m)
}

#[async_trait::async_trait]
impl History for RedisStore {
    async fn get_metrics(&self, req: GetMetricsRequest) -> Result<Vec<MetricRow>> {
        self.ctx.check()?;
        let GetMetricsRequest { since_ms: since, task } = req;
        let v = self
            .ctx
            .conn
            .cmd("ZRANGE", vec![s(self.ctx.keys.k("metrics")), n(since), s("+inf"), s("BYSCORE")])
            .await?;
        let mut rows = Vec::new();
        for m in row::strings(v) {
            let row: MetricRow = serde_json::from_str(after_bar(&m)).map_err(Error::backend)?;
            if task.as_ref().is_none_or(|t| row.task == *t) {
                rows.push(row);
            }
        }
        Ok(rows)
    }

    async fn publish_partial(&self, req: PublishPartialRequest) -> Result<u64> {
        self.ctx.check()?;
        req.validate()?;
        let PublishPartialRequest { id, data, now } = req;
        let seq = self.small_op(vec![s("partial"), s(id.as_str()), b(data), n(now)]).await?;
        if seq < 0 {
            return Err(Error::JobNotFound(id));
        }
        self.ctx.waker.job_changed();
        Ok(seq as u64)
    }

    async fn partials(&self, req: PartialsRequest) -> Result<Vec<Partial>> {
        self.ctx.check()?;
        req.validate()?;
        let PartialsRequest { id, after_seq, limit } = req;
        let k = &self.ctx.keys;
        let r = self
            .ctx
            .conn
            .pipeline(vec![
                ("HGET", vec![s(k.job(id.as_str())), s("ps")]),
                ("HGET", vec![s(k.archived(id.as_str())), s("ps")]),
            ])
            .await?;
        let count = int(&r[0]).or_else(|| int(&r[1])).unwrap_or(0).max(0) as u64;
        let last = count.min(after_seq.saturating_add(u64::from(limit)));
        if last <= after_seq {
            return Ok(Vec::new());
        }
        let mut args = vec![s(k.k(&format!("part:{id}")))];
        for seq in after_seq + 1..=last {
            args.push(s(format!("d{seq}")));
            args.push(s(format!("t{seq}")));
        }
        let v = self.ctx.conn.cmd("HMGET", args).await?.into_array();
        Ok((after_seq + 1..=last)
            .zip(v.chunks(2))
            .filter_map(|(seq, p)| {
                Some(Partial { seq, data: row::bytes(&p[0])?, published_at: int(&p[1]).unwrap_or(0) })
            })
            .collect())
    }

    async fn append_log(&self, req: AppendLogRequest) -> Result<()> {
        self.ctx.check()?;
        req.validate()?;
        let AppendLogRequest { id, level, message, now } = req;
        let entry = LogEntry { job_id: id.to_string(), level, message, logged_at: now };
        let json = serde_json::to_string(&entry).map_err(Error::backend)?;
        if self.small_op(vec![s("log"), s(id.as_str()), s(json), n(now)]).await? < 0 {
            return Err(Error::JobNotFound(id));
        }
        Ok(())
    }

    async fn job_logs(&self, id: &JobId) -> Result<Vec<LogEntry>> {
        self.ctx.check()?;
        let v =
            self.ctx.conn.cmd("ZRANGE", vec![s(self.ctx.keys.k(&format!("log:{id}"))), n(0), n(-1)]).await?;
        row::strings(v).iter().map(|m| serde_json::from_str(after_bar(m)).map_err(Error::backend)).collect()
    }

    async fn set_progress(&self, req: SetProgressRequest) -> Result<AckOutcome> {
        self.ctx.check()?;
        req.validate()?;
        let SetProgressRequest { id, fence, progress } = req;
        let ids = vec![id.to_string()];
        let out = transact(&self.ctx, &ids, 0, |plan, rows| match &rows[0] {
            Some(row) if row.holds(fence) => {
                plan.write(row, vec![("pg", s(progress.to_string()))], vec![]);
                plan.event(row, EventKind::Progress, serde_json::json!({ "progress": progress }).to_string());
                Ok(AckOutcome::Acknowledged)
            }
            _ => Ok(AckOutcome::Superseded),
        })
        .await?;
        self.ctx.waker.job_changed();
        Ok(out)
    }

    async fn replay(&self, req: ReplayRequest) -> Result<JobId> {
        self.ctx.check()?;
        let ReplayRequest { id, now } = req;
        let job = self.any_job(&id).await?.ok_or_else(|| Error::JobNotFound(id.clone()))?;
        let opts = EnqueueOptions {
            queue: Some(job.queue.clone()),
            priority: Some(job.priority),
            max_retries: Some(job.max_retries),
            backoff: Some(job.backoff),
            timeout_ms: job.timeout_ms,
            metadata: job.metadata.clone(),
            group_key: job.group_key.clone(),
            workflow_run_id: job.workflow_run_id.clone(),
            workflow_stage_id: job.workflow_stage_id.clone(),
            workflow_version: job.workflow_version.clone(),
            ..Default::default()
        };
        let new = NewJob::build(&job.task, job.payload.clone(), opts, now)?;
        let out = run_enqueue(&self.ctx, enqueue_args(std::slice::from_ref(&new), None, now, None)).await?;
        let replay_id = out
            .into_iter()
            .next()
            .map(|e| e.id)
            .ok_or_else(|| Error::backend("replay enqueue returned nothing"))?;
        let entry = ReplayEntry {
            id: new_row_id(),
            original_job_id: id.to_string(),
            replay_job_id: replay_id.to_string(),
            replayed_at: now,
            original_error: job.last_error.clone(),
            replay_error: None,
        };
        let json = serde_json::to_string(&entry).map_err(Error::backend)?;
        self.ctx.conn.cmd("LPUSH", vec![s(self.ctx.keys.k(&format!("rp:{id}"))), s(json)]).await?;
        Ok(replay_id)
    }

    async fn replay_history(&self, id: &JobId) -> Result<Vec<ReplayEntry>> {
        self.ctx.check()?;
        let v =
            self.ctx.conn.cmd("LRANGE", vec![s(self.ctx.keys.k(&format!("rp:{id}"))), n(0), n(-1)]).await?;
        let mut out: Vec<ReplayEntry> = row::strings(v)
            .iter()
            .map(|j| serde_json::from_str(j).map_err(Error::backend))
            .collect::<Result<_>>()?;
        for e in &mut out {
            if let Some(j) = self.any_job(&JobId::from_trusted(e.replay_job_id.clone())).await? {
                if matches!(j.status, JobStatus::Failed | JobStatus::Dead) {
                    e.replay_error = j.last_error;
                }
            }
        }
        Ok(out)
    }
}
