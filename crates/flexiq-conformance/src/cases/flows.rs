//! Flows: a tree of jobs across queues inserted in one batch, parents waiting on their
//! children, each child's failure policy, the dependency listing and cutting a child loose.

use flexiq_core::flow::{plan_flow, EdgePolicy, FlowNode};
use flexiq_core::store::{DependenciesRequest, RemoveChildDependencyRequest};
use flexiq_core::{EnqueueOptions, ErrorKind, JobId, JobStatus, Store};

use crate::fixtures::{assert_kind, at, complete, enqueue, fail, get, job_in, open, put, status, take_from};
use crate::Harness;

const Q1: &str = "flow-top";
const Q2: &str = "flow-mid";
const Q3: &str = "flow-leaf";

fn node(queue: &str, task: &str, children: Vec<FlowNode>) -> FlowNode {
    FlowNode {
        task: task.into(),
        payload: task.as_bytes().to_vec(),
        options: EnqueueOptions { queue: Some(queue.into()), max_retries: Some(0), ..Default::default() },
        children,
        ..Default::default()
    }
}

fn with_policy(mut n: FlowNode, p: EdgePolicy) -> FlowNode {
    n.on_failure = Some(p);
    n
}

/// Inserts `tree` at `at(0)` and returns the ids in the order the nodes were given.
async fn add_flow(s: &dyn Store, tree: FlowNode) -> Vec<JobId> {
    let plan = plan_flow(tree, s.namespace(), at(0)).unwrap();
    let out = enqueue(s, plan.jobs, None, at(0)).await.unwrap_or_else(|e| panic!("add flow: {e}"));
    assert!(out.iter().all(|e| e.created), "every flow job is new");
    plan.order.iter().map(|&i| out[i].id.clone()).collect()
}

/// Claims the one due job of `queue` at `t`, checking it is `id`.
async fn run(s: &dyn Store, queue: &str, id: &JobId, t: i64) -> flexiq_core::ClaimedJob {
    let got = take_from(s, &[queue], 1, at(t)).await;
    assert_eq!(got.len(), 1, "expected {id} to be claimable on {queue}");
    assert_eq!(&got[0].job.id, id);
    got.into_iter().next().unwrap()
}

async fn deps(s: &dyn Store, id: &JobId) -> flexiq_core::store::Dependencies {
    s.get_dependencies(DependenciesRequest { job_id: id.clone(), after: None, limit: 100 }).await.unwrap()
}

fn ids_of(list: &[flexiq_core::store::ChildDependency]) -> Vec<JobId> {
    list.iter().map(|c| c.id.clone()).collect()
}

/// A root, a middle and two leaves across three queues: one batch, parents wait, and each
/// level runs once the one below completed; the root sees its children's results.
pub async fn flows_three_levels_run_bottom_up(h: &dyn Harness) {
    let s = open(h, "default").await;
    let tree = node(Q1, "root", vec![node(Q2, "mid", vec![node(Q3, "l1", vec![]), node(Q3, "l2", vec![])])]);
    let ids = add_flow(&*s, tree).await;
    let (root, mid, l1, l2) = (&ids[0], &ids[1], &ids[2], &ids[3]);
    assert_eq!(get(&*s, root).await.queue, Q1);
    assert_eq!(status(&*s, root).await, JobStatus::Waiting);
    assert_eq!(status(&*s, mid).await, JobStatus::Waiting);
    assert!(take_from(&*s, &[Q1, Q2], 5, at(1)).await.is_empty(), "parents wait for their children");
    let d = deps(&*s, mid).await;
    assert_eq!(d.unprocessed.len(), 2);
    let c1 = run(&*s, Q3, l1, 1).await;
    complete(&*s, &c1, Some(b"one"), at(2)).await;
    assert_eq!(status(&*s, mid).await, JobStatus::Waiting, "one leaf is still open");
    let c2 = run(&*s, Q3, l2, 3).await;
    complete(&*s, &c2, Some(b"two"), at(4)).await;
    let d = deps(&*s, mid).await;
    assert_eq!(d.processed.len(), 2);
    let mut results: Vec<Vec<u8>> = d.processed.iter().map(|c| c.result.clone().unwrap()).collect();
    results.sort();
    assert_eq!(results, vec![b"one".to_vec(), b"two".to_vec()]);
    let cm = run(&*s, Q2, mid, 5).await;
    assert_eq!(status(&*s, root).await, JobStatus::Waiting);
    complete(&*s, &cm, Some(b"mid"), at(6)).await;
    let d = deps(&*s, root).await;
    assert_eq!(ids_of(&d.processed), vec![mid.clone()]);
    assert_eq!(d.processed[0].queue, Q2);
    assert_eq!(d.processed[0].result.as_deref(), Some(&b"mid"[..]));
    run(&*s, Q1, root, 7).await;
}

