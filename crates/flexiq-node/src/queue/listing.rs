//! Listings on `NativeQueue`: jobs (offset and keyset, plain and filtered) and the archive.
//! All of them scan, so all of them return Promises and run off the JS event loop.

use napi_derive::napi;

use crate::args;
use crate::error::{IntoNapi, Result};
use crate::options::{ListFilter, DEFAULT_JOB_LIMIT};
use crate::queue::NativeQueue;
use crate::types::{Job, JobPage};

fn jobs(v: Vec<flexiq_core::Job>) -> Vec<Job> {
    v.into_iter().map(Into::into).collect()
}

fn filter_of(filter: Option<ListFilter>) -> Result<(flexiq_core::JobFilter, i64, i64)> {
    match filter {
        Some(f) => f.resolve(),
        None => Ok((Default::default(), DEFAULT_JOB_LIMIT, 0)),
    }
}

#[napi]
impl NativeQueue {
    /// Jobs by status, queue or task, newest first (`limit` default 50, `offset` default 0).
    #[napi]
    pub async fn list_jobs(&self, filter: Option<ListFilter>) -> Result<Vec<Job>> {
        let (f, limit, offset) = filter_of(filter)?;
        let q = self.queue()?;
        Ok(jobs(q.list_jobs(&f, limit, offset).await.napi()?))
    }

    /// `listJobs` plus metadata / error substrings and a created-at range (Unix ms).
    #[napi]
    pub async fn list_jobs_filtered(&self, filter: Option<ListFilter>) -> Result<Vec<Job>> {
        let (f, limit, offset) = filter_of(filter)?;
        let q = self.queue()?;
        Ok(jobs(q.list_jobs_filtered(&f, limit, offset).await.napi()?))
    }

    /// Keyset twin of `listJobs`; `after` is the previous page's `nextCursor`.
    #[napi]
    pub async fn list_jobs_after(
        &self,
        filter: Option<ListFilter>,
        after: Option<String>,
    ) -> Result<JobPage> {
        let (f, limit, _) = filter_of(filter)?;
        let after = args::cursor(after)?;
        let q = self.queue()?;
        Ok(q.list_jobs_after(&f, limit, after.as_deref()).await.napi()?.into())
    }

    /// Keyset twin of `listJobsFiltered`.
    #[napi]
    pub async fn list_jobs_filtered_after(
        &self,
        filter: Option<ListFilter>,
        after: Option<String>,
    ) -> Result<JobPage> {
        let (f, limit, _) = filter_of(filter)?;
        let after = args::cursor(after)?;
        let q = self.queue()?;
        Ok(q.list_jobs_filtered_after(&f, limit, after.as_deref()).await.napi()?.into())
    }

    /// Archived jobs, newest first (`limit` default 50, `offset` default 0).
    #[napi]
    pub async fn list_archived(&self, limit: Option<f64>, offset: Option<f64>) -> Result<Vec<Job>> {
        let (limit, offset) = (args::limit(limit, DEFAULT_JOB_LIMIT)?, args::offset(offset)?);
        let q = self.queue()?;
        Ok(jobs(q.list_archived(limit, offset).await.napi()?))
    }

    /// Keyset twin of `listArchived`, by completed time.
    #[napi]
    pub async fn list_archived_after(&self, limit: Option<f64>, after: Option<String>) -> Result<JobPage> {
        let limit = args::limit(limit, DEFAULT_JOB_LIMIT)?;
        let after = args::cursor(after)?;
        let q = self.queue()?;
        Ok(q.list_archived_after(limit, after.as_deref()).await.napi()?.into())
    }
}
