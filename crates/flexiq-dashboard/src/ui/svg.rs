//! Pictures drawn on the server as SVG: the throughput / failure and latency charts of the
//! overview, and a job's dependency graph.
//!
//! Drawing on the server keeps the pages free of a charting bundle and makes every picture a
//! plain part of the HTML, testable like the rest of it.

use std::collections::{BTreeMap, VecDeque};

use maud::{html, Markup};

use crate::api::metrics::Bucket;
use crate::api::model::DagView;

const W: f64 = 640.0;
const H: f64 = 170.0;
const PAD: f64 = 28.0;

/// The time axis of a chart: `slots` buckets of `bucket_ms` from `from_ms` (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// Start of the first slot (Unix ms, a multiple of `bucket_ms`).
    pub from_ms: i64,
    /// Width of a slot (ms).
    pub bucket_ms: i64,
    /// Number of slots.
    pub slots: usize,
}

impl Axis {
    /// The slots covering the `window_ms` before `now_ms`.
    pub fn ending_at(now_ms: i64, window_ms: i64, bucket_ms: i64) -> Self {
        let bucket_ms = bucket_ms.max(1);
        let from_ms = (now_ms - window_ms).div_euclid(bucket_ms) * bucket_ms;
        let slots = usize::try_from((now_ms - from_ms) / bucket_ms + 1).unwrap_or(1);
        Axis { from_ms, bucket_ms, slots }
    }

    fn slot_width(&self) -> f64 {
        (W - 2.0 * PAD) / self.slots.max(1) as f64
    }

    /// The left edge of the slot holding `ts`, when it lies on the axis.
    fn x(&self, ts: i64) -> Option<f64> {
        let i = (ts - self.from_ms).div_euclid(self.bucket_ms);
        (0..self.slots as i64).contains(&i).then(|| PAD + i as f64 * self.slot_width())
    }
}

/// Stacked bars per bucket, placed on the time axis: successes (green) under failures (red).
pub fn throughput_chart(buckets: &[Bucket], axis: Axis) -> Markup {
    if buckets.is_empty() {
        return html! { p.muted { "No executions in this window." } };
    }
    let max = buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1) as f64;
    let bar = (axis.slot_width() * 0.8).max(1.0);
    let scale = (H - 2.0 * PAD) / max;
    html! {
        svg.chart #throughput-chart viewBox={ "0 0 " (W) " " (H) } role="img" aria-label="Executions per bucket" {
            line.axis x1=(PAD) y1=(H - PAD) x2=(W - PAD) y2=(H - PAD) {}
            text.tick x=(PAD) y=(PAD - 8.0) { "max " (max as u64) " per bucket · succeeded (green), failed (red)" }
            text.tick x=(PAD) y=(H - 8.0) { (crate::ui::layout::utc(axis.from_ms)) }
            text.tick x=(W - PAD) y=(H - 8.0) text-anchor="end" { "now" }
            @for b in buckets {
                @if let Some(x) = axis.x(b.timestamp) {
                    @let ok_h = b.success as f64 * scale;
                    @let fail_h = b.failure as f64 * scale;
                    rect.ok x=(x) y=(H - PAD - ok_h) width=(bar) height=(ok_h) {
                        title { (b.success) " succeeded, " (b.failure) " failed" }
                    }
                    rect.fail x=(x) y=(H - PAD - ok_h - fail_h) width=(bar) height=(fail_h) {}
                }
            }
        }
    }
}

/// Mean and p95 latency per bucket as two lines with a dot per bucket.
pub fn latency_chart(buckets: &[Bucket], axis: Axis) -> Markup {
    if buckets.is_empty() {
        return html! { p.muted { "No executions in this window." } };
    }
    let max = buckets.iter().map(|b| b.p95_ms.max(b.avg_ms)).fold(1.0_f64, f64::max);
    let half = axis.slot_width() / 2.0;
    let y = |v: f64| H - PAD - v / max * (H - 2.0 * PAD);
    let points = |f: &dyn Fn(&Bucket) -> f64| -> Vec<(f64, f64)> {
        buckets.iter().filter_map(|b| axis.x(b.timestamp).map(|x| (x + half, y(f(b))))).collect()
    };
    let avg = points(&|b| b.avg_ms);
    let p95 = points(&|b| b.p95_ms);
    let joined =
        |p: &[(f64, f64)]| p.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect::<Vec<_>>().join(" ");
    html! {
        svg.chart #latency-chart viewBox={ "0 0 " (W) " " (H) } role="img" aria-label="Latency per bucket" {
            line.axis x1=(PAD) y1=(H - PAD) x2=(W - PAD) y2=(H - PAD) {}
            text.tick x=(PAD) y=(PAD - 8.0) { "max " (format!("{max:.0}")) " ms · mean (blue), p95 (orange)" }
            polyline.avg points=(joined(&avg)) {}
            polyline.p95 points=(joined(&p95)) {}
            @for (x, y) in &avg { circle.avg cx=(x) cy=(y) r="2.5" {} }
            @for (x, y) in &p95 { circle.p95 cx=(x) cy=(y) r="2.5" {} }
        }
    }
}

