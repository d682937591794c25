//! The dependency graph: transitive in both directions, edges from dependency to dependent.

use std::collections::BTreeSet;

use flexiq_core::{DagEdge, ErrorKind, JobId, JobStatus};

use crate::fixtures::{job, job_after, now, open, put};
use crate::Harness;

fn edge(from: &JobId, to: &JobId) -> DagEdge {
    DagEdge { from: from.to_string(), to: to.to_string() }
}

fn node_ids(d: &flexiq_core::JobDag) -> BTreeSet<String> {
    d.nodes.iter().map(|n| n.id.clone()).collect()
}

/// From the middle of a chain the graph holds both ends and both edges.
pub async fn dag_chain_both_directions(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), now()).await;
    let c = put(&*s, job_after("c", &[&b]), now()).await;
    let d = s.job_dag(&b).await.unwrap();
    assert_eq!(node_ids(&d), [&a, &b, &c].iter().map(|i| i.to_string()).collect());
    let edges: BTreeSet<_> = d.edges.into_iter().collect();
    assert_eq!(edges, [edge(&a, &b), edge(&b, &c)].into_iter().collect());
}

/// From either end the whole chain is reachable (transitive).
pub async fn dag_transitive_from_either_end(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), now()).await;
    let c = put(&*s, job_after("c", &[&b]), now()).await;
    let d = put(&*s, job_after("d", &[&c]), now()).await;
    for anchor in [&a, &d] {
        let g = s.job_dag(anchor).await.unwrap();
        assert_eq!(g.nodes.len(), 4, "from {anchor}");
        assert_eq!(g.edges.len(), 3, "from {anchor}");
    }
}

/// Nodes carry task and status; unrelated jobs stay out of the graph.
pub async fn dag_nodes_carry_task_and_status(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("fetch", ""), now()).await;
    let b = put(&*s, job_after("parse", &[&a]), now()).await;
    put(&*s, job("unrelated", ""), now()).await;
    let g = s.job_dag(&a).await.unwrap();
    assert_eq!(g.nodes.len(), 2);
    let nb = g.nodes.iter().find(|n| n.id == b.as_str()).expect("dependent in graph");
    assert_eq!((nb.task.as_str(), nb.status), ("parse", JobStatus::Waiting));
    let na = g.nodes.iter().find(|n| n.id == a.as_str()).expect("anchor in graph");
    assert_eq!((na.task.as_str(), na.status), ("fetch", JobStatus::Pending));
}

/// A diamond has four nodes and four edges, each once.
pub async fn dag_diamond_has_each_edge_once(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let b = put(&*s, job_after("b", &[&a]), now()).await;
    let c = put(&*s, job_after("c", &[&a]), now()).await;
    let d = put(&*s, job_after("d", &[&b, &c]), now()).await;
    let g = s.job_dag(&c).await.unwrap();
    assert_eq!(g.nodes.len(), 4);
    let mut edges = g.edges.clone();
    edges.sort();
    let mut want = vec![edge(&a, &b), edge(&a, &c), edge(&b, &d), edge(&c, &d)];
    want.sort();
    assert_eq!(edges, want);
}

/// An unknown id is `NotFound` naming it, as every other job call answers.
pub async fn dag_unknown_id_is_not_found(h: &dyn Harness) {
    let s = open(h, "default").await;
    put(&*s, job("a", ""), now()).await;
    let unknown = JobId::new();
    let e = s.job_dag(&unknown).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.to_string().contains(unknown.as_str()), "{e}");
}

/// A job without dependencies is a graph of itself with no edges.
pub async fn dag_isolated_job_is_single_node(h: &dyn Harness) {
    let s = open(h, "default").await;
    let a = put(&*s, job("a", ""), now()).await;
    let g = s.job_dag(&a).await.unwrap();
    assert_eq!(node_ids(&g), [a.to_string()].into_iter().collect());
    assert!(g.edges.is_empty());
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_dag {
    ($callback:path, $make:path) => {
        $callback!($make;
            dag::dag_chain_both_directions,
            dag::dag_transitive_from_either_end,
            dag::dag_nodes_carry_task_and_status,
            dag::dag_diamond_has_each_edge_once,
            dag::dag_unknown_id_is_not_found,
            dag::dag_isolated_job_is_single_node,
        );
    };
}
