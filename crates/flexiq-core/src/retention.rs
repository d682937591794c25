//! Retention: how long history tables keep rows.
//!
//! Units differ by direction on purpose, as the spec says: a [`Retention`] is configured in
//! **seconds**; every window and timestamp reported back ([`RetentionWindows`],
//! [`EffectiveRetention`], [`RetentionPreview`]) is in **milliseconds**. An unset window keeps
//! that table forever.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A history table that retention sweeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetentionTable {
    /// Archived terminal jobs (by archive time).
    ArchivedJobs,
    /// Dead letters (by failure time).
    DeadLetter,
    /// Job log lines.
    TaskLogs,
    /// Per-execution metric rows.
    TaskMetrics,
    /// Per-attempt error rows.
    JobErrors,
}

impl RetentionTable {
    /// Every table, in report order.
    pub const ALL: [RetentionTable; 5] = [
        RetentionTable::ArchivedJobs,
        RetentionTable::DeadLetter,
        RetentionTable::TaskLogs,
        RetentionTable::TaskMetrics,
        RetentionTable::JobErrors,
    ];

    /// snake_case key (Python, storage).
    pub fn key(self) -> &'static str {
        match self {
            RetentionTable::ArchivedJobs => "archived_jobs",
            RetentionTable::DeadLetter => "dead_letter",
            RetentionTable::TaskLogs => "task_logs",
            RetentionTable::TaskMetrics => "task_metrics",
            RetentionTable::JobErrors => "job_errors",
        }
    }

    /// camelCase key (Node).
    pub fn camel_key(self) -> &'static str {
        match self {
            RetentionTable::ArchivedJobs => "archivedJobs",
            RetentionTable::DeadLetter => "deadLetter",
            RetentionTable::TaskLogs => "taskLogs",
            RetentionTable::TaskMetrics => "taskMetrics",
            RetentionTable::JobErrors => "jobErrors",
        }
    }

    /// Parses either key form.
    pub fn parse(s: &str) -> Result<Self> {
        RetentionTable::ALL
            .into_iter()
            .find(|t| t.key() == s || t.camel_key() == s)
            .ok_or_else(|| Error::invalid(format!("unknown retention table {s:?}")))
    }
}

impl fmt::Display for RetentionTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Retention as configured, in **seconds** per table; `None` keeps the table forever.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retention {
    /// Archived jobs (s).
    pub archived_jobs: Option<u64>,
    /// Dead letters (s).
    pub dead_letter: Option<u64>,
    /// Task logs (s).
    pub task_logs: Option<u64>,
    /// Task metrics (s).
    pub task_metrics: Option<u64>,
    /// Job errors (s).
    pub job_errors: Option<u64>,
}

const DAY: u64 = 86_400;

impl Retention {
    /// The recommended windows: 30 days of archive, dead letters and errors, 7 of logs and metrics.
    pub fn recommended() -> Self {
        Retention {
            archived_jobs: Some(30 * DAY),
            dead_letter: Some(30 * DAY),
            task_logs: Some(7 * DAY),
            task_metrics: Some(7 * DAY),
            job_errors: Some(30 * DAY),
        }
    }

    /// The window of one table (s).
    pub fn get(&self, t: RetentionTable) -> Option<u64> {
        match t {
            RetentionTable::ArchivedJobs => self.archived_jobs,
            RetentionTable::DeadLetter => self.dead_letter,
            RetentionTable::TaskLogs => self.task_logs,
            RetentionTable::TaskMetrics => self.task_metrics,
            RetentionTable::JobErrors => self.job_errors,
        }
    }

    /// Sets the window of one table (s).
    pub fn set(&mut self, t: RetentionTable, secs: Option<u64>) {
        let slot = match t {
            RetentionTable::ArchivedJobs => &mut self.archived_jobs,
            RetentionTable::DeadLetter => &mut self.dead_letter,
            RetentionTable::TaskLogs => &mut self.task_logs,
            RetentionTable::TaskMetrics => &mut self.task_metrics,
            RetentionTable::JobErrors => &mut self.job_errors,
        };
        *slot = secs;
    }

