//! Reading and cutting a parent's dependency edges (see [`crate::flow`]).
//!
//! Inserting a flow needs no trait of its own: [`crate::flow::plan_flow`] makes it an
//! ordinary enqueue batch whose parents carry per-edge policies. What a parent's handler and
//! an operator need beyond that is to see its children by outcome, keyset-paged by child id,
//! and to detach a child that should no longer hold its parent back.

use crate::error::{Error, Result};
use crate::filter::MAX_PAGE;
use crate::flow::{ChildClass, EdgePolicy};
use crate::id::JobId;
use crate::job::JobStatus;

/// One page of a job's dependencies, ordered by child id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DependenciesRequest {
    /// The parent.
    pub job_id: JobId,
    /// Only children with a greater id (the previous page's `next_after`).
    pub after: Option<JobId>,
    /// Most children to read (1 to [`MAX_PAGE`]).
    pub limit: u32,
}

impl DependenciesRequest {
    /// Checks the page size.
    pub fn validate(&self) -> Result<()> {
        if self.limit == 0 || self.limit > MAX_PAGE {
            return Err(Error::invalid(format!(
                "dependencies page limit {} must be between 1 and {MAX_PAGE}",
                self.limit
            )));
        }
        Ok(())
    }
}

/// One dependency of a parent, as a store read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildDependency {
    /// The child.
    pub id: JobId,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: JobStatus,
    /// The edge's policy.
    pub policy: EdgePolicy,
    /// The result bytes of a completed child.
    pub result: Option<Vec<u8>>,
    /// The last error of a child that failed.
    pub error: Option<String>,
}

/// A page of a parent's dependencies by outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// Completed children.
    pub processed: Vec<ChildDependency>,
    /// Children not finished.
    pub unprocessed: Vec<ChildDependency>,
    /// Children that failed under `ignore_dependency`.
    pub ignored: Vec<ChildDependency>,
    /// Children that failed under any other policy.
    pub failed: Vec<ChildDependency>,
    /// Pass as `after` for the next page; `None` on the last page.
    pub next_after: Option<JobId>,
}

impl Dependencies {
    /// Sorts one page of edges (read in child-id order, at most `limit` of them) by outcome.
    pub fn from_page(page: Vec<ChildDependency>, limit: u32) -> Dependencies {
        let next_after = if page.len() >= limit as usize { page.last().map(|c| c.id.clone()) } else { None };
        let mut out = Dependencies { next_after, ..Default::default() };
        for c in page {
            match ChildClass::of(c.status, c.policy) {
                ChildClass::Processed => out.processed.push(c),
                ChildClass::Unprocessed => out.unprocessed.push(c),
                ChildClass::Ignored => out.ignored.push(c),
                ChildClass::Failed => out.failed.push(c),
            }
        }
        out
    }

    /// Every child on the page.
    pub fn len(&self) -> usize {
        self.processed.len() + self.unprocessed.len() + self.ignored.len() + self.failed.len()
    }

    /// Whether the page holds no child.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Detach a child from the jobs waiting on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoveChildDependencyRequest {
    /// The child.
    pub child_id: JobId,
    /// Unix ms.
    pub now: i64,
}

/// Dependency edges by outcome, and cutting them.
#[async_trait::async_trait]
pub trait Flows: Send + Sync {
    /// One page of `job_id`'s dependencies by outcome (a child gone from the store is left
    /// out). `NotFound` for an unknown parent.
    async fn get_dependencies(&self, req: DependenciesRequest) -> Result<Dependencies>;

    /// Removes every edge from a child that has not finished to the jobs waiting on it; each of
    /// those that is `waiting` and has no open edge left becomes claimable, in the same
    /// transaction. True when an edge was removed; false for a finished child or one nothing
    /// waits on. `NotFound` for an unknown child.
    async fn remove_child_dependency(&self, req: RemoveChildDependencyRequest) -> Result<bool>;
}