/// The tree of the policy cases: root (top) <- mid (middle) <- [bad (policy), good] (leaf).
async fn policy_tree(s: &dyn Store, p: EdgePolicy) -> [JobId; 4] {
    let bad = with_policy(node(Q3, "bad", vec![]), p);
    let tree = node(Q1, "root", vec![node(Q2, "mid", vec![bad, node(Q3, "good", vec![])])]);
    let ids = add_flow(s, tree).await;
    [ids[0].clone(), ids[1].clone(), ids[2].clone(), ids[3].clone()]
}

/// Kills the `bad` leaf: its one attempt fails and its budget is 0.
async fn kill_bad(s: &dyn Store, bad: &JobId, t: i64) {
    let c = run(s, Q3, bad, t).await;
    fail(s, &c, "boom", true, at(t + 1)).await;
    assert_eq!(status(s, bad).await, JobStatus::Dead);
}

/// `fail_parent` (the default): the middle fails naming the leaf, and the root fails in turn.
pub async fn flows_fail_parent_fails_every_level_above(h: &dyn Harness) {
    let s = open(h, "default").await;
    let [root, mid, bad, good] = policy_tree(&*s, EdgePolicy::FailParent).await;
    kill_bad(&*s, &bad, 1).await;
    let m = get(&*s, &mid).await;
    assert_eq!(m.status, JobStatus::Failed);
    let err = m.last_error.unwrap();
    assert!(err.contains(bad.as_str()) && err.contains("boom"), "{err}");
    let r = get(&*s, &root).await;
    assert_eq!(r.status, JobStatus::Failed);
    assert!(r.last_error.unwrap().contains(mid.as_str()));
    let d = deps(&*s, &mid).await;
    assert_eq!(ids_of(&d.failed), vec![bad.clone()]);
    assert_eq!(d.failed[0].error.as_deref(), Some("boom"));
    assert_eq!(ids_of(&d.unprocessed), vec![good.clone()]);
    assert_eq!(status(&*s, &good).await, JobStatus::Pending, "a sibling is left to run");
    assert!(take_from(&*s, &[Q1, Q2], 5, at(9)).await.is_empty());
}

/// `continue_parent`: the middle becomes claimable as soon as the leaf fails, its sibling
/// still open; the failure is listed under failed.
pub async fn flows_continue_parent_releases_at_once(h: &dyn Harness) {
    let s = open(h, "default").await;
    let [root, mid, bad, good] = policy_tree(&*s, EdgePolicy::ContinueParent).await;
    kill_bad(&*s, &bad, 1).await;
    assert_eq!(status(&*s, &mid).await, JobStatus::Pending);
    let d = deps(&*s, &mid).await;
    assert_eq!(ids_of(&d.failed), vec![bad.clone()]);
    assert_eq!(ids_of(&d.unprocessed), vec![good.clone()]);
    let cm = run(&*s, Q2, &mid, 3).await;
    complete(&*s, &cm, None, at(4)).await;
    assert_eq!(status(&*s, &root).await, JobStatus::Pending);
    // The sibling finishing later changes nothing for the parent that already ran.
    let cg = run(&*s, Q3, &good, 5).await;
    complete(&*s, &cg, None, at(6)).await;
    assert_eq!(status(&*s, &mid).await, JobStatus::Completed);
}

