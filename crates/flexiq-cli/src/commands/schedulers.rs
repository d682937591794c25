//! `flexiq schedulers list | show | remove`: the job schedulers of a namespace, what each fires
//! and when it fires next.
//!
//! Schedulers are created from code (`upsert_job_scheduler` in Rust and Python,
//! `upsertJobScheduler` in Node), where their templates are typed; the CLI is the operator's
//! view of them and the way to stop one. Tables show the rule, the task and queue, the next and
//! last slots as UTC date-times and the count fired; JSON keeps Unix ms and the rule as stored.

use clap::Subcommand;
use flexiq::{CatchUp, JobScheduler, Repeat};
use serde_json::{json, Value};

use crate::cli::GlobalArgs;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::{opt_time, table, time, Output};

/// `flexiq schedulers ...`
#[derive(Debug, Subcommand)]
pub enum SchedulersCmd {
    /// Schedulers by id, one keyset page at a time.
    List {
        /// Page size, 1 to 10,000.
        #[arg(long, default_value_t = 50, allow_negative_numbers = true)]
        limit: i64,
        /// The cursor printed by the previous page.
        #[arg(long, value_name = "CURSOR")]
        after: Option<String>,
    },
    /// One scheduler: its rule, template, next and last slot and count.
    Show {
        /// The scheduler id.
        id: String,
    },
    /// Remove a scheduler: it fires no more; the jobs it fired stay.
    Remove {
        /// The scheduler id.
        id: String,
    },
}

fn rule_text(s: &JobScheduler) -> String {
    let mut text = match &s.rule.repeat {
        Repeat::Cron { pattern, tz } => format!("cron {pattern} ({})", tz.as_deref().unwrap_or("UTC")),
        Repeat::Every { every_ms } => format!("every {every_ms} ms"),
    };
    if let Some(limit) = s.rule.limit {
        text.push_str(&format!(", limit {limit}"));
    }
    match s.rule.catch_up {
        CatchUp::Latest => {}
        CatchUp::None => text.push_str(", no catch-up"),
        CatchUp::All { max } => text.push_str(&format!(", catch up all (max {max})")),
    }
    text
}

fn as_json(s: &JobScheduler) -> Value {
    let opts = &s.template.options;
    json!({
        "id": s.id,
        "rule": s.rule,
        "task": s.template.task,
        "queue": opts.queue.as_deref().unwrap_or("default"),
        "payload": String::from_utf8_lossy(&s.template.payload),
        "options": opts,
        "next_run_ms": s.next_run_ms,
        "last_run_ms": s.last_run_ms,
        "iterations": s.iterations,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
    })
}

/// Runs a `schedulers` subcommand.
pub async fn run(g: &GlobalArgs, cmd: SchedulersCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    match cmd {
        SchedulersCmd::List { limit, after } => {
            let page = q.list_job_schedulers(limit, after.as_deref()).await?;
            let view = json!({
                "items": page.items.iter().map(as_json).collect::<Vec<_>>(),
                "next_cursor": page.next_cursor,
            });
            out.emit(&view, || {
                if page.items.is_empty() {
                    outln!("no job schedulers in namespace {}", q.namespace());
                    return;
                }
                let mut t = table(["id", "rule", "task", "queue", "next run", "last run", "fired"]);
                for s in &page.items {
                    t.add_row(vec![
                        s.id.clone(),
                        rule_text(s),
                        s.template.task.clone(),
                        s.template.options.queue.clone().unwrap_or_else(|| "default".into()),
                        s.next_run_ms.map_or_else(|| "(done)".to_string(), time),
                        opt_time(s.last_run_ms),
                        s.iterations.to_string(),
                    ]);
                }
                outln!("{t}");
                if let Some(c) = &page.next_cursor {
                    outln!("{} schedulers; next page: --after {c}", page.items.len());
                }
            })
        }
        SchedulersCmd::Show { id } => {
            let s = q.get_job_scheduler(&id).await?.ok_or_else(|| {
                CliError::not_found(format!("no job scheduler {id} in namespace {}", q.namespace()))
            })?;
            out.emit(&as_json(&s), || {
                outln!("scheduler  {}", s.id);
                outln!("rule       {}", rule_text(&s));
                outln!(
                    "task       {} on queue {}",
                    s.template.task,
                    s.template.options.queue.as_deref().unwrap_or("default")
                );
                outln!("payload    {}", String::from_utf8_lossy(&s.template.payload));
                outln!(
                    "next run   {}",
                    s.next_run_ms.map_or_else(|| "(done: no slot left)".to_string(), time)
                );
                outln!("last run   {}", s.last_run_ms.map_or_else(|| "(never)".to_string(), time));
                outln!("fired      {}", s.iterations);
                outln!("created    {}", time(s.created_at));
                outln!("updated    {}", time(s.updated_at));
            })
        }
        SchedulersCmd::Remove { id } => {
            let removed = q.remove_job_scheduler(&id).await?;
            out.emit(&json!({ "id": id, "removed": removed }), || {
                if removed {
                    outln!("removed job scheduler {id}: it fires no more (the jobs it fired stay)");
                } else {
                    outln!("no job scheduler {id}");
                }
            })
        }
    }
}
