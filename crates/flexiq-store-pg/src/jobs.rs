//! [`JobStore`] for [`PgStore`]: the hot path, delegating to the enqueue, claim and ack modules.

use flexiq_core::store::{
    AckRequest, CancelRequest, ClaimRequest, EnqueueRequest, Enqueued, ExpireRunawayRequest, HeartbeatReply,
    HeartbeatRequest, JobStore, ReleaseStaleRequest, RequestCancelRequest, RequeueRequest, WaitForJobRequest,
    WaitForWorkRequest,
};
use flexiq_core::transition::Event;
use flexiq_core::{AckOutcome, ClaimedJob, Error, Job, JobId, JobStatus, Result};

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

    async fn ack(&self, req: AckRequest) -> Result<Vec<AckOutcome>> {
        self.ack_jobs(req.acks, req.now).await
    }

    async fn heartbeat(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        self.heartbeat_jobs(req.jobs, req.now, true).await
    }

    async fn renew_buffered(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        self.heartbeat_jobs(req.jobs, req.now, false).await
    }

    async fn release_stale(&self, req: ReleaseStaleRequest) -> Result<Vec<JobId>> {
        self.release_stale_jobs(req.stale_after_ms, req.now).await
    }

    async fn expire_runaway(&self, req: ExpireRunawayRequest) -> Result<Vec<JobId>> {
        self.expire_runaway_jobs(req.absolute_cap_ms, req.now).await
    }

    async fn requeue(&self, req: RequeueRequest) -> Result<bool> {
        Ok(self.apply_one(&req.id, Event::Requeue, req.now).await?.unwrap_or(false))
    }

    async fn cancel(&self, req: CancelRequest) -> Result<bool> {
        self.apply_one(&req.id, Event::Cancel, req.now).await?.ok_or(Error::JobNotFound(req.id))
    }

    async fn request_cancel(&self, req: RequestCancelRequest) -> Result<bool> {
        self.request_cancel_job(&req.id, req.now).await
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

    async fn wait_for_work(&self, req: WaitForWorkRequest) -> Result<()> {
        self.wait_work(&req.queues, req.timeout_ms).await
    }

    async fn wait_for_job(&self, req: WaitForJobRequest) -> Result<()> {
        self.wait_job(&req.id, req.timeout_ms).await
    }
}
