//! Flows from the queue: inserting a tree of jobs across queues, reading a parent's children
//! by outcome, and detaching a child.
//!
//! The tree is laid out by `flexiq_core::flow::plan_flow` (children before parents, ids
//! assigned up front) and written by the store's ordinary enqueue, so it lands in one
//! transaction or script, or not at all, on every store.

use flexiq_core::flow::{plan_flow, FlowNode};
use flexiq_core::store::{Dependencies, DependenciesRequest, EnqueueRequest, RemoveChildDependencyRequest};
use flexiq_core::{validate_limit, JobId};

use super::{parse_id, Queue};
use crate::error::Result;

impl Queue {
    /// Inserts a flow: `tree` and all its descendants, each on its own queue, parents `waiting`
    /// until their children finish, all in one transaction (one script on Redis). Returns the
    /// ids in the order the nodes were given (the root, then each child's subtree in turn). A
    /// bad node (a cycle, another namespace, a unique key or dedup, a bad option) is
    /// `InvalidArgument` naming it, and nothing is written. The queue's `max_pending` applies.
    pub async fn add_flow(&self, tree: FlowNode) -> Result<Vec<JobId>> {
        let now = self.now_ms();
        let plan = plan_flow(tree, self.store.namespace(), now)?;
        let n = plan.jobs.len();
        let out = self
            .store
            .enqueue(EnqueueRequest { jobs: plan.jobs, max_pending: self.max_pending, now })
            .await?;
        tracing::debug!(jobs = n, root = %out[plan.order[0]].id, "added flow");
        Ok(plan.order.iter().map(|&i| out[i].id.clone()).collect())
    }

    /// One page (1 to 10,000 children, by child id after `after`) of `job_id`'s dependencies by
    /// outcome: processed (with results), unprocessed, ignored and failed (with errors). Pass
    /// the page's `next_after` to read on. `NotFound` for an unknown job, `InvalidArgument` for
    /// a bad id or limit.
    pub async fn get_dependencies(
        &self,
        job_id: &str,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Dependencies> {
        let req = DependenciesRequest {
            job_id: parse_id(job_id)?,
            after: after.map(parse_id).transpose()?,
            limit: validate_limit(limit)?,
        };
        Ok(self.store.get_dependencies(req).await?)
    }

    /// Every dependency of `job_id`, read page by page (what a handler's context reads).
    pub(crate) async fn all_dependencies(&self, job_id: &str) -> Result<Dependencies> {
        let mut all = Dependencies::default();
        let mut after: Option<JobId> = None;
        loop {
            let page = self.get_dependencies(job_id, after.as_ref().map(|a| a.as_str()), 1_000).await?;
            all.processed.extend(page.processed);
            all.unprocessed.extend(page.unprocessed);
            all.ignored.extend(page.ignored);
            all.failed.extend(page.failed);
            match page.next_after {
                Some(n) => after = Some(n),
                None => return Ok(all),
            }
        }
    }

    /// Detaches an unfinished child from the jobs waiting on it; a parent left with nothing
    /// open becomes claimable. False for a finished child or one nothing waits on; `NotFound`
    /// for an unknown id.
    pub async fn remove_child_dependency(&self, child_id: &str) -> Result<bool> {
        let req = RemoveChildDependencyRequest { child_id: parse_id(child_id)?, now: self.now_ms() };
        let removed = self.store.remove_child_dependency(req).await?;
        tracing::info!(child_id, removed, "removed a child dependency");
        Ok(removed)
    }
}
