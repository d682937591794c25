//! Retention: counting and purging history rows per table by window (ms), and the
//! effective policy the cleaner publishes.

use std::collections::BTreeMap;

use flexiq_core::store::{
    AppendLogRequest, ArchiveTerminalRequest, GetMetricsRequest, ListArchivedRequest, ListJobsRequest,
    RetentionRequest,
};
use flexiq_core::{EffectiveRetention, JobFilter, Retention, RetentionTable, RetentionWindows};

use crate::fixtures::{at, dead, fail, finish, job, kill, now, open, start};
use crate::Harness;

const OLD: i64 = 1_000;
const NEW: i64 = 80_000;
const NOW: i64 = 100_000;
const WINDOW: u64 = 50_000;

fn windows(tables: &[RetentionTable]) -> RetentionWindows {
    RetentionWindows(tables.iter().map(|t| (*t, Some(WINDOW))).collect())
}

fn count(m: &BTreeMap<RetentionTable, u64>, t: RetentionTable) -> u64 {
    m.get(&t).copied().unwrap_or(0)
}

/// Old (`OLD`) and new (`NEW`) rows in every table: archived jobs, dead letters, logs,
/// metrics and job errors. Old rows: 1 archived job, 1 dead letter, 1 log line, 3 metric rows
/// (a completion, a kill, a failure) and 2 job errors (the kill, the failure).
async fn seed(s: &dyn flexiq_core::Store) {
    for t in [OLD, NEW] {
        let done = finish(s, job("t", ""), at(t)).await;
        s.append_log(AppendLogRequest {
            id: done.clone(),
            level: "info".into(),
            message: "x".into(),
            now: at(t),
        })
        .await
        .unwrap();
        assert_eq!(
            s.archive_terminal(ArchiveTerminalRequest { cutoff_ms: at(t + 1), limit: 10, now: at(t) })
                .await
                .unwrap(),
            1
        );
    }
    for t in [OLD, NEW] {
        kill(s, "t", "boom", at(t)).await;
    }
    let c = start(s, job("t", ""), at(OLD)).await;
    fail(s, &c, "old error", false, at(OLD)).await;
}

/// Counts report, per table, the rows older than the window at `now`.
pub async fn retention_counts_per_table(h: &dyn Harness) {
    let s = open(h, "default").await;
    seed(&*s).await;
    let counts = s
        .retention_counts(RetentionRequest { windows: windows(&RetentionTable::ALL), now: at(NOW) })
        .await
        .unwrap();
    assert_eq!(count(&counts, RetentionTable::ArchivedJobs), 1);
    assert_eq!(count(&counts, RetentionTable::DeadLetter), 1);
    assert_eq!(count(&counts, RetentionTable::TaskLogs), 1);
    assert_eq!(count(&counts, RetentionTable::TaskMetrics), 3, "a completion, a kill and a failure at OLD");
    assert_eq!(count(&counts, RetentionTable::JobErrors), 2, "the kill and the failure at OLD");
}

/// Counting deletes nothing.
pub async fn retention_counts_are_a_dry_run(h: &dyn Harness) {
    let s = open(h, "default").await;
    seed(&*s).await;
    let w = windows(&RetentionTable::ALL);
    let first = s.retention_counts(RetentionRequest { windows: w.clone(), now: at(NOW) }).await.unwrap();
    assert_eq!(
        s.retention_counts(RetentionRequest { windows: w.clone(), now: at(NOW) }).await.unwrap(),
        first
    );
    assert_eq!(dead(&*s).await.len(), 2);
}

