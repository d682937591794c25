//! Parsing helpers: a rendered document read back with `prometheus-parse`.

use prometheus_parse::{Sample, Scrape, Value};

/// Parses an OpenMetrics / Prometheus text document.
pub(crate) fn parse(text: &str) -> Scrape {
    assert!(text.ends_with("# EOF\n"), "an OpenMetrics document ends with # EOF:\n{text}");
    Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).expect("a parsable metrics document")
}

/// The samples named `metric` whose labels include every pair of `labels`.
pub(crate) fn find<'a>(s: &'a Scrape, metric: &str, labels: &[(&str, &str)]) -> Vec<&'a Sample> {
    s.samples
        .iter()
        .filter(|x| x.metric == metric && labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .collect()
}

/// The value of the one sample named `metric` with `labels` (gauge, counter or untyped).
pub(crate) fn value(s: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    let found = find(s, metric, labels);
    assert_eq!(found.len(), 1, "one {metric} {labels:?} sample, got {found:?}");
    match &found[0].value {
        Value::Gauge(v) | Value::Counter(v) | Value::Untyped(v) => *v,
        other => panic!("{metric} {labels:?} is not a number: {other:?}"),
    }
}
