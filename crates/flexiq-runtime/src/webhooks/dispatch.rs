//! The [`WebhookDispatcher`]: turns a namespace's events into delivery jobs.
//!
//! One dispatcher per namespace is elected (lease `flexiq.webhooks`, beside the cleaner's), so
//! a fleet of workers reads the events stream once. It keeps its place in the stream in the
//! setting `webhooks:cursor:<namespace>` (the last event id it turned into deliveries), moved
//! by compare-and-set so two dispatchers that overlap during a leader change cannot both move
//! it. Should both still enqueue the same event, each delivery job carries the dedup key
//! `webhook:<hook>:<event id>` in throttle mode for [`DispatchConfig::dedup_window`], so the
//! second enqueue is absorbed: one delivery per (hook, event).
//!
//! A namespace with no hook costs a settings read per round and writes nothing. When the first
//! hook appears the cursor starts at the newest event then (or at the start of an empty
//! stream), so a new hook receives what happens from then on, not the stream's backlog. Events of the delivery queue itself are
//! never delivered (each delivery would otherwise report itself).

use std::time::Duration;

use flexiq_core::dedup::{DedupMode, DedupOptions};
use flexiq_core::events::QueueEvent;
use flexiq_core::{Backoff, EnqueueOptions};
use tokio_util::sync::CancellationToken;

use super::config::{list_hooks, WebhookConfig};
use super::deliver::Delivery;
use super::{CURSOR_PREFIX, DELIVER_TASK, QUEUE};
use crate::error::{Error, Result};
use crate::queue::{EnqueueItem, Queue};
use crate::services::{Elector, ElectorConfig, MaintenanceConfig};

/// The lease the dispatcher of a namespace is elected under.
pub const DISPATCH_LEASE: &str = "flexiq.webhooks";

/// How a [`WebhookDispatcher`] reads and enqueues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchConfig {
    /// Events read per batch (1 to 10,000; default 500).
    pub batch: u32,
    /// Batches at most per round, so one round stays short (default 20).
    pub max_batches: u32,
    /// How long the (hook, event) dedup key holds (default 7 days).
    pub dedup_window: Duration,
    /// Backoff of failed deliveries (default 1 s doubling up to 1 h).
    pub backoff: Backoff,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        DispatchConfig {
            batch: 500,
            max_batches: 20,
            dedup_window: Duration::from_secs(7 * 86_400),
            backoff: Backoff::default(),
        }
    }
}

impl DispatchConfig {
    /// Checks the limits; `InvalidArgument` names the field.
    pub fn validate(&self) -> Result<()> {
        if !(1..=flexiq_core::events::MAX_EVENTS_PER_READ).contains(&self.batch) {
            return Err(Error::invalid(format!("webhook dispatch batch {} must be 1 to 10000", self.batch)));
        }
        if self.max_batches == 0 {
            return Err(Error::invalid("webhook dispatch max_batches must be at least 1"));
        }
        if self.dedup_window < Duration::from_secs(1) {
            return Err(Error::invalid("webhook dedup window must be at least 1 s"));
        }
        Ok(self.backoff.validate()?)
    }
}

/// What one dispatch round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchReport {
    /// Valid hooks found.
    pub hooks: usize,
    /// Hooks whose setting is not a valid hook (skipped), by name.
    pub invalid_hooks: Vec<String>,
    /// Events read from the stream.
    pub events: usize,
    /// Delivery jobs enqueued (before dedup).
    pub deliveries: usize,
    /// The cursor after the round (`""`: the start of the stream; `None`: no hook, no cursor).
    pub cursor: Option<String>,
    /// Another dispatcher moved the cursor first (this round's deliveries were deduplicated).
    pub lost_race: bool,
}

/// Enqueues a delivery job per (hook, event) for a namespace's new events.
#[derive(Debug, Clone)]
pub struct WebhookDispatcher {
    queue: Queue,
    config: DispatchConfig,
}

impl WebhookDispatcher {
    /// A dispatcher for `queue`'s namespace.
    pub fn new(queue: &Queue, config: DispatchConfig) -> Result<Self> {
        config.validate()?;
        Ok(WebhookDispatcher { queue: queue.clone(), config })
    }

    fn cursor_key(&self) -> String {
        format!("{CURSOR_PREFIX}{}", self.queue.namespace())
    }

    /// Whether any valid hook exists, with the valid ones and the broken names.
    async fn hooks(&self) -> Result<(Vec<(String, WebhookConfig)>, Vec<String>)> {
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        for (name, parsed) in list_hooks(&self.queue).await? {
            match parsed {
                Ok(cfg) => ok.push((name, cfg)),
                Err(e) => {
                    tracing::warn!(hook = %name, error = %e, "webhook setting is not a valid hook: skipped");
                    bad.push(name);
                }
            }
        }
        Ok((ok, bad))
    }

