//! The demo's live progress bar: jobs in a terminal status out of all jobs.
//!
//! It reads the store's own counts (not the worker's), so what it shows is what any other
//! process pointed at the store would see. The bar is drawn on stderr and only on a terminal;
//! with `--json` it is not drawn at all.

use std::time::{Duration, Instant};

use flexiq::{Queue, Stats};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{CliError, CliResult};

/// How often the counts are read.
const TICK: Duration = Duration::from_millis(100);

/// Jobs that will not change any more.
pub fn terminal(s: &Stats) -> u64 {
    s.completed + s.failed + s.dead + s.cancelled
}

fn bar(total: u64, visible: bool) -> ProgressBar {
    let target = if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
    let pb = ProgressBar::with_draw_target(Some(total), target);
    let style = ProgressStyle::with_template(
        "{spinner:.green} {elapsed:>3} [{bar:20.cyan/blue}] {pos}/{len} done · {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    pb.set_style(style);
    pb
}

/// Waits until all `total` jobs are terminal, updating the bar; fails after `timeout`.
pub async fn watch(q: &Queue, total: u64, timeout: Duration, visible: bool) -> CliResult {
    let pb = bar(total, visible);
    let started = Instant::now();
    loop {
        let s = q.stats().await?;
        let done = terminal(&s);
        pb.set_message(format!(
            "{} running · {} waiting · {} dead",
            s.running,
            s.pending + s.waiting + s.suspended,
            s.dead
        ));
        pb.set_position(done.min(total));
        if done >= total {
            pb.finish();
            return Ok(());
        }
        if started.elapsed() >= timeout {
            pb.abandon();
            return Err(CliError::other(format!(
                "demo timed out after {} s: {done} of {total} jobs finished ({} pending, {} running, {} waiting)",
                timeout.as_secs(),
                s.pending,
                s.running,
                s.waiting
            )));
        }
        tokio::time::sleep(TICK).await;
    }
}
