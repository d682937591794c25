//! `JobStore` for [`FaultyStore`]: the hot path, where every write the runtime's worker,
//! rescuer and operator calls make can be faulted. Reads and waits pass straight through.

use flexiq_core::store::{
    AckRequest, CancelRequest, ClaimRequest, EnqueueRequest, Enqueued, ExpireRunawayRequest, HeartbeatReply,
    HeartbeatRequest, JobStore, ReleaseStaleRequest, RequestCancelRequest, RequeueRequest, WaitForJobRequest,
    WaitForWorkRequest,
};
use flexiq_core::{AckOutcome, ClaimedJob, Job, JobId, Result};

use super::{job_list, FaultyStore};
use crate::fault::Op;

#[async_trait::async_trait]
impl JobStore for FaultyStore {
    async fn enqueue(&self, req: EnqueueRequest) -> Result<Vec<Enqueued>> {
        let subject = job_list(req.jobs.iter().map(|j| &j.id));
        self.faulted(Op::Enqueue, subject, self.inner.enqueue(req)).await
    }

    async fn claim(&self, req: ClaimRequest) -> Result<Vec<ClaimedJob>> {
        let subject = format!("worker {}, limit {}", req.worker_id, req.limit);
        self.faulted(Op::Claim, subject, self.inner.claim(req)).await
    }

    async fn ack(&self, req: AckRequest) -> Result<Vec<AckOutcome>> {
        let subject = job_list(req.acks.iter().map(|a| &a.job_id));
        self.faulted(Op::Ack, subject, self.inner.ack(req)).await
    }

    async fn heartbeat(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        let subject = job_list(req.jobs.iter().map(|(id, _)| id));
        self.faulted(Op::Heartbeat, subject, self.inner.heartbeat(req)).await
    }

    async fn renew_buffered(&self, req: HeartbeatRequest) -> Result<Vec<HeartbeatReply>> {
        let subject = format!("buffered {}", job_list(req.jobs.iter().map(|(id, _)| id)));
        self.faulted(Op::Heartbeat, subject, self.inner.renew_buffered(req)).await
    }

    async fn release_stale(&self, req: ReleaseStaleRequest) -> Result<Vec<JobId>> {
        let subject = format!("stale after {} ms at {}", req.stale_after_ms, req.now);
        self.faulted(Op::ReleaseStale, subject, self.inner.release_stale(req)).await
    }

    async fn expire_runaway(&self, req: ExpireRunawayRequest) -> Result<Vec<JobId>> {
        let subject = format!("cap {} ms at {}", req.absolute_cap_ms, req.now);
        self.faulted(Op::ExpireRunaway, subject, self.inner.expire_runaway(req)).await
    }

    async fn requeue(&self, req: RequeueRequest) -> Result<bool> {
        let subject = format!("job {}", req.id);
        self.faulted(Op::Requeue, subject, self.inner.requeue(req)).await
    }

    async fn cancel(&self, req: CancelRequest) -> Result<bool> {
        let subject = format!("job {}", req.id);
        self.faulted(Op::Cancel, subject, self.inner.cancel(req)).await
    }

    async fn request_cancel(&self, req: RequestCancelRequest) -> Result<bool> {
        let subject = format!("job {}", req.id);
        self.faulted(Op::RequestCancel, subject, self.inner.request_cancel(req)).await
    }

    async fn is_cancel_requested(&self, id: &JobId) -> Result<bool> {
        self.inner.is_cancel_requested(id).await
    }

    async fn get(&self, id: &JobId) -> Result<Option<Job>> {
        self.inner.get(id).await
    }

    async fn get_result(&self, id: &JobId) -> Result<Option<Vec<u8>>> {
        self.inner.get_result(id).await
    }

    async fn wait_for_work(&self, req: WaitForWorkRequest) -> Result<()> {
        self.inner.wait_for_work(req).await
    }

    async fn wait_for_job(&self, req: WaitForJobRequest) -> Result<()> {
        self.inner.wait_for_job(req).await
    }
}