/// Longest-path layers of the graph (roots in layer 0); nodes on a cycle, which the engine
/// never stores, land after the rest.
fn layers(dag: &DagView) -> BTreeMap<String, usize> {
    let mut indegree: BTreeMap<&str, usize> = dag.nodes.iter().map(|n| (n.id.as_str(), 0)).collect();
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &dag.edges {
        if indegree.contains_key(e.from.as_str()) && indegree.contains_key(e.to.as_str()) {
            *indegree.entry(e.to.as_str()).or_default() += 1;
            out.entry(e.from.as_str()).or_default().push(e.to.as_str());
        }
    }
    let mut layer: BTreeMap<String, usize> = BTreeMap::new();
    let mut ready: VecDeque<&str> = indegree.iter().filter(|(_, d)| **d == 0).map(|(k, _)| *k).collect();
    for r in &ready {
        layer.insert((*r).to_string(), 0);
    }
    while let Some(n) = ready.pop_front() {
        let here = layer[n];
        for next in out.get(n).into_iter().flatten() {
            let l = layer.entry((*next).to_string()).or_insert(0);
            *l = (*l).max(here + 1);
            let d = indegree.get_mut(next).map(|d| {
                *d -= 1;
                *d
            });
            if d == Some(0) {
                ready.push_back(next);
            }
        }
    }
    let deepest = layer.values().copied().max().unwrap_or(0);
    for n in &dag.nodes {
        layer.entry(n.id.clone()).or_insert(deepest + 1);
    }
    layer
}

const NODE_W: f64 = 150.0;
const NODE_H: f64 = 40.0;
const GAP_X: f64 = 60.0;
const GAP_Y: f64 = 18.0;

/// The dependency graph, left to right (dependencies before dependents), `focus` outlined.
pub fn dag(dag: &DagView, focus: &str) -> Markup {
    let layer = layers(dag);
    let mut rows: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pos: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for n in &dag.nodes {
        let l = layer[&n.id];
        let row = rows.entry(l).or_insert(0);
        pos.insert(
            n.id.as_str(),
            (10.0 + l as f64 * (NODE_W + GAP_X), 10.0 + *row as f64 * (NODE_H + GAP_Y)),
        );
        *row += 1;
    }
    let width = 20.0 + (rows.len().max(1)) as f64 * (NODE_W + GAP_X);
    let height = 20.0 + rows.values().copied().max().unwrap_or(1) as f64 * (NODE_H + GAP_Y);
    html! {
        svg.dag #dag viewBox={ "0 0 " (width) " " (height) } width=(width) height=(height)
            role="img" aria-label="Dependency graph" data-nodes=(dag.nodes.len()) data-edges=(dag.edges.len()) {
            defs {
                marker #arrow viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto" {
                    path d="M0,0 L10,5 L0,10 z" {}
                }
            }
            @for e in &dag.edges {
                @if let (Some((x1, y1)), Some((x2, y2))) = (pos.get(e.from.as_str()), pos.get(e.to.as_str())) {
                    line.edge x1=(x1 + NODE_W) y1=(y1 + NODE_H / 2.0) x2=(x2) y2=(y2 + NODE_H / 2.0)
                        marker-end="url(#arrow)" {}
                }
            }
            @for n in &dag.nodes {
                @let (x, y) = pos[n.id.as_str()];
                a href={ "/jobs/" (n.id) } {
                    g class={ "node s-" (n.status) @if n.id == focus { " focus" } } data-job=(n.id) {
                        rect x=(x) y=(y) width=(NODE_W) height=(NODE_H) rx="6" {}
                        text x=(x + 8.0) y=(y + 16.0) { (short(&n.task, 20)) }
                        text.sub x=(x + 8.0) y=(y + 32.0) { (n.status) " · …" (&n.id[n.id.len().saturating_sub(8)..]) }
                    }
                }
            }
        }
    }
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::model::{DagEdgeView, DagNodeView};

    fn node(id: &str) -> DagNodeView {
        DagNodeView { id: id.into(), task: "t".into(), status: "pending".into() }
    }

    #[test]
    fn layers_follow_the_longest_path() {
        let g = DagView {
            nodes: vec![node("a"), node("b"), node("c"), node("d")],
            edges: vec![
                DagEdgeView { from: "a".into(), to: "b".into() },
                DagEdgeView { from: "b".into(), to: "c".into() },
                DagEdgeView { from: "a".into(), to: "c".into() },
            ],
        };
        let l = layers(&g);
        assert_eq!((l["a"], l["b"], l["c"], l["d"]), (0, 1, 2, 0));
    }

    #[test]
    fn buckets_land_in_their_slot() {
        let axis = Axis::ending_at(10_000, 4_000, 1_000);
        assert_eq!((axis.from_ms, axis.slots), (6_000, 5));
        assert_eq!(axis.x(6_500), Some(PAD));
        assert!(axis.x(5_999).is_none());
        let b = |ts| Bucket { timestamp: ts, count: 2, success: 1, failure: 1, avg_ms: 5.0, p95_ms: 9.0 };
        let svg = throughput_chart(&[b(6_000), b(9_000), b(1_000)], axis).into_string();
        assert_eq!(svg.matches("class=\"ok\"").count(), 2, "the bucket off the axis is not drawn");
    }

    #[test]
    fn graph_draws_every_node_and_edge() {
        let g = DagView {
            nodes: vec![node("a"), node("b")],
            edges: vec![DagEdgeView { from: "a".into(), to: "b".into() }],
        };
        let svg = dag(&g, "a").into_string();
        assert_eq!(svg.matches("<rect").count(), 2);
        assert_eq!(svg.matches("class=\"edge\"").count(), 1);
        assert!(svg.contains("focus"));
    }
}
