//! Job schedulers: the repeatable jobs a namespace fires (cron with a time zone, or every N
//! ms), kept in the store and fired by the elected cleaner (`services::scheduler`).
//!
//! The rules (slots, catch-up, limits, what a template may set) are
//! `flexiq_core::schedule`'s; these calls validate through it and stamp the queue's clock.

use flexiq_core::store::{ListSchedulersRequest, UpsertSchedulerRequest};
use flexiq_core::{JobScheduler, JobTemplate, Page, RepeatRule};

use super::clean::page_count;
use super::Queue;
use crate::error::Result;

impl Queue {
    /// Creates the scheduler `id`, or replaces the rule and template of the existing one
    /// (keeping its count; a slot it fired never fires again). Returns the stored scheduler
    /// with its next slot. `InvalidArgument` for a malformed cron pattern, an unknown zone, a
    /// bad period, limit or window, or a template that sets a delay, `run_at`, LIFO, a unique or
    /// dedup key, dependencies or workflow fields.
    pub async fn upsert_job_scheduler(
        &self,
        id: &str,
        rule: RepeatRule,
        template: JobTemplate,
    ) -> Result<JobScheduler> {
        let req = UpsertSchedulerRequest { id: id.to_string(), rule, template, now: self.now_ms() };
        req.validate()?;
        let s = self.store.upsert_job_scheduler(req).await?;
        tracing::info!(scheduler = id, next_run_ms = ?s.next_run_ms, "upserted job scheduler");
        Ok(s)
    }

    /// The scheduler `id`, or `None`.
    pub async fn get_job_scheduler(&self, id: &str) -> Result<Option<JobScheduler>> {
        flexiq_core::schedule::validate_scheduler_id(id)?;
        Ok(self.store.get_job_scheduler(id).await?)
    }

    /// A page of schedulers by id (`limit` 1 to 10,000); pass the page's `next_cursor` back as
    /// `after` for the next.
    pub async fn list_job_schedulers(&self, limit: i64, after: Option<&str>) -> Result<Page<JobScheduler>> {
        let req =
            ListSchedulersRequest { limit: page_count("limit", limit)?, after: after.map(str::to_string) };
        req.validate()?;
        Ok(self.store.list_job_schedulers(req).await?)
    }

    /// Removes the scheduler `id` (the jobs it fired stay); false when there was none.
    pub async fn remove_job_scheduler(&self, id: &str) -> Result<bool> {
        flexiq_core::schedule::validate_scheduler_id(id)?;
        let removed = self.store.remove_job_scheduler(id).await?;
        tracing::info!(scheduler = id, removed, "removed job scheduler");
        Ok(removed)
    }

    /// How many schedulers the namespace has.
    pub async fn count_job_schedulers(&self) -> Result<u64> {
        Ok(self.store.count_job_schedulers().await?)
    }
}
