//! Job schedulers in the store: upsert, read, list, remove and count them, and fire the due
//! ones.
//!
//! The rules live in [`crate::schedule`]: a store reads a scheduler, asks
//! [`crate::schedule::plan_upsert`] or [`crate::schedule::plan_fire`], and writes the plan in
//! one transaction or script, firing a slot only while the scheduler's stored next slot is
//! still the plan's `expected_next_ms`, so two leaders racing on one slot enqueue it once.

use crate::cursor::Page;
use crate::error::{Error, Result};
use crate::filter::MAX_PAGE;
use crate::id::JobId;
use crate::schedule::{JobScheduler, JobTemplate, RepeatRule};

/// The keyset listing name scheduler cursors are bound to.
pub const SCHEDULERS_LISTING: &str = "job_schedulers";

/// Creates or replaces a scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct UpsertSchedulerRequest {
    /// The scheduler's id in the namespace.
    pub id: String,
    /// When it fires.
    pub rule: RepeatRule,
    /// What it enqueues.
    pub template: JobTemplate,
    /// Unix ms.
    pub now: i64,
}

impl UpsertSchedulerRequest {
    /// Checks the id, the rule and the template (see [`crate::schedule::plan_upsert`]).
    pub fn validate(&self) -> Result<()> {
        crate::schedule::validate_scheduler_id(&self.id)?;
        self.rule.validate()?;
        crate::schedule::validate_template(&self.id, &self.template)
    }
}

/// A keyset page of schedulers, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListSchedulersRequest {
    /// Page size (1 to `MAX_PAGE`).
    pub limit: u32,
    /// The previous page's cursor; `None` for the first page.
    pub after: Option<String>,
}

impl ListSchedulersRequest {
    /// Checks the page size; the cursor is checked where it is decoded.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_PAGE).contains(&self.limit) {
            return Err(Error::invalid(format!("limit {} must be between 1 and {MAX_PAGE}", self.limit)));
        }
        Ok(())
    }

    /// The id the page starts after (decoded and checked cursor), or `None`.
    pub fn after_id(&self) -> Result<Option<String>> {
        self.after
            .as_deref()
            .map(|c| crate::cursor::Cursor::decode(c, SCHEDULERS_LISTING, 0).map(|c| c.id))
            .transpose()
    }
}

/// Builds a scheduler page from up to `limit + 1` rows in id order.
pub fn schedulers_page(rows: Vec<JobScheduler>, limit: u32) -> Page<JobScheduler> {
    crate::cursor::page_from_rows(rows, limit as usize, SCHEDULERS_LISTING, 0, |s| (0, s.id.clone()))
}

/// One round of the leader: fire the due schedulers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FireSchedulersRequest {
    /// Most schedulers fired in this round (1 to `MAX_PAGE`), the most overdue first.
    pub limit: u32,
    /// Unix ms.
    pub now: i64,
}

impl FireSchedulersRequest {
    /// Checks the limit.
    pub fn validate(&self) -> Result<()> {
        if !(1..=MAX_PAGE).contains(&self.limit) {
            return Err(Error::invalid(format!("limit {} must be between 1 and {MAX_PAGE}", self.limit)));
        }
        Ok(())
    }
}

/// A slot a round fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiredSlot {
    /// The scheduler.
    pub scheduler_id: String,
    /// The slot (Unix ms), the job's `run_at`.
    pub slot_ms: i64,
    /// The job enqueued for it (an existing job's id when its unique key held it already).
    pub job_id: JobId,
}

/// Job schedulers.
#[async_trait::async_trait]
pub trait Schedulers: Send + Sync {
    /// Creates the scheduler, or replaces the rule and template of the one with that id
    /// (keeping its count and last slot, and never firing a slot again); returns the stored
    /// record.
    async fn upsert_job_scheduler(&self, req: UpsertSchedulerRequest) -> Result<JobScheduler>;

    /// The scheduler with that id, or `None`.
    async fn get_job_scheduler(&self, id: &str) -> Result<Option<JobScheduler>>;

    /// A page of schedulers in id order.
    async fn list_job_schedulers(&self, req: ListSchedulersRequest) -> Result<Page<JobScheduler>>;

    /// Removes the scheduler (jobs it fired stay); false when there was none.
    async fn remove_job_scheduler(&self, id: &str) -> Result<bool>;

    /// How many schedulers the namespace has.
    async fn count_job_schedulers(&self) -> Result<u64>;

    /// Fires the due schedulers (next slot at or before `now`), each by
    /// [`crate::schedule::plan_fire`]: its jobs enqueued and its next slot, last slot and count
    /// written in one transaction or script, only while its next slot is still the planned
    /// one. Returns the slots fired, by scheduler and slot.
    async fn fire_due_schedulers(&self, req: FireSchedulersRequest) -> Result<Vec<FiredSlot>>;
}
