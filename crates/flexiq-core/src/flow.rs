//! Flows: a parent job with children (to any depth, across queues) inserted as one batch.
//!
//! A flow is built on the dependency edges every store already keeps: each parent depends on
//! its children, so it waits (`waiting`) until they finish. What a child's failure does to its
//! parent is the edge's [`EdgePolicy`], stored with the edge. [`plan_flow`] turns a tree into
//! an ordinary enqueue batch (children before parents, ids assigned up front), so inserting a
//! flow is one transaction or script on every store, and the rules for what a finished child
//! means ([`EdgePolicy::on_child_failed`], [`edge_settled`], [`ChildClass::of`]) live here once.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::id::JobId;
use crate::job::JobStatus;
use crate::options::{validate_name, EnqueueOptions, NewJob};

/// Most jobs one flow may hold.
pub const MAX_FLOW_NODES: usize = 10_000;

/// What a dependency's failure (failed, dead or cancelled) does to the job waiting on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgePolicy {
    /// A plain `depends_on` edge: the dependent is cancelled, and so are its dependents.
    #[default]
    CancelDependent,
    /// The parent fails (status `failed`) naming the child and its error.
    FailParent,
    /// The parent becomes claimable at once, whatever its other children are doing; the child
    /// is listed among the parent's failed children.
    ContinueParent,
    /// The failure is recorded as ignored; the parent waits for its other children as if this
    /// one had completed.
    IgnoreDependency,
    /// The edge is removed; the parent waits for its other children.
    RemoveDependency,
}

/// What a store does to the dependent of an edge whose dependency failed for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildFailure {
    /// Fire [`crate::transition::Event::DependencyFailed`] on the dependent.
    CancelParent,
    /// Fire [`crate::transition::Event::ChildFailed`] on the dependent.
    FailParent,
    /// Fire [`crate::transition::Event::DependenciesMet`] on a waiting dependent now.
    ReleaseParent,
    /// Keep the edge (now settled) and release the dependent if every edge is settled.
    SettleEdge,
    /// Delete the edge and release the dependent if every remaining edge is settled.
    RemoveEdge,
}

impl EdgePolicy {
    /// The flow policies, in a stable order (a flow child may name any of them).
    pub const FLOW: [EdgePolicy; 4] = [
        EdgePolicy::FailParent,
        EdgePolicy::ContinueParent,
        EdgePolicy::IgnoreDependency,
        EdgePolicy::RemoveDependency,
    ];

    /// The storage code (0 for plain `depends_on` edges, so existing edges keep their meaning).
    pub fn code(self) -> u8 {
        match self {
            EdgePolicy::CancelDependent => 0,
            EdgePolicy::FailParent => 1,
            EdgePolicy::ContinueParent => 2,
            EdgePolicy::IgnoreDependency => 3,
            EdgePolicy::RemoveDependency => 4,
        }
    }

    /// Reads a storage code back.
    pub fn from_code(code: u8) -> Result<EdgePolicy> {
        Ok(match code {
            0 => EdgePolicy::CancelDependent,
            1 => EdgePolicy::FailParent,
            2 => EdgePolicy::ContinueParent,
            3 => EdgePolicy::IgnoreDependency,
            4 => EdgePolicy::RemoveDependency,
            c => return Err(Error::backend(format!("unknown dependency policy code {c}"))),
        })
    }

    /// The policy's name as the SDKs spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgePolicy::CancelDependent => "cancel_dependent",
            EdgePolicy::FailParent => "fail_parent",
            EdgePolicy::ContinueParent => "continue_parent",
            EdgePolicy::IgnoreDependency => "ignore_dependency",
            EdgePolicy::RemoveDependency => "remove_dependency",
        }
    }

    /// Parses a flow child's failure policy (camelCase accepted for JavaScript callers).
    pub fn parse(s: &str) -> Result<EdgePolicy> {
        match s {
            "fail_parent" | "failParent" => Ok(EdgePolicy::FailParent),
            "continue_parent" | "continueParent" => Ok(EdgePolicy::ContinueParent),
            "ignore_dependency" | "ignoreDependency" => Ok(EdgePolicy::IgnoreDependency),
            "remove_dependency" | "removeDependency" => Ok(EdgePolicy::RemoveDependency),
            other => Err(Error::invalid(format!(
                "unknown child failure policy {other:?}: expected fail_parent, continue_parent, ignore_dependency or remove_dependency"
            ))),
        }
    }

    /// What the dependent's store write is when the dependency failed for good.
    pub fn on_child_failed(self) -> ChildFailure {
        match self {
            EdgePolicy::CancelDependent => ChildFailure::CancelParent,
            EdgePolicy::FailParent => ChildFailure::FailParent,
            EdgePolicy::ContinueParent => ChildFailure::ReleaseParent,
            EdgePolicy::IgnoreDependency => ChildFailure::SettleEdge,
            EdgePolicy::RemoveDependency => ChildFailure::RemoveEdge,
        }
    }
}

