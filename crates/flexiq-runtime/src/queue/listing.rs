//! Job and archive listings, offset-paged and keyset-paged.
//!
//! The plain listings match on status, queue and task; the `_filtered` ones add metadata and
//! error substrings and a created-at range. Keyset cursors are opaque and bound to their
//! listing and filter by the store, which refuses a foreign or garbage cursor.

use flexiq_core::options::validate_name;
use flexiq_core::store::{
    ListArchivedAfterRequest, ListArchivedRequest, ListJobsAfterRequest, ListJobsRequest,
};
use flexiq_core::{validate_limit, validate_offset, Job, JobFilter, Page};

use super::Queue;
use crate::error::{Error, Result};

fn check_filter(filter: &JobFilter, extended_allowed: bool) -> Result<()> {
    if !extended_allowed && filter.is_extended() {
        return Err(Error::invalid(
            "metadata, error and created-at filters need list_jobs_filtered / list_jobs_filtered_after",
        ));
    }
    if let Some(q) = &filter.queue {
        validate_name("queue name", q)?;
    }
    if let Some(t) = &filter.task {
        validate_name("task name", t)?;
    }
    for (what, s) in
        [("metadata filter", &filter.metadata_contains), ("error filter", &filter.error_contains)]
    {
        if s.as_deref() == Some("") {
            return Err(Error::invalid(format!("{what} must not be empty")));
        }
    }
    if let (Some(a), Some(b)) = (filter.created_after, filter.created_before) {
        if a >= b {
            return Err(Error::invalid(format!("created_after {a} must be before created_before {b}")));
        }
    }
    Ok(())
}

fn check_cursor(after: Option<&str>) -> Result<()> {
    if after.is_some_and(|c| c.trim().is_empty()) {
        return Err(Error::invalid("cursor must not be empty: pass None for the first page"));
    }
    Ok(())
}

impl Queue {
    /// Jobs matching status / queue / task, newest first. `limit` 1 to 10,000, `offset` 0 or more.
    pub async fn list_jobs(&self, filter: &JobFilter, limit: i64, offset: i64) -> Result<Vec<Job>> {
        check_filter(filter, false)?;
        self.jobs_page(filter, limit, offset).await
    }

    /// [`Queue::list_jobs`] plus metadata / error substrings and a created-at range (Unix ms).
    pub async fn list_jobs_filtered(&self, filter: &JobFilter, limit: i64, offset: i64) -> Result<Vec<Job>> {
        check_filter(filter, true)?;
        self.jobs_page(filter, limit, offset).await
    }

    /// Keyset twin of [`Queue::list_jobs`]: pass the previous page's `next_cursor` as `after`.
    pub async fn list_jobs_after(
        &self,
        filter: &JobFilter,
        limit: i64,
        after: Option<&str>,
    ) -> Result<Page<Job>> {
        check_filter(filter, false)?;
        check_cursor(after)?;
        self.jobs_keyset(filter, limit, after).await
    }

    /// Keyset twin of [`Queue::list_jobs_filtered`].
    pub async fn list_jobs_filtered_after(
        &self,
        filter: &JobFilter,
        limit: i64,
        after: Option<&str>,
    ) -> Result<Page<Job>> {
        check_filter(filter, true)?;
        check_cursor(after)?;
        self.jobs_keyset(filter, limit, after).await
    }

    /// Archived jobs, newest first by finish time.
    pub async fn list_archived(&self, limit: i64, offset: i64) -> Result<Vec<Job>> {
        let req = ListArchivedRequest { limit: validate_limit(limit)?, offset: validate_offset(offset)? };
        Ok(self.store.list_archived(req).await?)
    }

    /// Keyset twin of [`Queue::list_archived`].
    pub async fn list_archived_after(&self, limit: i64, after: Option<&str>) -> Result<Page<Job>> {
        check_cursor(after)?;
        let req =
            ListArchivedAfterRequest { limit: validate_limit(limit)?, after: after.map(str::to_string) };
        Ok(self.store.list_archived_after(req).await?)
    }

    async fn jobs_page(&self, filter: &JobFilter, limit: i64, offset: i64) -> Result<Vec<Job>> {
        let req = ListJobsRequest {
            filter: filter.clone(),
            limit: validate_limit(limit)?,
            offset: validate_offset(offset)?,
        };
        Ok(self.store.list_jobs(req).await?)
    }

    async fn jobs_keyset(&self, filter: &JobFilter, limit: i64, after: Option<&str>) -> Result<Page<Job>> {
        let req = ListJobsAfterRequest {
            filter: filter.clone(),
            limit: validate_limit(limit)?,
            after: after.map(str::to_string),
        };
        Ok(self.store.list_jobs_after(req).await?)
    }
}
