//! `History` for [`FaultyStore`](super::FaultyStore). Per-job history passes straight through.

use flexiq_core::store::{
    AppendLogRequest, GetMetricsRequest, History, PartialsRequest, PublishPartialRequest, ReplayRequest,
    SetProgressRequest,
};
use flexiq_core::{AckOutcome, JobId, LogEntry, MetricRow, Partial, ReplayEntry, Result};

use super::FaultyStore;

#[async_trait::async_trait]
impl History for FaultyStore {
    async fn get_metrics(&self, req: GetMetricsRequest) -> Result<Vec<MetricRow>> {
        self.inner.get_metrics(req).await
    }

    async fn publish_partial(&self, req: PublishPartialRequest) -> Result<u64> {
        self.inner.publish_partial(req).await
    }

    async fn partials(&self, req: PartialsRequest) -> Result<Vec<Partial>> {
        self.inner.partials(req).await
    }

    async fn append_log(&self, req: AppendLogRequest) -> Result<()> {
        self.inner.append_log(req).await
    }

    async fn job_logs(&self, id: &JobId) -> Result<Vec<LogEntry>> {
        self.inner.job_logs(id).await
    }

    async fn set_progress(&self, req: SetProgressRequest) -> Result<AckOutcome> {
        self.inner.set_progress(req).await
    }

    async fn replay(&self, req: ReplayRequest) -> Result<JobId> {
        self.inner.replay(req).await
    }

    async fn replay_history(&self, id: &JobId) -> Result<Vec<ReplayEntry>> {
        self.inner.replay_history(id).await
    }
}
