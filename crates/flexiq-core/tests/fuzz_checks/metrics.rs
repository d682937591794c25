//! Metric aggregation over stored rows: `aggregate` and `timeseries` run over execution rows a
//! store reads back (the Redis store decodes them from JSON), with a bucket width the caller
//! picks. Any rows and any width must aggregate without panicking, every row must be counted
//! exactly once, and percentiles must lie between the shortest and longest duration.
//!
//! Input: `bucket width (ms) \n rows as a JSON array (the rest)`.

use flexiq_core::stats::{aggregate, timeseries, MetricRow};

use super::input::Fields;

pub(crate) fn check(data: &[u8]) {
    let mut f = Fields::new(data);
    let bucket_ms = f.u64();
    let Ok(rows) = serde_json::from_slice::<Vec<MetricRow>>(&f.rest()) else { return };

    let by_task = aggregate(&rows);
    assert_eq!(by_task.values().map(|a| a.count).sum::<u64>(), rows.len() as u64);
    for (task, a) in &by_task {
        assert_eq!(a.success_count + a.failure_count, a.count, "{task}");
        for p in [a.avg_ms, a.p50_ms, a.p95_ms, a.p99_ms] {
            assert!(a.min_ms <= p && p <= a.max_ms, "{task}: {p} outside {}..{}", a.min_ms, a.max_ms);
        }
        assert!(a.p50_ms <= a.p95_ms && a.p95_ms <= a.p99_ms, "{task}: {a:?}");
    }

    let buckets = timeseries(&rows, bucket_ms);
    assert_eq!(buckets.iter().map(|b| b.count).sum::<u64>(), rows.len() as u64);
    assert!(buckets.windows(2).all(|w| w[0].timestamp < w[1].timestamp), "buckets out of order");
    for b in &buckets {
        assert_eq!(b.success + b.failure, b.count);
    }
}