impl std::fmt::Display for EdgePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether an edge no longer holds its dependent back: the dependency completed, or failed
/// under a policy that lets the dependent go on (`continue_parent`, `ignore_dependency`).
pub fn edge_settled(policy: EdgePolicy, dependency: JobStatus) -> bool {
    match dependency {
        JobStatus::Completed => true,
        JobStatus::Failed | JobStatus::Dead | JobStatus::Cancelled => {
            matches!(policy, EdgePolicy::ContinueParent | EdgePolicy::IgnoreDependency)
        }
        _ => false,
    }
}

/// How a parent's dependency is listed by `get_dependencies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildClass {
    /// Completed (its result is the parent's to read).
    Processed,
    /// Not finished.
    Unprocessed,
    /// Failed under `ignore_dependency`.
    Ignored,
    /// Failed under any other policy.
    Failed,
}

impl ChildClass {
    /// The class of a dependency in `status` on an edge with `policy`.
    pub fn of(status: JobStatus, policy: EdgePolicy) -> ChildClass {
        match status {
            JobStatus::Completed => ChildClass::Processed,
            JobStatus::Failed | JobStatus::Dead | JobStatus::Cancelled => {
                if policy == EdgePolicy::IgnoreDependency {
                    ChildClass::Ignored
                } else {
                    ChildClass::Failed
                }
            }
            _ => ChildClass::Unprocessed,
        }
    }
}

/// One node of a flow: a job and the children it waits for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowNode {
    /// Pre-assigned job id (a UUID); one is made when absent.
    pub id: Option<String>,
    /// The namespace the caller means the node for; when given it must be the flow's own, since
    /// no edge crosses a namespace.
    pub namespace: Option<String>,
    /// Task name.
    pub task: String,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// Options; the queue is the node's own. Unique keys, dedup and workflow fields are refused.
    pub options: EnqueueOptions,
    /// What this node's failure does to its parent (default `fail_parent`); refused on the root.
    pub on_failure: Option<EdgePolicy>,
    /// Jobs this one waits for.
    pub children: Vec<FlowNode>,
}

/// A flow as an enqueue batch.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowPlan {
    /// The jobs, every child before its parent.
    pub jobs: Vec<NewJob>,
    /// For each node in the order given (the root, then each child's subtree in turn), its
    /// index in `jobs`.
    pub order: Vec<usize>,
}

