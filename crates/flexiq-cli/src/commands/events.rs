//! `flexiq events tail | last | publish | trim | enable | disable | status`: the events stream
//! of a namespace from a terminal.
//!
//! `tail` follows the stream as other processes commit (it blocks on the store, it does not
//! poll), one line per event; with `--json` each line is one JSON object, so it pipes into
//! `jq`. It prints the id of every event so an operator can resume with `--after` exactly where
//! an earlier tail stopped. It runs until Ctrl-C, or until `--count` events were printed.

use std::time::Duration;

use clap::Subcommand;
use flexiq::{EventsFrom, EventsOptions, QueueEvent};
use futures::StreamExt;
use serde_json::{json, Value};

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::{short, time, Output};

/// `flexiq events ...`
#[derive(Debug, Subcommand)]
pub enum EventsCmd {
    /// Follow the stream: print each event as it commits, from any process.
    Tail {
        /// Start after this event id (printed by an earlier tail) instead of at the end.
        #[arg(long, value_name = "ID", conflicts_with = "from_start")]
        after: Option<String>,
        /// Start at the oldest event kept instead of at the end.
        #[arg(long)]
        from_start: bool,
        /// Only these kinds (`completed`, `failed`, ...) or custom event names; repeatable.
        #[arg(long = "kind", value_name = "KIND")]
        kinds: Vec<String>,
        /// Exit after printing this many events.
        #[arg(long, allow_negative_numbers = true)]
        count: Option<i64>,
    },
    /// The newest event's id.
    Last,
    /// Publish a custom event.
    Publish {
        /// The event name (not a built-in kind's).
        name: String,
        /// JSON data to carry.
        #[arg(long, default_value = "null")]
        data: String,
        /// The job it is about.
        #[arg(long, value_name = "ID")]
        job: Option<String>,
        /// The queue it is about.
        #[arg(long)]
        queue: Option<String>,
    },
    /// Keep only the newest events (the elected cleaner does this every round).
    Trim {
        /// Newest events kept.
        #[arg(long, allow_negative_numbers = true)]
        max_len: i64,
        /// Also drop events older than this many seconds.
        #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
        max_age: Option<i64>,
    },
    /// Write events for this namespace again.
    Enable,
    /// Stop writing events for this namespace (reads still work).
    Disable,
    /// Whether this namespace writes events, and its newest event id.
    Status,
}

fn as_json(e: &QueueEvent) -> Value {
    json!({
        "id": e.id,
        "kind": e.kind,
        "name": e.name,
        "job_id": e.job_id,
        "queue": e.queue,
        "task": e.task,
        "attempt": e.attempt,
        "at_ms": e.at_ms,
        "data": e.data,
    })
}

fn line(e: &QueueEvent) -> String {
    let mut text = format!("{}  {}  {:<12}", e.id, time(e.at_ms), e.name);
    if let Some(id) = &e.job_id {
        text.push_str(&format!("  job {id}"));
    }
    if let Some(q) = &e.queue {
        text.push_str(&format!("  queue {q}"));
    }
    if let Some(t) = &e.task {
        text.push_str(&format!("  task {t}"));
    }
    if let Some(a) = e.attempt {
        text.push_str(&format!("  attempt {a}"));
    }
    let empty = e.data.is_null() || e.data.as_object().is_some_and(|o| o.is_empty());
    if !empty {
        text.push_str(&format!("  {}", short(&e.data.to_string(), 200)));
    }
    text
}

/// Runs an `events` subcommand.
pub async fn run(g: &GlobalArgs, cmd: EventsCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    match cmd {
        EventsCmd::Tail { after, from_start, kinds, count } => {
            let limit = match count {
                Some(n) if n < 1 => return Err(CliError::invalid(format!("count {n} must be at least 1"))),
                Some(n) => Some(n as u64),
                None => None,
            };
            let from = match (after, from_start) {
                (Some(id), _) => EventsFrom::After(id),
                (None, true) => EventsFrom::Start,
                (None, false) => EventsFrom::Now,
            };
            let opts = EventsOptions { from, kinds, block: Duration::from_secs(5), ..Default::default() };
            let mut stream = q.events(opts).await?;
            let mut printed = 0u64;
            while limit.is_none_or(|n| printed < n) {
                let next = tokio::select! {
                    next = stream.next() => next,
                    _ = tokio::signal::ctrl_c() => break,
                };
                let Some(ev) = next else { break };
                let ev = ev?;
                if out.json {
                    outln!("{}", as_json(&ev));
                } else {
                    outln!("{}", line(&ev));
                }
                printed += 1;
            }
            Ok(())
        }
        EventsCmd::Last => {
            let last = q.last_event_id().await?;
            out.emit(&json!({ "last_event_id": last }), || match &last {
                Some(id) => outln!("{id}"),
                None => outln!("no events"),
            })
        }
        EventsCmd::Publish { name, data, job, queue } => {
            let data: Value = serde_json::from_str(&data)
                .map_err(|e| CliError::invalid(format!("--data is not JSON: {e}")))?;
            let id = q.publish_event(&name, data, job.as_deref(), queue.as_deref()).await?;
            out.emit(&json!({ "id": id, "name": name }), || outln!("published {name} as {id}"))
        }
        EventsCmd::Trim { max_len, max_age } => {
            let age_ms = match max_age {
                Some(s) if s < 1 => {
                    return Err(CliError::invalid(format!("max age {s} s must be at least 1")))
                }
                Some(s) => Some(s.saturating_mul(1_000)),
                None => None,
            };
            let trimmed = q.trim_events(max_len, age_ms).await?;
            out.emit(&json!({ "trimmed": trimmed }), || outln!("trimmed {trimmed} events"))
        }
        EventsCmd::Enable | EventsCmd::Disable => {
            let enabled = matches!(cmd, EventsCmd::Enable);
            q.set_events_enabled(enabled).await?;
            let word = if enabled { "enabled" } else { "disabled" };
            out.emit(&json!({ "enabled": enabled }), || outln!("events {word} for this namespace"))
        }
        EventsCmd::Status => {
            let enabled = q.events_enabled().await?;
            let last = q.last_event_id().await?;
            out.emit(&json!({ "enabled": enabled, "last_event_id": last }), || {
                let word = if enabled { "on" } else { "off" };
                outln!("events: {word}");
                outln!("newest event: {}", last.as_deref().unwrap_or("none"));
            })
        }
    }
}
