//! Counts, metrics and the worker registry.
//!
//! `metrics` and `metrics_timeseries` read the raw per-execution rows and aggregate them in
//! this process with the core's functions, so every backend reports the same numbers.

use std::collections::BTreeMap;

use flexiq_core::options::validate_name;
use flexiq_core::stats::{aggregate, timeseries};
use flexiq_core::store::GetMetricsRequest;
use flexiq_core::{MetricBucket, MetricRow, Stats, TaskAggregate, WorkerInfo};

use super::{positive_secs_to_ms, Queue};
use crate::error::{Error, Result};

fn check_task(task: Option<&str>) -> Result<()> {
    if let Some(t) = task {
        validate_name("task name", t)?;
    }
    Ok(())
}

impl Queue {
    /// Jobs per status over the whole namespace.
    pub async fn stats(&self) -> Result<Stats> {
        Ok(self.store.stats(None).await?)
    }

    /// Jobs per status on one queue.
    pub async fn stats_for_queue(&self, queue: &str) -> Result<Stats> {
        validate_name("queue name", queue)?;
        Ok(self.store.stats(Some(queue)).await?)
    }

    /// Jobs per status for every queue holding jobs.
    pub async fn stats_by_queue(&self) -> Result<BTreeMap<String, Stats>> {
        Ok(self.store.stats_by_queue().await?)
    }

    /// Jobs per status for every known queue, including queues with no jobs.
    pub async fn stats_all_queues(&self) -> Result<BTreeMap<String, Stats>> {
        Ok(self.store.stats_all_queues().await?)
    }

    /// Per-task aggregates (count, successes, failures, avg / p50 / p95 / p99 / min / max in
    /// ms) over executions of the last `since_secs` seconds, optionally of one task.
    pub async fn metrics(
        &self,
        task: Option<&str>,
        since_secs: i64,
    ) -> Result<BTreeMap<String, TaskAggregate>> {
        let rows = self.metric_rows(task, since_secs).await?;
        Ok(aggregate(&rows))
    }

    /// The same rows in `bucket_secs`-second buckets, oldest first (`timestamp` Unix ms);
    /// empty buckets are absent.
    pub async fn metrics_timeseries(
        &self,
        task: Option<&str>,
        since_secs: i64,
        bucket_secs: i64,
    ) -> Result<Vec<MetricBucket>> {
        let bucket_ms = positive_secs_to_ms("bucket", bucket_secs)?;
        let rows = self.metric_rows(task, since_secs).await?;
        Ok(timeseries(&rows, bucket_ms as u64))
    }

    /// Raw metric rows recorded at or after `since_ms` (Unix ms), oldest first.
    pub async fn get_metrics(&self, since_ms: i64, task: Option<&str>) -> Result<Vec<MetricRow>> {
        if since_ms < 0 {
            return Err(Error::invalid(format!("since {since_ms} ms must not be negative")));
        }
        check_task(task)?;
        Ok(self.store.get_metrics(GetMetricsRequest { since_ms, task: task.map(str::to_string) }).await?)
    }

    async fn metric_rows(&self, task: Option<&str>, since_secs: i64) -> Result<Vec<MetricRow>> {
        let window = positive_secs_to_ms("since", since_secs)?;
        check_task(task)?;
        let since = self.now_ms().saturating_sub(window);
        Ok(self
            .store
            .get_metrics(GetMetricsRequest { since_ms: since, task: task.map(str::to_string) })
            .await?)
    }

    /// Pending jobs on one queue: the number `max_pending` is compared against.
    pub async fn count_pending_by_queue(&self, queue: &str) -> Result<u64> {
        validate_name("queue name", queue)?;
        Ok(self.store.count_pending(queue).await?)
    }

    /// Workers registered in the namespace with their last heartbeat (Unix ms) and the ids of
    /// the jobs each is running now (`current_jobs`).
    pub async fn list_workers(&self) -> Result<Vec<WorkerInfo>> {
        Ok(self.store.list_workers().await?)
    }
}