/// Validates a flow tree for `namespace` and lays it out as one batch. Refuses a node naming
/// another namespace, an id given twice or a `depends_on` naming one of the node's ancestors
/// or itself (each would make a cycle), a `depends_on` naming one of its own children or a node
/// the batch places after it (a later sibling or branch), a policy on the root, a flow policy
/// that is not one of [`EdgePolicy::FLOW`], more than [`MAX_FLOW_NODES`] jobs, and anything [`NewJob::build`]
/// refuses. Walks without recursion, so depth is bounded by the node cap only.
pub fn plan_flow(root: FlowNode, namespace: &str, now: i64) -> Result<FlowPlan> {
    if root.on_failure.is_some() {
        return Err(Error::invalid("the root of a flow has no parent, so it takes no on_failure policy"));
    }
    // Pre-order pass: assign ids and flatten, remembering each node's parent.
    struct Flat {
        node: FlowNode,
        id: JobId,
        parent: Option<usize>,
    }
    let mut flat: Vec<Flat> = Vec::new();
    let mut ids = HashSet::new();
    let mut stack = vec![(root, None::<usize>)];
    while let Some((mut node, parent)) = stack.pop() {
        if flat.len() == MAX_FLOW_NODES {
            return Err(Error::invalid(format!("a flow holds at most {MAX_FLOW_NODES} jobs")));
        }
        validate_name("task name", &node.task)?;
        let task = node.task.clone();
        if let Some(ns) = &node.namespace {
            if ns != namespace {
                return Err(Error::invalid(format!(
                    "flow job of task {task} names namespace {ns}, but the flow is in {namespace}: no edge crosses a namespace"
                )));
            }
        }
        let o = &node.options;
        if o.unique_key.is_some() || o.dedup.is_some() {
            return Err(Error::invalid(format!(
                "flow job of task {task} cannot carry a unique key or dedup"
            )));
        }
        if o.workflow_run_id.is_some() || o.workflow_stage_id.is_some() || o.workflow_version.is_some() {
            return Err(Error::invalid(format!("flow job of task {task} cannot carry workflow fields")));
        }
        if let Some(p) = node.on_failure {
            if p == EdgePolicy::CancelDependent {
                return Err(Error::invalid(format!(
                    "flow job of task {task}: on_failure must be fail_parent, continue_parent, ignore_dependency or remove_dependency"
                )));
            }
        }
        let id = match &node.id {
            Some(s) => JobId::parse(s)?,
            None => JobId::at(now),
        };
        if !ids.insert(id.clone()) {
            return Err(Error::invalid(format!(
                "job {id} appears twice in the flow, which would make a cycle"
            )));
        }
        let index = flat.len();
        let children = std::mem::take(&mut node.children);
        // Reverse so the first child is visited first.
        for c in children.into_iter().rev() {
            stack.push((c, Some(index)));
        }
        flat.push(Flat { node, id, parent });
    }
    // Ancestor check on explicit depends_on.
    for (i, f) in flat.iter().enumerate() {
        let mut up = flat[i].parent;
        while let Some(a) = up {
            if f.node.options.depends_on.iter().any(|d| d == flat[a].id.as_str()) {
                return Err(Error::invalid(format!(
                    "job {} depends on {}, its ancestor in the flow, which would make a cycle",
                    f.id, flat[a].id
                )));
            }
            up = flat[a].parent;
        }
    }
    // Children of each node, in the order given.
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); flat.len()];
    for (i, f) in flat.iter().enumerate() {
        if let Some(p) = f.parent {
            kids[p].push(i);
        }
    }
    // Post-order: a node's index in `jobs` once all its children are placed.
    let mut order = vec![usize::MAX; flat.len()];
    let mut jobs: Vec<Option<NewJob>> = Vec::with_capacity(flat.len());
    let mut post: Vec<usize> = Vec::with_capacity(flat.len());
    let mut walk = vec![(0usize, false)];
    while let Some((i, expanded)) = walk.pop() {
        if expanded {
            post.push(i);
        } else {
            walk.push((i, true));
            for &c in kids[i].iter().rev() {
                walk.push((c, false));
            }
        }
    }
    refuse_misplaced_dependencies(
        &flat.iter().map(|f| (&f.id, f.node.options.depends_on.as_slice(), f.parent)).collect::<Vec<_>>(),
        &post,
    )?;
    let mut built: Vec<Option<NewJob>> = vec![None; flat.len()];
    for &i in &post {
        let f = &flat[i];
        let mut job = NewJob::build(&f.node.task, f.node.payload.clone(), f.node.options.clone(), now)?;
        job.id = f.id.clone();
        let mut policies = vec![EdgePolicy::CancelDependent; job.depends_on.len()];
        for &c in &kids[i] {
            job.depends_on.push(flat[c].id.clone());
            policies.push(flat[c].node.on_failure.unwrap_or(EdgePolicy::FailParent));
        }
        if job.depends_on.len() > crate::options::MAX_DEPENDENCIES {
            return Err(Error::invalid(format!(
                "job {} has {} children and dependencies, over the limit of {}",
                job.id,
                job.depends_on.len(),
                crate::options::MAX_DEPENDENCIES
            )));
        }
        if policies.iter().any(|p| *p != EdgePolicy::CancelDependent) {
            job.dep_policies = policies;
        }
        built[i] = Some(job);
    }
    for (pos, &i) in post.iter().enumerate() {
        order[i] = pos;
        jobs.push(built[i].take());
    }
    let jobs = jobs.into_iter().map(|j| j.expect("every node is built")).collect();
    Ok(FlowPlan { jobs, order })
}

