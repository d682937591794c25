//! Archival: moves terminal jobs out of the hot table so listings and claims stay fast.

use std::time::Duration;

use flexiq_core::store::ArchiveTerminalRequest;
use tracing::Instrument;

use crate::error::{Error, Result};
use crate::queue::Queue;

/// Which terminal jobs go to the archive, and how many per round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveConfig {
    /// Terminal jobs that finished more than this long ago are archived (default 1 h).
    pub after: Duration,
    /// Jobs moved per store call (default 1,000).
    pub batch: u32,
    /// Most store calls per run (default 10), so one run stays short.
    pub max_batches: u32,
}

impl Default for ArchiveConfig {
    fn default() -> Self {
        ArchiveConfig { after: Duration::from_secs(3_600), batch: 1_000, max_batches: 10 }
    }
}

impl ArchiveConfig {
    /// Checks a positive batch and batch count.
    pub fn validate(&self) -> Result<()> {
        if self.batch == 0 || self.max_batches == 0 {
            return Err(Error::invalid("archive batch and max_batches must be at least 1"));
        }
        Ok(())
    }
}

/// What one archival run moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArchiveReport {
    /// Jobs moved into the archive.
    pub archived: u64,
    /// The cutoff used (Unix ms): jobs finished before it were eligible.
    pub cutoff: i64,
}

/// Moves terminal jobs into the archive.
#[derive(Debug, Clone)]
pub struct Archiver {
    queue: Queue,
    config: ArchiveConfig,
}

impl Archiver {
    /// An archiver for `queue`'s namespace.
    pub fn new(queue: &Queue, config: ArchiveConfig) -> Result<Self> {
        config.validate()?;
        Ok(Archiver { queue: queue.clone(), config })
    }

    /// Archives eligible jobs in batches until none are left or `max_batches` ran.
    pub async fn run_once(&self) -> Result<ArchiveReport> {
        let span = tracing::info_span!("sweep", kind = "archive", namespace = %self.queue.namespace());
        async {
            let now = self.queue.now_ms();
            let after = i64::try_from(self.config.after.as_millis()).unwrap_or(i64::MAX);
            let cutoff = now.saturating_sub(after);
            let mut archived = 0;
            for _ in 0..self.config.max_batches {
                let req = ArchiveTerminalRequest { cutoff_ms: cutoff, limit: self.config.batch, now };
                let n = self.queue.store().archive_terminal(req).await?;
                archived += n;
                if n < u64::from(self.config.batch) {
                    break;
                }
            }
            if archived > 0 {
                tracing::info!(archived, "archived terminal jobs");
            }
            Ok(ArchiveReport { archived, cutoff })
        }
        .instrument(span)
        .await
    }
}
