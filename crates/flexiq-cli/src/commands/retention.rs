//! `flexiq retention preview | effective`: what a retention purge would delete, and what the
//! elected cleaner last applied.
//!
//! Windows are given in seconds and reported in milliseconds, as everywhere in flexiq.
//! `preview` with no window flags uses the recommended windows; with some, only those
//! tables are previewed and the others are kept forever.

use clap::{Args, Subcommand};
use flexiq::{Retention, RetentionTable, RetentionWindows};

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::{table, time, Output};

/// Candidate windows, in seconds.
#[derive(Debug, Clone, Default, Args)]
pub struct WindowArgs {
    /// Archived jobs window (s).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub archived_jobs: Option<i64>,
    /// Dead letters window (s).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub dead_letter: Option<i64>,
    /// Task logs window (s).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub task_logs: Option<i64>,
    /// Task metrics window (s).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub task_metrics: Option<i64>,
    /// Job errors window (s).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub job_errors: Option<i64>,
}

impl WindowArgs {
    /// The candidate retention, or `None` when no window was given.
    pub fn retention(&self) -> CliResult<Option<Retention>> {
        let given = [
            (RetentionTable::ArchivedJobs, self.archived_jobs),
            (RetentionTable::DeadLetter, self.dead_letter),
            (RetentionTable::TaskLogs, self.task_logs),
            (RetentionTable::TaskMetrics, self.task_metrics),
            (RetentionTable::JobErrors, self.job_errors),
        ];
        if given.iter().all(|(_, v)| v.is_none()) {
            return Ok(None);
        }
        let mut r = Retention::default();
        for (t, secs) in given {
            if let Some(s) = secs {
                let s = u64::try_from(s).map_err(|_| {
                    CliError::invalid(format!("retention window for {t} must be 1 s or more, got {s}"))
                })?;
                r.set(t, Some(s));
            }
        }
        r.validate()?;
        Ok(Some(r))
    }
}

/// `flexiq retention ...`
#[derive(Debug, Subcommand)]
pub enum RetentionCmd {
    /// Count what a purge would delete now, deleting nothing.
    Preview(WindowArgs),
    /// The windows the elected cleaner last applied (none before a worker has swept).
    Effective,
}

/// A window in ms as a human duration.
fn window(ms: Option<u64>) -> String {
    match ms {
        None => "kept forever".to_string(),
        Some(ms) if ms % 86_400_000 == 0 => format!("{} d", ms / 86_400_000),
        Some(ms) if ms % 3_600_000 == 0 => format!("{} h", ms / 3_600_000),
        Some(ms) => format!("{} s", ms / 1_000),
    }
}

fn windows_table(
    w: &RetentionWindows,
    counts: Option<&std::collections::BTreeMap<RetentionTable, u64>>,
) -> String {
    let mut header = vec!["table", "window"];
    if counts.is_some() {
        header.push("rows to delete");
    }
    let mut t = table(header);
    for tbl in RetentionTable::ALL {
        let mut row = vec![tbl.key().to_string(), window(w.get(tbl))];
        if let Some(c) = counts {
            row.push(c.get(&tbl).copied().unwrap_or(0).to_string());
        }
        t.add_row(row);
    }
    t.to_string()
}

/// Runs a `retention` subcommand.
pub async fn run(g: &GlobalArgs, cmd: RetentionCmd, out: Output) -> CliResult {
    match cmd {
        RetentionCmd::Preview(args) => {
            let candidate = args.retention()?;
            let q = open(g, Open::Existing).await?;
            let p = q.dry_run_retention(candidate).await?;
            out.emit(&p, || {
                let source = if p.defaulted { "recommended windows" } else { "given windows" };
                outln!(
                    "retention preview of namespace {} at {} ({source})",
                    p.namespace,
                    time(p.reference_time)
                );
                outln!("{}", windows_table(&p.windows, Some(&p.counts)));
                outln!("{} rows would be deleted", p.total);
            })
        }
        RetentionCmd::Effective => {
            let q = open(g, Open::Existing).await?;
            let eff = q.effective_retention().await?;
            out.emit(&eff, || match &eff {
                None => outln!("no worker has swept namespace {} yet", q.namespace()),
                Some(e) => {
                    let state = if e.enabled { "enabled" } else { "disabled" };
                    outln!(
                        "retention {state} in namespace {}, reported at {}",
                        e.namespace,
                        time(e.reported_at)
                    );
                    outln!("{}", windows_table(&e.windows, None));
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_from_flags() {
        assert_eq!(WindowArgs::default().retention().unwrap(), None);
        let r = WindowArgs { task_logs: Some(60), ..Default::default() }.retention().unwrap().unwrap();
        assert_eq!(r.task_logs, Some(60));
        assert_eq!(r.archived_jobs, None);
        for bad in [0, -5] {
            let e = WindowArgs { job_errors: Some(bad), ..Default::default() }.retention().unwrap_err();
            assert_eq!(e.code, crate::error::EXIT_INVALID);
        }
        assert_eq!(window(Some(86_400_000 * 30)), "30 d");
        assert_eq!(window(None), "kept forever");
    }
}
