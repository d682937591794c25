//! Job schedulers on `NativeQueue`, as the runtime's `queue/schedulers.rs`: create or replace
//! one, read, list, remove and count them. A worker's elected maintenance fires them.
//!
//! The shapes and their conversions are in `crate::schedule`; the rules (cron and zone,
//! window, limit, what a template may set) are core's, so a bad rule or template comes back
//! as `INVALID_ARGUMENT` from there with nothing stored.

use napi_derive::napi;

use crate::args;
use crate::error::{IntoNapi, Result};
use crate::queue::NativeQueue;
use crate::schedule::{
    JobSchedulerPage, JobSchedulerRecord, ListJobSchedulersOptions, SchedulerRepeat, SchedulerTemplate,
};

/// Schedulers one `listJobSchedulers` page holds when the caller names no limit.
const DEFAULT_SCHEDULERS: i64 = 100;

#[napi]
impl NativeQueue {
    /// Creates the scheduler `id`, or replaces the rule and template of the existing one
    /// (keeping its creation time, count and last slot: a slot it fired never fires again).
    /// Resolves to the stored scheduler with its next slot (Unix ms). `INVALID_ARGUMENT` for
    /// a malformed cron pattern, an unknown zone, a bad period, limit, window or catch-up, or
    /// a template that sets what each slot decides.
    #[napi]
    pub async fn upsert_job_scheduler(
        &self,
        id: String,
        repeat: SchedulerRepeat,
        template: SchedulerTemplate,
    ) -> Result<JobSchedulerRecord> {
        let rule = repeat.resolve()?;
        let template = template.resolve()?;
        let q = self.queue()?;
        Ok(q.upsert_job_scheduler(&id, rule, template).await.napi()?.into())
    }

    /// The scheduler `id`, or `null` when there is none.
    #[napi]
    pub async fn get_job_scheduler(&self, id: String) -> Result<Option<JobSchedulerRecord>> {
        let q = self.queue()?;
        Ok(q.get_job_scheduler(&id).await.napi()?.map(Into::into))
    }

    /// One keyset page of the namespace's schedulers by id (`limit` 1 to 10,000, default
    /// 100; `after` the previous page's `nextCursor`). `INVALID_ARGUMENT` for a bad limit or
    /// cursor.
    #[napi]
    pub async fn list_job_schedulers(
        &self,
        options: Option<ListJobSchedulersOptions>,
    ) -> Result<JobSchedulerPage> {
        let (limit, after) = options.map_or((None, None), |o| (o.limit, o.after));
        let limit = args::limit(limit, DEFAULT_SCHEDULERS)?;
        let after = args::cursor(after)?;
        let q = self.queue()?;
        Ok(q.list_job_schedulers(limit, after.as_deref()).await.napi()?.into())
    }

    /// Removes the scheduler `id` (the jobs it fired stay); `false` when there was none.
    #[napi]
    pub async fn remove_job_scheduler(&self, id: String) -> Result<bool> {
        let q = self.queue()?;
        q.remove_job_scheduler(&id).await.napi()
    }

    /// How many schedulers the namespace has.
    #[napi]
    pub async fn count_job_schedulers(&self) -> Result<f64> {
        let q = self.queue()?;
        Ok(q.count_job_schedulers().await.napi()? as f64)
    }
}
