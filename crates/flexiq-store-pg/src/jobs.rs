//! [`JobStore`] for [`PgStore`]: the hot path, delegating to the enqueue, claim and ack modules.

use flexiq_core::store::{Ack, ClaimRequest, EnqueueRequest, Enqueued, HeartbeatReply, JobStore};
use flexiq_core::transition::Event;
use flexiq_core::{AckOutcome, ClaimedJob, Error, Fence, Job, JobId, JobStatus, Result};

use crate::db::uid;
use crate::row::{job, status, JOB_COLS};
use crate::store::PgStore;

#[async_trait::async_trait]
impl JobStore for PgStore {
    async fn enqueue(&self, req: EnqueueRequest) -> Result<Vec<Enqueued>> {
        self.enqueue_jobs(req).await
    }

    async fn claim(&self, req: ClaimRequest) -> Result<Vec<ClaimedJob>> {
        self.claim_jobs(req).await
    }

    async fn ack(&self, acks: Vec<Ack>, now: i64) -> Result<Vec<AckOutcome>> {
        self.ack_jobs(acks, now).await
    }

    async fn heartbeat(&self, jobs: Vec<(JobId, Fence)>, now: i64) -> Result<Vec<HeartbeatReply>> {
        self.heartbeat_jobs(jobs, now).await
    }

    async fn release_stale(&self, stale_after_ms: u64, now: i64) -> Result<Vec<JobId>> {
        self.release_stale_jobs(stale_after_ms, now).await
    }

    async fn expire_runaway(&self, absolute_cap_ms: u64, now: i64) -> Result<Vec<JobId>> {
        self.expire_runaway_jobs(absolute_cap_ms, now).await
    }

    async fn requeue(&self, id: &JobId, now: i64) -> Result<bool> {
        Ok(self.apply_one(id, Event::Requeue, now).await?.unwrap_or(false))
    }

    async fn cancel(&self, id: &JobId, now: i64) -> Result<bool> {
        self.apply_one(id, Event::Cancel, now).await?.ok_or_else(|| Error::JobNotFound(id.clone()))
    }

    async fn request_cancel(&self, id: &JobId, now: i64) -> Result<bool> {
        self.request_cancel_job(id, now).await
    }

    async fn is_cancel_requested(&self, id: &JobId) -> Result<bool> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT cancel_requested FROM {S}.jobs WHERE namespace = $1 AND id = $2");
        let c = self.conn().await?;
        c.opt("read cancel flag", &sql, &[&ns, &u])
            .await?
            .map(|r| r.get(0))
            .ok_or_else(|| Error::JobNotFound(id.clone()))
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql(&format!("SELECT {JOB_COLS} FROM {{S}}.jobs WHERE namespace = $1 AND id = $2"));
        let c = self.conn().await?;
        c.opt("get job", &sql, &[&ns, &u]).await?.map(|r| job(&r)).transpose()
    }

    async fn get_result(&self, id: &JobId) -> Result<Option<Vec<u8>>> {
        let u = uid(id)?;
        let ns: &str = &self.ns;
        let sql = self.sql("SELECT status, result FROM {S}.jobs WHERE namespace = $1 AND id = $2");
        let c = self.conn().await?;
        let r = c.opt("get result", &sql, &[&ns, &u]).await?.ok_or_else(|| Error::JobNotFound(id.clone()))?;
        if status(r.get(0))? == JobStatus::Completed {
            Ok(r.get(1))
        } else {
            Ok(None)
        }
    }

    async fn wait_for_work(&self, queues: &[String], timeout_ms: u64) -> Result<()> {
        self.wait_work(queues, timeout_ms).await
    }

    async fn wait_for_job(&self, id: &JobId, timeout_ms: u64) -> Result<()> {
        self.wait_job(id, timeout_ms).await
    }
}