/// `ignore_dependency`: the middle waits for the rest, then runs; the failure is listed as
/// ignored with its error.
pub async fn flows_ignore_dependency_waits_for_the_rest(h: &dyn Harness) {
    let s = open(h, "default").await;
    let [root, mid, bad, good] = policy_tree(&*s, EdgePolicy::IgnoreDependency).await;
    kill_bad(&*s, &bad, 1).await;
    assert_eq!(status(&*s, &mid).await, JobStatus::Waiting, "the sibling is still open");
    let d = deps(&*s, &mid).await;
    assert_eq!(ids_of(&d.ignored), vec![bad.clone()]);
    assert_eq!(d.ignored[0].error.as_deref(), Some("boom"));
    let cg = run(&*s, Q3, &good, 3).await;
    complete(&*s, &cg, None, at(4)).await;
    let cm = run(&*s, Q2, &mid, 5).await;
    complete(&*s, &cm, None, at(6)).await;
    run(&*s, Q1, &root, 7).await;
}

/// `remove_dependency`: the edge goes with the failure; the middle waits for the rest.
pub async fn flows_remove_dependency_drops_the_edge(h: &dyn Harness) {
    let s = open(h, "default").await;
    let [root, mid, bad, good] = policy_tree(&*s, EdgePolicy::RemoveDependency).await;
    kill_bad(&*s, &bad, 1).await;
    assert_eq!(status(&*s, &mid).await, JobStatus::Waiting);
    let d = deps(&*s, &mid).await;
    assert_eq!(d.len(), 1, "only the sibling is left: {d:?}");
    assert_eq!(ids_of(&d.unprocessed), vec![good.clone()]);
    let cg = run(&*s, Q3, &good, 3).await;
    complete(&*s, &cg, None, at(4)).await;
    let cm = run(&*s, Q2, &mid, 5).await;
    complete(&*s, &cm, None, at(6)).await;
    assert_eq!(status(&*s, &root).await, JobStatus::Pending);
}

/// A cancelled child counts as failed under its policy.
pub async fn flows_cancelled_child_follows_its_policy(h: &dyn Harness) {
    let s = open(h, "default").await;
    let [_, mid, bad, good] = policy_tree(&*s, EdgePolicy::IgnoreDependency).await;
    assert!(s.cancel(flexiq_core::store::CancelRequest { id: bad.clone(), now: at(1) }).await.unwrap());
    let cg = run(&*s, Q3, &good, 2).await;
    complete(&*s, &cg, None, at(3)).await;
    assert_eq!(status(&*s, &mid).await, JobStatus::Pending);
    assert_eq!(ids_of(&deps(&*s, &mid).await.ignored), vec![bad]);
}

/// Dependencies page by child id; a bad page size or an unknown parent is refused by kind.
pub async fn flows_dependencies_page_by_child_id(h: &dyn Harness) {
    let s = open(h, "default").await;
    let kids = (0..5).map(|i| node(Q3, &format!("c{i}"), vec![])).collect();
    let ids = add_flow(&*s, node(Q1, "root", kids)).await;
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = s
            .get_dependencies(DependenciesRequest { job_id: ids[0].clone(), after: after.clone(), limit: 2 })
            .await
            .unwrap();
        assert!(page.len() <= 2);
        seen.extend(ids_of(&page.unprocessed));
        match page.next_after {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    let mut want = ids[1..].to_vec();
    want.sort();
    assert_eq!(seen, want, "every child once, in id order");
    let bad = DependenciesRequest { job_id: ids[0].clone(), after: None, limit: 0 };
    assert_kind(s.get_dependencies(bad).await, ErrorKind::InvalidArgument);
    let unknown = DependenciesRequest { job_id: JobId::at(at(0)), after: None, limit: 10 };
    assert_kind(s.get_dependencies(unknown).await, ErrorKind::NotFound);
    let leaf = deps(&*s, &ids[1]).await;
    assert!(leaf.is_empty() && leaf.next_after.is_none());
}

/// Removing a child's dependency frees a parent with nothing else open; a finished child or
/// one nothing waits on says false, an unknown one is `NotFound`.
pub async fn flows_remove_child_dependency_releases_the_parent(h: &dyn Harness) {
    let s = open(h, "default").await;
    let ids = add_flow(&*s, node(Q1, "root", vec![node(Q3, "a", vec![]), node(Q3, "b", vec![])])).await;
    let (root, a, b) = (&ids[0], &ids[1], &ids[2]);
    let ca = run(&*s, Q3, a, 1).await;
    complete(&*s, &ca, None, at(2)).await;
    let req = |id: &JobId| RemoveChildDependencyRequest { child_id: id.clone(), now: at(3) };
    assert!(!s.remove_child_dependency(req(a)).await.unwrap(), "a finished child stays");
    assert_eq!(status(&*s, root).await, JobStatus::Waiting);
    assert!(s.remove_child_dependency(req(b)).await.unwrap());
    assert_eq!(status(&*s, root).await, JobStatus::Pending);
    assert_eq!(status(&*s, b).await, JobStatus::Pending, "the child itself still runs");
    assert!(!s.remove_child_dependency(req(b)).await.unwrap(), "nothing waits on it now");
    assert_eq!(ids_of(&deps(&*s, root).await.processed), vec![a.clone()]);
    assert_kind(s.remove_child_dependency(req(&JobId::at(at(0)))).await, ErrorKind::NotFound);
}

/// A flow policy on an edge to a job outside the batch, or policies that do not match the
/// dependencies, is refused and writes nothing.
pub async fn flows_bad_edges_write_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let outside = put(&*s, job_in(Q3, "outside"), at(0)).await;
    let mut parent = job_in(Q1, "parent");
    parent.depends_on = vec![outside.clone()];
    parent.dep_policies = vec![EdgePolicy::IgnoreDependency];
    let first = job_in(Q1, "first");
    assert_kind(
        enqueue(&*s, vec![first.clone(), parent.clone()], None, at(1)).await,
        ErrorKind::InvalidArgument,
    );
    parent.dep_policies = vec![EdgePolicy::FailParent, EdgePolicy::FailParent];
    assert_kind(enqueue(&*s, vec![first.clone(), parent], None, at(1)).await, ErrorKind::InvalidArgument);
    assert!(s.get(&first.id).await.unwrap().is_none(), "nothing of the batch was written");
    assert!(deps(&*s, &outside).await.is_empty());
    assert_kind(
        plan_flow(
            node(Q1, "r", vec![FlowNode { namespace: Some("elsewhere".into()), ..node(Q2, "c", vec![]) }]),
            s.namespace(),
            at(0),
        ),
        ErrorKind::InvalidArgument,
    );
}

