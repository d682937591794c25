//! `Workflows` for [`FaultyStore`]: stage upserts and the fair claim (alone or after a batch of
//! acks) can be faulted like their plain twins; run-wide cancels, deletes and listings pass
//! straight through.

use flexiq_core::store::{
    AckClaimFairReply, AckClaimFairRequest, CancelRunRequest, ClaimFairRequest, DeleteStagesRequest,
    UpsertStagesRequest, Workflows,
};
use flexiq_core::{ClaimedJob, Job, JobId, Result};

use super::{job_list, FaultyStore};
use crate::fault::Op;

#[async_trait::async_trait]
impl Workflows for FaultyStore {
    async fn upsert_stages(&self, req: UpsertStagesRequest) -> Result<Vec<JobId>> {
        let subject = job_list(req.jobs.iter().map(|j| &j.id));
        self.faulted(Op::UpsertStages, subject, self.inner.upsert_stages(req)).await
    }

    async fn claim_fair(&self, req: ClaimFairRequest) -> Result<Vec<ClaimedJob>> {
        let subject = format!("workers {}", req.workers.join(", "));
        self.faulted(Op::ClaimFair, subject, self.inner.claim_fair(req)).await
    }

    async fn ack_and_claim_fair(&self, req: AckClaimFairRequest) -> Result<AckClaimFairReply> {
        let subject = format!(
            "acks of {} then workers {}",
            job_list(req.acks.iter().map(|a| &a.job_id)),
            req.claim.workers.join(", ")
        );
        self.faulted(Op::ClaimFair, subject, self.inner.ack_and_claim_fair(req)).await
    }

    async fn cancel_run(&self, req: CancelRunRequest) -> Result<u64> {
        self.inner.cancel_run(req).await
    }

    async fn delete_stages(&self, req: DeleteStagesRequest) -> Result<u64> {
        self.inner.delete_stages(req).await
    }

    async fn jobs_of_run(&self, run_id: &str) -> Result<Vec<Job>> {
        self.inner.jobs_of_run(run_id).await
    }
}