    /// One round: read the events after the cursor, enqueue their deliveries, move the cursor.
    pub async fn run_once(&self) -> Result<DispatchReport> {
        let (hooks, invalid_hooks) = self.hooks().await?;
        let mut report = DispatchReport { hooks: hooks.len(), invalid_hooks, ..Default::default() };
        if hooks.is_empty() {
            return Ok(report);
        }
        let key = self.cursor_key();
        let cursor = match self.queue.get_setting(&key).await? {
            Some(c) => c,
            None => {
                // The newest event now, or "" (the start) for an empty stream.
                let start = self.queue.last_event_id().await?.unwrap_or_default();
                if !self.queue.set_setting_if(&key, None, &start).await? {
                    report.lost_race = true;
                    return Ok(report);
                }
                tracing::info!(namespace = self.queue.namespace(), cursor = %start, "webhook dispatch starts");
                start
            }
        };
        self.dispatch_from(cursor, &key, &hooks, report).await
    }

    /// Reads after `cursor` (the stored value; `""` is the start of the stream) batch by batch.
    async fn dispatch_from(
        &self,
        mut cursor: String,
        key: &str,
        hooks: &[(String, WebhookConfig)],
        mut report: DispatchReport,
    ) -> Result<DispatchReport> {
        for _ in 0..self.config.max_batches {
            let after = (!cursor.is_empty()).then_some(cursor.as_str());
            let events = self.queue.read_events(after, 0, i64::from(self.config.batch)).await?;
            let Some(last) = events.last().map(|e| e.id.clone()) else { break };
            let items = self.deliveries(&events, hooks)?;
            report.events += events.len();
            report.deliveries += items.len();
            if !items.is_empty() {
                self.queue.enqueue_many(items).await?;
            }
            if !self.queue.set_setting_if(key, Some(&cursor), &last).await? {
                report.lost_race = true;
                break;
            }
            cursor = last;
            if events.len() < self.config.batch as usize {
                break;
            }
        }
        if report.deliveries > 0 {
            tracing::debug!(
                namespace = self.queue.namespace(),
                deliveries = report.deliveries,
                "webhook deliveries enqueued"
            );
        }
        report.cursor = Some(cursor);
        Ok(report)
    }

    fn deliveries(
        &self,
        events: &[QueueEvent],
        hooks: &[(String, WebhookConfig)],
    ) -> Result<Vec<EnqueueItem>> {
        let ns = self.queue.namespace();
        let mut items = Vec::new();
        for ev in events.iter().filter(|e| e.queue.as_deref() != Some(QUEUE)) {
            for (name, cfg) in hooks.iter().filter(|(_, c)| c.wants(ns, ev)) {
                let delivery = Delivery { hook: name.clone(), namespace: ns.to_string(), event: ev.clone() };
                let payload = serde_json::to_vec(&delivery)
                    .map_err(|e| Error::invalid(format!("event {} cannot be serialised: {e}", ev.id)))?;
                let metadata = serde_json::json!({
                    "hook": name, "event_id": ev.id, "event": ev.name, "job_id": ev.job_id, "url": cfg.url,
                });
                let dedup = DedupOptions {
                    id: format!("webhook:{name}:{}", ev.id),
                    mode: DedupMode::Throttle,
                    ttl_ms: Some(u64::try_from(self.config.dedup_window.as_millis()).unwrap_or(u64::MAX)),
                    ..Default::default()
                };
                let options = EnqueueOptions {
                    queue: Some(QUEUE.to_string()),
                    max_retries: Some(cfg.max_retries),
                    backoff: Some(self.config.backoff),
                    // The request's own timeout fires first; this only stops a wedged attempt.
                    timeout_ms: Some((cfg.timeout_secs + 30) * 1_000),
                    metadata: Some(metadata.to_string()),
                    dedup: Some(dedup),
                    ..Default::default()
                };
                items.push(EnqueueItem { task: DELIVER_TASK.to_string(), payload, options });
            }
        }
        Ok(items)
    }
}

/// A worker's background dispatch loop: every maintenance interval, campaign for the dispatch
/// lease (only while some hook exists) and, when elected, run a round; resign on `stop`.
pub(crate) async fn run_dispatcher(
    queue: Queue,
    maintenance: MaintenanceConfig,
    holder: String,
    stop: CancellationToken,
) {
    let elector_config =
        ElectorConfig { lease_name: DISPATCH_LEASE.to_string(), ..maintenance.elector.clone() };
    let (elector, dispatcher) = match (
        Elector::new(&queue, holder, elector_config),
        WebhookDispatcher::new(&queue, DispatchConfig::default()),
    ) {
        (Ok(e), Ok(d)) => (e, d),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(error = %e, "webhook dispatch disabled: bad configuration");
            return;
        }
    };
    let mut campaigning = false;
    loop {
        match dispatcher.hooks().await {
            Ok((hooks, _)) if !hooks.is_empty() => {
                campaigning = true;
                match elector.run_once().await {
                    Ok(r) if r.leader => {
                        if let Err(e) = dispatcher.run_once().await {
                            tracing::warn!(error = %e, "webhook dispatch round failed");
                        }
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "webhook dispatch election failed"),
                }
            }
            Ok(_) => {
                if campaigning {
                    let _ = elector.resign().await;
                    campaigning = false;
                }
            }
            Err(e) => tracing::warn!(error = %e, "reading webhook settings failed"),
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(maintenance.interval) => {}
        }
    }
    if campaigning {
        if let Err(e) = elector.resign().await {
            tracing::warn!(error = %e, "could not resign the webhook dispatch lease");
        }
    }
}
