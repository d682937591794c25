//! Events retention: the elected cleaner trims each namespace's stream to a length and,
//! optionally, an age, so the stream stays a window onto recent history rather than growing
//! with every job ever run.

use std::time::Duration;

use flexiq_core::events::DEFAULT_EVENTS_MAX_LEN;
use tracing::Instrument;

use crate::error::{Error, Result};
use crate::queue::Queue;

/// How much of the stream is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventTrimConfig {
    /// Newest events kept per namespace (default 10,000; 0 keeps none).
    pub max_len: u64,
    /// Events older than this go too, when set (at least 1 s).
    pub max_age: Option<Duration>,
}

impl Default for EventTrimConfig {
    fn default() -> Self {
        EventTrimConfig { max_len: DEFAULT_EVENTS_MAX_LEN, max_age: None }
    }
}

impl EventTrimConfig {
    /// Checks an age of at least 1 s and a length that fits a signed count.
    pub fn validate(&self) -> Result<()> {
        if self.max_age.is_some_and(|a| a < Duration::from_secs(1)) {
            return Err(Error::invalid("events max age must be at least 1 s"));
        }
        if i64::try_from(self.max_len).is_err() {
            return Err(Error::invalid(format!("events max length {} is too large", self.max_len)));
        }
        Ok(())
    }
}

/// What one trim removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventTrimReport {
    /// Events dropped.
    pub trimmed: u64,
}

/// Trims the events stream of one namespace.
#[derive(Debug, Clone)]
pub struct EventTrimmer {
    queue: Queue,
    config: EventTrimConfig,
}

impl EventTrimmer {
    /// A trimmer for `queue`'s namespace.
    pub fn new(queue: &Queue, config: EventTrimConfig) -> Result<Self> {
        config.validate()?;
        Ok(EventTrimmer { queue: queue.clone(), config })
    }

    /// Trims once.
    pub async fn run_once(&self) -> Result<EventTrimReport> {
        let span = tracing::info_span!("sweep", kind = "events", namespace = %self.queue.namespace());
        async {
            let age = self.config.max_age.map(|a| i64::try_from(a.as_millis()).unwrap_or(i64::MAX));
            let trimmed = self.queue.trim_events(self.config.max_len as i64, age).await?;
            Ok(EventTrimReport { trimmed })
        }
        .instrument(span)
        .await
    }
}
