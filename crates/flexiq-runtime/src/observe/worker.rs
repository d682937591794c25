//! [`WorkerMetrics`]: what only a running worker knows, kept as Prometheus counters and
//! histograms.
//!
//! The store records one row per execution, but not how long claims were, how many acks a
//! newer attempt superseded or how often a heartbeat found its lease gone: those happen in the
//! worker's memory. A worker with a `metrics_bind` address records them here, and the same
//! scrape that reads the store's gauges encodes them. They only grow (they reset when the
//! process restarts, as Prometheus counters do), so `rate()` and `histogram_quantile()` apply.
//! Every series carries the worker's id as the `worker` label, so many workers scraped into
//! one Prometheus stay apart.

use std::borrow::Cow;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// How an attempt ended, as the `outcome` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Completed,
    Failed,
    Cancelled,
    GivenBack,
    Suspended,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
            Outcome::GivenBack => "given_back",
            Outcome::Suspended => "suspended",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskOutcome {
    task: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskLabel {
    task: String,
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 131 s in doublings: handlers range from microseconds to minutes.
    Histogram::new(exponential_buckets(0.001, 2.0, 18))
}

fn batch_histogram() -> Histogram {
    // 1 to 8,192 jobs: a claim returns at most a page.
    Histogram::new(exponential_buckets(1.0, 2.0, 14))
}

/// A worker's in-process metrics. Cheap to clone (every metric is shared).
#[derive(Clone, Debug)]
pub struct WorkerMetrics {
    worker_id: String,
    handler_duration: Family<TaskOutcome, Histogram, fn() -> Histogram>,
    attempts: Family<TaskOutcome, Counter>,
    retries: Family<TaskLabel, Counter>,
    claimed: Counter,
    claim_batch: Histogram,
    ack_batch: Histogram,
    superseded_acks: Counter,
    leases_lost: Counter,
    ack_errors: Counter,
}

impl WorkerMetrics {
    /// Empty metrics for the worker `worker_id` (its `worker` label).
    pub fn new(worker_id: impl Into<String>) -> Self {
        WorkerMetrics {
            worker_id: worker_id.into(),
            handler_duration: Family::new_with_constructor(latency_histogram),
            attempts: Family::default(),
            retries: Family::default(),
            claimed: Counter::default(),
            claim_batch: batch_histogram(),
            ack_batch: batch_histogram(),
            superseded_acks: Counter::default(),
            leases_lost: Counter::default(),
            ack_errors: Counter::default(),
        }
    }

    /// The worker these metrics belong to.
    pub fn worker_id(&self) -> &str {
        &self.worker_id
    }

    /// Registers every metric (sharing its values) under `registry`, labelled with the worker.
    pub fn register(&self, registry: &mut Registry) {
        let label = (Cow::Borrowed("worker"), Cow::Owned(self.worker_id.clone()));
        let r = registry.sub_registry_with_label(label);
        r.register(
            "worker_handler_duration_seconds",
            "Wall time of handler runs on this worker, by task and outcome (s)",
            self.handler_duration.clone(),
        );
        r.register(
            "worker_attempts",
            "Attempts this worker ran to an end, by task and outcome",
            self.attempts.clone(),
        );
        r.register(
            "worker_retries",
            "Failed attempts that left the job another try (a retry is due)",
            self.retries.clone(),
        );
        r.register("worker_claimed_jobs", "Jobs this worker claimed", self.claimed.clone());
        r.register(
            "worker_claim_batch_size",
            "Jobs per non-empty claim (one store round trip)",
            self.claim_batch.clone(),
        );
        r.register("worker_ack_batch_size", "Acks per batched ack write", self.ack_batch.clone());
        r.register(
            "worker_superseded_acks",
            "Acks refused because the lease had lapsed and a newer attempt owned the job",
            self.superseded_acks.clone(),
        );
        r.register(
            "worker_leases_lost",
            "Running jobs whose heartbeat found the lease lapsed (the job was released)",
            self.leases_lost.clone(),
        );
        r.register(
            "worker_ack_write_errors",
            "Ack batches the store failed to write (their jobs re-run after the lease lapses)",
            self.ack_errors.clone(),
        );
    }

    /// Records a handler run of `task` that took `took` and ended as `outcome`; `retry_due`
    /// when it failed and the job has another try.
    pub(crate) fn attempt(&self, task: &str, outcome: Outcome, took: Duration, retry_due: bool) {
        let labels = TaskOutcome { task: task.to_string(), outcome: outcome.as_str() };
        self.handler_duration.get_or_create(&labels).observe(took.as_secs_f64());
        self.attempts.get_or_create(&labels).inc();
        if retry_due {
            self.retries.get_or_create(&TaskLabel { task: task.to_string() }).inc();
        }
    }

    /// Records a claim that returned `n` jobs (only non-empty claims are recorded).
    pub(crate) fn claimed(&self, n: usize) {
        if n > 0 {
            self.claimed.inc_by(n as u64);
            self.claim_batch.observe(n as f64);
        }
    }

    /// Records an ack batch of `n` acks, `superseded` of which a newer attempt refused.
    pub(crate) fn acked(&self, n: usize, superseded: u64) {
        self.ack_batch.observe(n as f64);
        self.superseded_acks.inc_by(superseded);
    }

    /// Records an ack batch the store failed to write.
    pub(crate) fn ack_failed(&self) {
        self.ack_errors.inc();
    }

    /// Records a heartbeat that found a running job's lease lapsed.
    pub(crate) fn lease_lost(&self) {
        self.leases_lost.inc();
    }
}
