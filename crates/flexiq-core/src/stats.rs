//! Status counts, per-execution metric rows and their in-process aggregates.
//!
//! Stores return raw metric rows; the aggregates (count, success, failure, avg and
//! percentiles) and time-series buckets are computed here, so every store reports the same
//! numbers for the same rows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::job::JobStatus;

/// Jobs per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Pending (including delayed).
    pub pending: u64,
    /// Running.
    pub running: u64,
    /// Completed.
    pub completed: u64,
    /// Failed for good.
    pub failed: u64,
    /// Dead-lettered.
    pub dead: u64,
    /// Cancelled.
    pub cancelled: u64,
    /// Suspended.
    pub suspended: u64,
    /// Waiting for dependencies.
    pub waiting: u64,
}

impl Stats {
    /// Adds `n` to the counter for `status`.
    pub fn add(&mut self, status: JobStatus, n: u64) {
        *self.slot(status) += n;
    }

    /// The counter for `status`.
    pub fn get(&self, status: JobStatus) -> u64 {
        match status {
            JobStatus::Pending => self.pending,
            JobStatus::Running => self.running,
            JobStatus::Completed => self.completed,
            JobStatus::Failed => self.failed,
            JobStatus::Dead => self.dead,
            JobStatus::Cancelled => self.cancelled,
            JobStatus::Suspended => self.suspended,
            JobStatus::Waiting => self.waiting,
        }
    }

    fn slot(&mut self, status: JobStatus) -> &mut u64 {
        match status {
            JobStatus::Pending => &mut self.pending,
            JobStatus::Running => &mut self.running,
            JobStatus::Completed => &mut self.completed,
            JobStatus::Failed => &mut self.failed,
            JobStatus::Dead => &mut self.dead,
            JobStatus::Cancelled => &mut self.cancelled,
            JobStatus::Suspended => &mut self.suspended,
            JobStatus::Waiting => &mut self.waiting,
        }
    }

    /// Every job counted.
    pub fn total(&self) -> u64 {
        JobStatus::ALL.iter().map(|s| self.get(*s)).sum()
    }

    /// `(status name, count)` pairs in a stable order.
    pub fn entries(&self) -> Vec<(&'static str, u64)> {
        JobStatus::ALL.iter().map(|s| (s.as_str(), self.get(*s))).collect()
    }
}

/// One execution of a job (an attempt that ended in success or failure).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// The job.
    pub job_id: String,
    /// Its task.
    pub task: String,
    /// Its queue.
    pub queue: String,
    /// Which attempt.
    pub attempt: u32,
    /// Whether it succeeded.
    pub success: bool,
    /// Wall time of the attempt (ms).
    pub duration_ms: u64,
    /// When it ended (Unix ms).
    pub recorded_at: i64,
}

/// Aggregates over executions of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskAggregate {
    /// Executions.
    pub count: u64,
    /// Successful executions.
    pub success_count: u64,
    /// Failed executions.
    pub failure_count: u64,
    /// Mean duration (ms).
    pub avg_ms: f64,
    /// Median duration (ms).
    pub p50_ms: f64,
    /// 95th percentile (ms).
    pub p95_ms: f64,
    /// 99th percentile (ms).
    pub p99_ms: f64,
    /// Shortest (ms).
    pub min_ms: f64,
    /// Longest (ms).
    pub max_ms: f64,
}

/// One time-series bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricBucket {
    /// Bucket start (Unix ms).
    pub timestamp: i64,
    /// Executions.
    pub count: u64,
    /// Successes.
    pub success: u64,
    /// Failures.
    pub failure: u64,
    /// Mean duration (ms).
    pub avg_ms: f64,
    /// Median (ms).
    pub p50_ms: f64,
    /// 95th percentile (ms).
    pub p95_ms: f64,
    /// 99th percentile (ms).
    pub p99_ms: f64,
}

/// Nearest-rank percentile of sorted durations.
fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

fn summarize(rows: &[&MetricRow]) -> (u64, u64, u64, f64, Vec<u64>) {
    let mut d: Vec<u64> = rows.iter().map(|r| r.duration_ms).collect();
    d.sort_unstable();
    let ok = rows.iter().filter(|r| r.success).count() as u64;
    let n = rows.len() as u64;
    // Summed in u128: stored durations may be anything, and a u64 sum would overflow.
    let avg = if n == 0 { 0.0 } else { d.iter().map(|&v| u128::from(v)).sum::<u128>() as f64 / n as f64 };
    (n, ok, n - ok, avg, d)
}

