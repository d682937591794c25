//! Flow plans: `plan_flow` turns a caller's tree (ids, namespaces, policies and dependencies
//! all caller-given) into one enqueue batch. A tree it accepts must come out as a batch every
//! store accepts: each node once, every child before its parent, `order` mapping nodes back to
//! jobs, each parent depending on its children with their policies, and the batch passing
//! `EnqueueRequest::validate` as it stands (unless a node's own `depends_on` names another
//! node of the flow: see the end of [`check`]).
//!
//! Input: `namespace \n now \n` then one node per line, in pre-order:
//! `depth|on_failure|id|depends_on|namespace|task`, where a node at depth d is a child of the
//! latest node at a lower depth (the first line is the root whatever its depth), and an empty
//! field is absent (`on_failure` is a policy name or `cancel_dependent`).

use std::collections::HashMap;

use flexiq_core::flow::{plan_flow, EdgePolicy, FlowNode};
use flexiq_core::store::EnqueueRequest;
use flexiq_core::JobId;

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let namespace = f.text();
    let now = f.i64();
    let lines: Vec<String> = String::from_utf8_lossy(&f.rest()).lines().map(str::to_string).collect();
    let Some((root, count)) = tree(&lines) else { return };

    let plan = match plan_flow(root, &namespace, now) {
        Ok(plan) => plan,
        Err(e) => {
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
            return;
        }
    };
    assert_eq!(plan.jobs.len(), count);
    assert_eq!(plan.order.len(), count);
    let mut seen = vec![false; count];
    for &i in &plan.order {
        assert!(!std::mem::replace(&mut seen[i], true), "job {i} mapped twice");
    }
    assert_eq!(plan.order[0], count - 1, "the root comes last");
    let at: HashMap<_, _> = plan.jobs.iter().enumerate().map(|(i, j)| (&j.id, i)).collect();
    assert_eq!(at.len(), count, "ids are unique");
    for (i, job) in plan.jobs.iter().enumerate() {
        assert!(job.dep_policies.is_empty() || job.dep_policies.len() == job.depends_on.len());
        for (k, d) in job.depends_on.iter().enumerate() {
            let policy = job.dep_policies.get(k).copied().unwrap_or_default();
            if policy != EdgePolicy::CancelDependent {
                assert!(at.get(d).is_some_and(|&c| c < i), "child {d} of {} is not placed before it", job.id);
            }
        }
    }
    // `plan_flow` refuses an explicit dependency on an ancestor but not one on the node
    // itself, on its own child, or on a node placed after it: such a plan reaches the store and
    // is refused there by the batch check. Every other plan must pass it.
    let names_a_node = lines.iter().any(|l| {
        let deps = l.split('|').nth(3).unwrap_or_default().split(',');
        deps.filter_map(|d| JobId::parse(d).ok()).any(|d| at.contains_key(&d))
    });
    let batch = EnqueueRequest { jobs: plan.jobs.clone(), max_pending: None, now };
    match batch.validate() {
        Ok(()) => {}
        Err(e) if names_a_node => assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}"),
        Err(e) => panic!("a planned flow fails the batch check: {e}"),
    }
}

/// Builds the tree the lines describe and counts its nodes; `None` for no lines.
fn tree(lines: &[String]) -> Option<(FlowNode, usize)> {
    // Open path from the root: (depth, node); each closes into its parent's children.
    let mut open: Vec<(usize, FlowNode)> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let mut p = line.splitn(6, '|');
        let mut next = || p.next().unwrap_or_default().to_string();
        let depth: usize = next().parse().unwrap_or(1);
        let policy = next();
        let on_failure = match policy.as_str() {
            "" => None,
            "cancel_dependent" => Some(EdgePolicy::CancelDependent),
            other => Some(EdgePolicy::parse(other).unwrap_or(EdgePolicy::FailParent)),
        };
        let id = Some(next()).filter(|s| !s.is_empty());
        let dep = next();
        let ns = Some(next()).filter(|s| !s.is_empty());
        let mut node = FlowNode { id, namespace: ns, task: next(), on_failure, ..Default::default() };
        node.options.depends_on = dep.split(',').filter(|d| !d.is_empty()).map(str::to_string).collect();
        let depth = if n == 0 { 0 } else { depth.max(1) };
        close_to(&mut open, depth);
        open.push((depth, node));
    }
    close_to(&mut open, 1);
    let (_, root) = open.pop()?;
    let count = count(&root);
    Some((root, count))
}

/// Closes open nodes until the last one is shallower than `depth`.
fn close_to(open: &mut Vec<(usize, FlowNode)>, depth: usize) {
    while open.len() > 1 && open.last().is_some_and(|(d, _)| *d >= depth) {
        let (_, child) = open.pop().expect("checked");
        open.last_mut().expect("checked").1.children.push(child);
    }
}

fn count(node: &FlowNode) -> usize {
    let mut stack = vec![node];
    let mut n = 0;
    while let Some(x) = stack.pop() {
        n += 1;
        stack.extend(x.children.iter());
    }
    n
}