/// A flow node whose preset id a job already has (the root or a child) is `Conflict` naming
/// the id, and nothing of the flow is written: the held job keeps its task, payload and
/// status, and the counts stay.
pub async fn flows_preset_id_of_a_held_job_writes_nothing(h: &dyn Harness) {
    let s = open(h, "default").await;
    let held = put(&*s, job_in(Q3, "held"), at(0)).await;
    let stats = s.stats(None).await.unwrap();
    let preset = |n: FlowNode| FlowNode { id: Some(held.to_string()), ..n };
    let fresh = JobId::new();
    let trees = [
        preset(node(Q1, "root", vec![node(Q2, "child", vec![])])),
        FlowNode { id: Some(fresh.to_string()), ..node(Q1, "root", vec![preset(node(Q2, "child", vec![]))]) },
    ];
    for tree in trees {
        let plan = plan_flow(tree, s.namespace(), at(1)).unwrap();
        let written: Vec<JobId> = plan.jobs.iter().map(|j| j.id.clone()).filter(|id| *id != held).collect();
        let e = enqueue(&*s, plan.jobs, None, at(1)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
        assert!(e.to_string().contains(held.as_str()), "the conflict names {held}: {e}");
        for id in written {
            assert!(s.get(&id).await.unwrap().is_none(), "flow job {id} was written");
        }
    }
    let j = get(&*s, &held).await;
    assert_eq!(
        (j.task.as_str(), j.payload.as_slice(), j.status),
        ("held", b"".as_slice(), JobStatus::Pending)
    );
    assert_eq!(s.stats(None).await.unwrap(), stats, "counts after the refused flows");
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_flows {
    ($callback:path, $make:path) => {
        $callback!($make;
            flows::flows_three_levels_run_bottom_up,
            flows::flows_fail_parent_fails_every_level_above,
            flows::flows_continue_parent_releases_at_once,
            flows::flows_ignore_dependency_waits_for_the_rest,
            flows::flows_remove_dependency_drops_the_edge,
            flows::flows_cancelled_child_follows_its_policy,
            flows::flows_dependencies_page_by_child_id,
            flows::flows_remove_child_dependency_releases_the_parent,
            flows::flows_bad_edges_write_nothing,
            flows::flows_preset_id_of_a_held_job_writes_nothing,
        );
    };
}
