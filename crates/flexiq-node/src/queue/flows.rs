//! Flows on `NativeQueue`, as the runtime's `queue/flows.rs`: inserting a tree of jobs across
//! queues in one transaction, reading a parent's children by outcome, and detaching a child.
//!
//! The JS layer hands a tree over as a list in pre-order, each node naming its parent's
//! index, and the tree is rebuilt here bottom-up: neither side recurses, so a deep chain is
//! bounded by the runtime's node cap only. Every node is converted (options, policy) before
//! anything is built, so a bad node refuses the whole flow with nothing written. Children's
//! results are JSON-decoded as `getResult` decodes them.

use flexiq_core::flow::FlowNode;
use flexiq_runtime::ChildDependency as CoreChild;
use napi_derive::napi;
use serde_json::Value;

use crate::args;
use crate::error::{invalid, IntoNapi, Result};
use crate::options::{DependenciesOptions, FlowNodeInput};
use crate::queue::NativeQueue;
use crate::types::decode;

/// Children one `getDependencies` page holds when the caller names no limit.
const DEFAULT_DEPENDENCIES: i64 = 100;

/// One dependency of a parent.
#[napi(object)]
pub struct ChildDependencyRecord {
    /// The child's id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task: String,
    /// Its status.
    #[napi(
        ts_type = "'pending' | 'running' | 'completed' | 'failed' | 'dead' | 'cancelled' | 'suspended' | 'waiting'"
    )]
    pub status: String,
    /// What its failure does to the parent (`cancel_dependent` for a plain `dependsOn` edge).
    #[napi(
        ts_type = "'cancel_dependent' | 'fail_parent' | 'continue_parent' | 'ignore_dependency' | 'remove_dependency'"
    )]
    pub policy: String,
    /// The JSON-decoded result of a completed child (`null` without one).
    #[napi(ts_type = "unknown")]
    pub result: Value,
    /// The last error of a child that failed.
    pub error: Option<String>,
}

impl From<CoreChild> for ChildDependencyRecord {
    fn from(c: CoreChild) -> Self {
        ChildDependencyRecord {
            id: c.id.to_string(),
            queue: c.queue,
            task: c.task,
            status: c.status.as_str().to_string(),
            policy: c.policy.as_str().to_string(),
            result: c.result.as_deref().map_or(Value::Null, decode),
            error: c.error,
        }
    }
}

/// One page of a parent's dependencies by outcome, ordered by child id within each list.
#[napi(object)]
pub struct DependenciesRecord {
    /// Completed children, with their results.
    pub processed: Vec<ChildDependencyRecord>,
    /// Children not finished.
    pub unprocessed: Vec<ChildDependencyRecord>,
    /// Children that failed under `ignore_dependency`.
    pub ignored: Vec<ChildDependencyRecord>,
    /// Children that failed under any other policy.
    pub failed: Vec<ChildDependencyRecord>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<String>,
}

fn records(v: Vec<CoreChild>) -> Vec<ChildDependencyRecord> {
    v.into_iter().map(Into::into).collect()
}

/// Rebuilds the tree listed in pre-order by `nodes`, each naming an earlier node as parent.
fn tree(nodes: Vec<FlowNodeInput>) -> Result<FlowNode> {
    if nodes.is_empty() {
        return Err(invalid("addFlow needs a root node"));
    }
    let mut slots = Vec::with_capacity(nodes.len());
    let mut parents = Vec::with_capacity(nodes.len());
    for (i, n) in nodes.into_iter().enumerate() {
        let (parent, node) = n.resolve()?;
        match (i, parent) {
            (0, None) => {}
            (0, Some(p)) => return Err(invalid(format!("flow node 0 is the root but names parent {p}"))),
            (_, Some(p)) if (p as usize) < i => {}
            (_, p) => {
                return Err(invalid(format!(
                    "flow node {i} (task {}) names parent {p:?}, which must be an earlier node",
                    node.task
                )))
            }
        }
        parents.push(parent.map_or(0, |p| p as usize));
        slots.push(Some(node));
    }
    // Every node's children come after it, so walking back moves each finished subtree into
    // its parent; the children arrive last first and are put back in order once complete.
    for i in (1..slots.len()).rev() {
        let Some(mut node) = slots[i].take() else { continue };
        node.children.reverse();
        if let Some(parent) = slots[parents[i]].as_mut() {
            parent.children.push(node);
        }
    }
    let mut root = slots.swap_remove(0).ok_or_else(|| invalid("addFlow needs a root node"))?;
    root.children.reverse();
    Ok(root)
}

#[napi]
impl NativeQueue {
    /// Inserts a flow in one transaction (one script on Redis): every node a job on its own
    /// queue, each parent `waiting` until its children finish. Resolves to the ids in the order
    /// the nodes were listed. A bad node is `INVALID_ARGUMENT` naming it, and nothing is
    /// written.
    #[napi]
    pub async fn add_flow(&self, nodes: Vec<FlowNodeInput>) -> Result<Vec<String>> {
        let root = tree(nodes)?;
        let q = self.queue()?;
        Ok(q.add_flow(root).await.napi()?.into_iter().map(|id| id.to_string()).collect())
    }

    /// One page of `jobId`'s dependencies by outcome (`limit` 1 to 10,000, default 100;
    /// `after` the previous page's `nextAfter`). `NOT_FOUND` for an unknown job,
    /// `INVALID_ARGUMENT` for a bad id, cursor or limit.
    #[napi]
    pub async fn get_dependencies(
        &self,
        job_id: String,
        options: Option<DependenciesOptions>,
    ) -> Result<DependenciesRecord> {
        let (after, limit) = options.map_or((None, None), |o| (o.after, o.limit));
        let after = args::cursor(after)?;
        let limit = args::limit(limit, DEFAULT_DEPENDENCIES)?;
        let q = self.queue()?;
        let d = q.get_dependencies(&job_id, after.as_deref(), limit).await.napi()?;
        Ok(DependenciesRecord {
            processed: records(d.processed),
            unprocessed: records(d.unprocessed),
            ignored: records(d.ignored),
            failed: records(d.failed),
            next_after: d.next_after.map(|id| id.to_string()),
        })
    }

    /// Detaches an unfinished child from the jobs waiting on it (a parent left with nothing
    /// open becomes claimable). `false` for a finished child or one nothing waits on;
    /// `NOT_FOUND` for an unknown id.
    #[napi]
    pub async fn remove_child_dependency(&self, child_id: String) -> Result<bool> {
        let q = self.queue()?;
        q.remove_child_dependency(&child_id).await.napi()
    }
}