/// Purge deletes the counted rows and returns the same counts; newer rows stay.
pub async fn retention_purge_deletes_old_rows(h: &dyn Harness) {
    let s = open(h, "default").await;
    seed(&*s).await;
    let w = windows(&RetentionTable::ALL);
    let counted = s.retention_counts(RetentionRequest { windows: w.clone(), now: at(NOW) }).await.unwrap();
    let purged = s.retention_purge(RetentionRequest { windows: w.clone(), now: at(NOW) }).await.unwrap();
    for t in RetentionTable::ALL {
        assert_eq!(count(&purged, t), count(&counted, t), "{t}");
    }
    let after = s.retention_counts(RetentionRequest { windows: w.clone(), now: at(NOW) }).await.unwrap();
    assert!(RetentionTable::ALL.iter().all(|t| count(&after, *t) == 0), "{after:?}");
    assert_eq!(dead(&*s).await.len(), 1);
    assert_eq!(s.list_archived(ListArchivedRequest { limit: 10, offset: 0 }).await.unwrap().len(), 1);
    assert_eq!(s.get_metrics(GetMetricsRequest { since_ms: 0, task: None }).await.unwrap().len(), 2);
}

/// A table without a window is kept forever: neither counted nor purged.
pub async fn retention_unset_window_keeps_table(h: &dyn Harness) {
    let s = open(h, "default").await;
    seed(&*s).await;
    let w = windows(&[RetentionTable::TaskLogs]);
    let purged = s.retention_purge(RetentionRequest { windows: w.clone(), now: at(NOW) }).await.unwrap();
    assert_eq!(count(&purged, RetentionTable::TaskLogs), 1);
    assert_eq!(count(&purged, RetentionTable::DeadLetter), 0);
    assert_eq!(dead(&*s).await.len(), 2);
    assert_eq!(s.get_metrics(GetMetricsRequest { since_ms: 0, task: None }).await.unwrap().len(), 5);
}

/// Purging job history leaves live jobs alone.
pub async fn retention_purge_leaves_jobs_table(h: &dyn Harness) {
    let s = open(h, "default").await;
    let c = start(&*s, job("t", ""), at(OLD)).await;
    fail(&*s, &c, "flaky", true, at(OLD)).await;
    s.retention_purge(RetentionRequest { windows: windows(&RetentionTable::ALL), now: at(NOW) })
        .await
        .unwrap();
    assert!(s.job_errors(&c.job.id).await.unwrap().is_empty());
    assert_eq!(
        s.list_jobs(ListJobsRequest { filter: JobFilter::default(), limit: 10, offset: 0 })
            .await
            .unwrap()
            .len(),
        1
    );
}

/// `effective_retention` is `None` before any publish.
pub async fn retention_effective_none_before_publish(h: &dyn Harness) {
    let s = open(h, "default").await;
    assert_eq!(s.effective_retention().await.unwrap(), None);
}

/// A published effective retention reads back exactly, and a later publish replaces it.
pub async fn retention_effective_round_trips(h: &dyn Harness) {
    let s = open(h, "default").await;
    let first = EffectiveRetention {
        enabled: true,
        defaulted: true,
        namespace: "default".into(),
        reported_at: now(),
        windows: Retention::recommended().windows_ms(),
    };
    s.publish_effective_retention(&first).await.unwrap();
    assert_eq!(s.effective_retention().await.unwrap(), Some(first));
    let off = EffectiveRetention {
        enabled: false,
        defaulted: false,
        namespace: "default".into(),
        reported_at: at(60_000),
        windows: Retention::default().windows_ms(),
    };
    s.publish_effective_retention(&off).await.unwrap();
    assert_eq!(s.effective_retention().await.unwrap(), Some(off));
}

/// This area's cases, in suite order, for `for_each_case!`: a new case is named here.
#[doc(hidden)]
#[macro_export]
macro_rules! __cases_retention {
    ($callback:path, $make:path) => {
        $callback!($make;
            retention::retention_counts_per_table,
            retention::retention_counts_are_a_dry_run,
            retention::retention_purge_deletes_old_rows,
            retention::retention_unset_window_keeps_table,
            retention::retention_purge_leaves_jobs_table,
            retention::retention_effective_none_before_publish,
            retention::retention_effective_round_trips,
        );
    };
}