/// Refuses a `depends_on` naming a node of the same flow that cannot be one of its
/// dependencies: the node itself, one of its own children (already an edge), or a node the
/// batch places after it (a later sibling, or a node of a later branch), which the store would
/// find missing when it inserts the node. `nodes` holds each node's id, explicit dependencies
/// and parent, in pre-order; `post` is the batch order. Ancestors are refused before this.
fn refuse_misplaced_dependencies(nodes: &[(&JobId, &[String], Option<usize>)], post: &[usize]) -> Result<()> {
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.0.as_str(), i)).collect();
    let mut placed = vec![0usize; nodes.len()];
    for (pos, &i) in post.iter().enumerate() {
        placed[i] = pos;
    }
    for (i, (id, depends_on, _)) in nodes.iter().enumerate() {
        for d in depends_on.iter() {
            let Some(k) = JobId::parse(d).ok().and_then(|d| index.get(d.as_str()).copied()) else {
                continue;
            };
            let other = nodes[k].0;
            if k == i {
                return Err(Error::invalid(format!(
                    "job {id} depends on itself in the flow, which would make a cycle"
                )));
            }
            if nodes[k].2 == Some(i) {
                return Err(Error::invalid(format!(
                    "job {id} names {other} in depends_on, but {other} is already its child in the flow"
                )));
            }
            if placed[k] > placed[i] {
                return Err(Error::invalid(format!(
                    "job {id} depends on {other}, which the flow inserts after it (a later sibling or branch): make {other} a child of {id} instead"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(task: &str, children: Vec<FlowNode>) -> FlowNode {
        FlowNode { task: task.into(), children, ..Default::default() }
    }

    #[test]
    fn children_come_before_parents_and_order_maps_back() {
        let tree = node("root", vec![node("a", vec![node("a1", vec![])]), node("b", vec![])]);
        let plan = plan_flow(tree, "ns", 1_000).unwrap();
        let tasks: Vec<&str> = plan.jobs.iter().map(|j| j.task.as_str()).collect();
        assert_eq!(tasks, ["a1", "a", "b", "root"]);
        let given: Vec<&str> = plan.order.iter().map(|&i| plan.jobs[i].task.as_str()).collect();
        assert_eq!(given, ["root", "a", "a1", "b"]);
        let root = &plan.jobs[3];
        assert_eq!(root.depends_on, vec![plan.jobs[1].id.clone(), plan.jobs[2].id.clone()]);
        assert_eq!(root.dep_policies, vec![EdgePolicy::FailParent; 2]);
        assert!(plan.jobs[0].depends_on.is_empty());
    }

    #[test]
    fn bad_trees_are_refused_by_name() {
        let id = JobId::at(5).to_string();
        let twice = FlowNode {
            id: Some(id.clone()),
            ..node("root", vec![FlowNode { id: Some(id.clone()), ..node("c", vec![]) }])
        };
        assert!(plan_flow(twice, "ns", 1).unwrap_err().to_string().contains("cycle"));
        let mut child = node("c", vec![]);
        child.options.depends_on = vec![id.clone()];
        let up = FlowNode { id: Some(id), ..node("root", vec![child]) };
        assert!(plan_flow(up, "ns", 1).unwrap_err().to_string().contains("ancestor"));
        let other = node("root", vec![FlowNode { namespace: Some("b".into()), ..node("c", vec![]) }]);
        assert!(plan_flow(other, "a", 1).unwrap_err().to_string().contains("namespace"));
        let rooted = FlowNode { on_failure: Some(EdgePolicy::FailParent), ..node("r", vec![]) };
        assert!(plan_flow(rooted, "ns", 1).is_err());
        let mut keyed = node("c", vec![]);
        keyed.options.unique_key = Some("k".into());
        assert!(plan_flow(node("r", vec![keyed]), "ns", 1).is_err());
        assert!(EdgePolicy::parse("explode").unwrap_err().to_string().contains("explode"));
    }

    /// The preset ids of [`preset`]'s root, `a`, `a1` and `b`.
    fn preset_ids() -> [String; 4] {
        std::array::from_fn(|_| JobId::at(1).to_string())
    }

    /// A tree of a root with children `a` (holding `a1`) and `b`, ids from `ids`; `edit` adds
    /// dependencies before it is planned.
    fn preset(ids: &[String; 4], edit: impl FnOnce(&mut FlowNode)) -> Result<FlowPlan> {
        let with = |i: usize, n: FlowNode| FlowNode { id: Some(ids[i].clone()), ..n };
        let a = with(1, node("a", vec![with(2, node("a1", vec![]))]));
        let mut tree = with(0, node("root", vec![a, with(3, node("b", vec![]))]));
        edit(&mut tree);
        plan_flow(tree, "ns", 10)
    }

    fn refused(plan: Result<FlowPlan>, names: &str, says: &str) {
        let e = plan.unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
        let text = e.to_string();
        assert!(text.contains(names) && text.contains(says), "{text}");
    }

    #[test]
    fn a_node_depending_on_itself_is_refused() {
        let ids = preset_ids();
        let p = preset(&ids, |t| t.children[0].options.depends_on = vec![ids[1].clone()]);
        refused(p, &ids[1], "itself");
    }

    #[test]
    fn a_node_depending_on_its_own_child_is_refused() {
        let ids = preset_ids();
        let p = preset(&ids, |t| t.children[0].options.depends_on = vec![ids[2].clone()]);
        refused(p, &ids[1], "already its child");
    }

    #[test]
    fn a_node_depending_on_a_later_sibling_or_branch_is_refused() {
        let ids = preset_ids();
        let p = preset(&ids, |t| t.children[0].options.depends_on = vec![ids[3].clone()]);
        refused(p, &ids[1], "inserts after it");
        let p = preset(&ids, |t| t.children[0].children[0].options.depends_on = vec![ids[3].clone()]);
        refused(p, &ids[2], "inserts after it");
    }

    #[test]
    fn a_node_may_depend_on_an_earlier_branch_or_a_grandchild() {
        let ids = preset_ids();
        let a1 = JobId::parse(&ids[2]).unwrap();
        let p = preset(&ids, |t| t.children[1].options.depends_on = vec![ids[2].clone()]).unwrap();
        assert_eq!(p.jobs[2].depends_on, vec![a1.clone()]);
        let p = preset(&ids, |t| t.options.depends_on = vec![ids[2].clone()]).unwrap();
        assert_eq!(p.jobs[3].depends_on[0], a1);
    }

    #[test]
    fn deep_chains_do_not_recurse() {
        let mut n = node("leaf", vec![]);
        for _ in 0..5_000 {
            n = node("up", vec![n]);
        }
        let plan = plan_flow(n, "ns", 1).unwrap();
        assert_eq!(plan.jobs.len(), 5_001);
        assert_eq!(plan.order[0], 5_000);
    }

    #[test]
    fn settling_and_classes_follow_the_policy() {
        for p in EdgePolicy::FLOW {
            assert_eq!(EdgePolicy::parse(p.as_str()).unwrap(), p);
            assert_eq!(EdgePolicy::from_code(p.code()).unwrap(), p);
            assert!(edge_settled(p, JobStatus::Completed));
            assert!(!edge_settled(p, JobStatus::Running));
        }
        assert!(edge_settled(EdgePolicy::IgnoreDependency, JobStatus::Dead));
        assert!(!edge_settled(EdgePolicy::FailParent, JobStatus::Dead));
        assert_eq!(ChildClass::of(JobStatus::Cancelled, EdgePolicy::IgnoreDependency), ChildClass::Ignored);
        assert_eq!(ChildClass::of(JobStatus::Failed, EdgePolicy::ContinueParent), ChildClass::Failed);
        assert_eq!(ChildClass::of(JobStatus::Waiting, EdgePolicy::FailParent), ChildClass::Unprocessed);
    }
}