    /// Whether any window is set.
    pub fn enabled(&self) -> bool {
        RetentionTable::ALL.iter().any(|t| self.get(*t).is_some())
    }

    /// Rejects windows of zero seconds or too large to express in milliseconds.
    pub fn validate(&self) -> Result<()> {
        for t in RetentionTable::ALL {
            if let Some(s) = self.get(t) {
                if s == 0 || s > (i64::MAX as u64) / 1_000 {
                    return Err(Error::invalid(format!(
                        "retention window for {t} must be 1 s or more, got {s}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The windows in milliseconds. One too large for milliseconds (which [`Retention::validate`]
    /// refuses, but a deserialised value may hold) saturates at `u64::MAX`, which keeps every row.
    pub fn windows_ms(&self) -> RetentionWindows {
        RetentionWindows(
            RetentionTable::ALL.iter().map(|t| (*t, self.get(*t).map(|s| s.saturating_mul(1_000)))).collect(),
        )
    }
}

/// Windows per table in **milliseconds** (`None`: kept forever).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionWindows(pub BTreeMap<RetentionTable, Option<u64>>);

impl RetentionWindows {
    /// The window of a table (ms).
    pub fn get(&self, t: RetentionTable) -> Option<u64> {
        self.0.get(&t).copied().flatten()
    }

    /// The cutoff (Unix ms) before which rows of `t` go, at `now`.
    pub fn cutoff(&self, t: RetentionTable, now: i64) -> Option<i64> {
        self.get(t).map(|w| now.saturating_sub(i64::try_from(w).unwrap_or(i64::MAX)))
    }
}

/// What the elected cleaner applied on its last sweep (windows in ms, `reported_at` Unix ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EffectiveRetention {
    /// Whether any window is set.
    pub enabled: bool,
    /// Whether the windows are the recommended defaults set by no one.
    pub defaulted: bool,
    /// The namespace swept.
    pub namespace: String,
    /// When the sweep published this (Unix ms).
    pub reported_at: i64,
    /// Windows (ms).
    pub windows: RetentionWindows,
}

/// What a purge would delete now (windows in ms, `reference_time` Unix ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetentionPreview {
    /// Whether any window is set.
    pub enabled: bool,
    /// Whether the windows are the recommended defaults.
    pub defaulted: bool,
    /// The namespace.
    pub namespace: String,
    /// The `now` of the snapshot (Unix ms).
    pub reference_time: i64,
    /// Windows (ms).
    pub windows: RetentionWindows,
    /// Rows that would go, per table.
    pub counts: BTreeMap<RetentionTable, u64>,
    /// Sum of `counts`.
    pub total: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_in_milliseconds_out() {
        let r = Retention { task_logs: Some(60), ..Default::default() };
        let w = r.windows_ms();
        assert_eq!(w.get(RetentionTable::TaskLogs), Some(60_000));
        assert_eq!(w.get(RetentionTable::DeadLetter), None);
        assert_eq!(w.cutoff(RetentionTable::TaskLogs, 100_000), Some(40_000));
        assert!(Retention::recommended().enabled());
        assert!(!Retention::default().enabled());
        assert!(Retention { job_errors: Some(0), ..Default::default() }.validate().is_err());
        assert_eq!(RetentionTable::parse("deadLetter").unwrap(), RetentionTable::DeadLetter);
        assert!(RetentionTable::parse("nope").is_err());
    }

    #[test]
    fn unvalidated_windows_saturate_instead_of_overflowing() {
        let r = Retention { archived_jobs: Some(u64::MAX), ..Default::default() };
        assert!(r.validate().is_err());
        assert_eq!(r.windows_ms().get(RetentionTable::ArchivedJobs), Some(u64::MAX));
        assert_eq!(r.windows_ms().cutoff(RetentionTable::ArchivedJobs, 0), Some(-i64::MAX));
    }
}