/// Per-task aggregates of `rows`.
pub fn aggregate(rows: &[MetricRow]) -> BTreeMap<String, TaskAggregate> {
    let mut by_task: BTreeMap<&str, Vec<&MetricRow>> = BTreeMap::new();
    for r in rows {
        by_task.entry(&r.task).or_default().push(r);
    }
    by_task
        .into_iter()
        .map(|(task, rs)| {
            let (count, success_count, failure_count, avg_ms, d) = summarize(&rs);
            let agg = TaskAggregate {
                count,
                success_count,
                failure_count,
                avg_ms,
                p50_ms: percentile(&d, 50.0),
                p95_ms: percentile(&d, 95.0),
                p99_ms: percentile(&d, 99.0),
                min_ms: d.first().copied().unwrap_or(0) as f64,
                max_ms: d.last().copied().unwrap_or(0) as f64,
            };
            (task.to_string(), agg)
        })
        .collect()
}

/// `rows` grouped into `bucket_ms` buckets, oldest first; empty buckets are absent. A width
/// past `i64::MAX` ms is `i64::MAX`, and a bucket that would start before `i64::MIN` (only a
/// corrupt `recorded_at` lies there) starts at `i64::MIN`.
pub fn timeseries(rows: &[MetricRow], bucket_ms: u64) -> Vec<MetricBucket> {
    let width = i64::try_from(bucket_ms.max(1)).unwrap_or(i64::MAX);
    let mut buckets: BTreeMap<i64, Vec<&MetricRow>> = BTreeMap::new();
    for r in rows {
        let start = r.recorded_at.saturating_sub(r.recorded_at.rem_euclid(width));
        buckets.entry(start).or_default().push(r);
    }
    buckets
        .into_iter()
        .map(|(timestamp, rs)| {
            let (count, success, failure, avg_ms, d) = summarize(&rs);
            MetricBucket {
                timestamp,
                count,
                success,
                failure,
                avg_ms,
                p50_ms: percentile(&d, 50.0),
                p95_ms: percentile(&d, 95.0),
                p99_ms: percentile(&d, 99.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(task: &str, ms: u64, ok: bool, at: i64) -> MetricRow {
        MetricRow {
            job_id: "j".into(),
            task: task.into(),
            queue: "q".into(),
            attempt: 1,
            success: ok,
            duration_ms: ms,
            recorded_at: at,
        }
    }

    #[test]
    fn aggregates_percentiles() {
        let rows: Vec<_> = (1..=100).map(|i| row("a", i, i % 10 != 0, 0)).collect();
        let agg = &aggregate(&rows)["a"];
        assert_eq!((agg.count, agg.success_count, agg.failure_count), (100, 90, 10));
        assert_eq!(
            (agg.p50_ms, agg.p95_ms, agg.p99_ms, agg.min_ms, agg.max_ms),
            (50.0, 95.0, 99.0, 1.0, 100.0)
        );
        assert!((agg.avg_ms - 50.5).abs() < 1e-9);
    }

    #[test]
    fn buckets_skip_empty_ones() {
        let rows = vec![row("a", 1, true, 1_000), row("a", 3, false, 1_500), row("a", 5, true, 5_000)];
        let b = timeseries(&rows, 1_000);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].timestamp, b[0].count, b[0].failure), (1_000, 2, 1));
        assert_eq!(b[1].timestamp, 5_000);
    }

    #[test]
    fn extreme_stored_rows_and_widths_aggregate_without_overflow() {
        let rows = vec![row("a", u64::MAX, true, i64::MIN), row("a", u64::MAX, false, i64::MAX)];
        let agg = &aggregate(&rows)["a"];
        assert_eq!((agg.count, agg.avg_ms), (2, u64::MAX as f64));
        for width in [0, 3, 60_000, i64::MAX as u64, u64::MAX] {
            let b = timeseries(&rows, width);
            assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 2, "{width}");
            assert_eq!(b[0].timestamp, i64::MIN, "{width}");
        }
        assert_eq!(timeseries(&[row("a", 1, true, -1)], 1_000)[0].timestamp, -1_000);
    }
}
