//! `flexiq dlq list | retry | delete | purge`: the dead-letter queue.
//!
//! Entries are addressed by their own id (the `id` column), not the id of the job that died;
//! `retry` enqueues a fresh job from the entry and removes it.

use clap::{ArgGroup, Subcommand};
use comfy_table::Table;
use serde::Serialize;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::commands::view::DeadView;
use crate::connect::{open, Open};
use crate::error::{CliError, CliResult};
use crate::output::{opt_text, short, table, time, Output};

/// `flexiq dlq ...`
#[derive(Debug, Subcommand)]
pub enum DlqCmd {
    /// Dead letters, newest first, one keyset page at a time.
    List {
        /// Page size, 1 to 10,000.
        #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
        limit: i64,
        /// The cursor printed by the previous page.
        #[arg(long, value_name = "CURSOR", conflicts_with = "task")]
        after: Option<String>,
        /// Only entries of this task (newest `--limit` of them).
        #[arg(long)]
        task: Option<String>,
    },
    /// Re-enqueue an entry's job as a new job and remove the entry.
    Retry {
        /// The dead-letter id (not the job id).
        id: String,
    },
    /// Discard one entry without re-enqueueing it.
    Delete {
        /// The dead-letter id (not the job id).
        id: String,
    },
    /// Delete entries older than some seconds, or every entry of one task.
    #[command(group(ArgGroup::new("what").required(true).args(["older_than", "task"])))]
    Purge {
        /// Delete entries that failed more than this many seconds ago.
        #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
        older_than: Option<i64>,
        /// Delete every entry of this task.
        #[arg(long)]
        task: Option<String>,
    },
}

#[derive(Debug, Serialize)]
struct PageView {
    items: Vec<DeadView>,
    next_cursor: Option<String>,
}

/// The dead-letter table (shared with the demo's report).
pub fn dead_table(items: &[DeadView]) -> Table {
    let mut t = table(["id", "job", "queue", "task", "attempts", "failed at", "error"]);
    for d in items {
        t.add_row(vec![
            d.id.clone(),
            d.original_job_id.clone(),
            d.queue.clone(),
            d.task_name.clone(),
            d.retry_count.to_string(),
            time(d.failed_at),
            short(&opt_text(d.error.as_deref()), 70),
        ]);
    }
    t
}

/// Runs a `dlq` subcommand.
pub async fn run(g: &GlobalArgs, cmd: DlqCmd, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    match cmd {
        DlqCmd::List { limit, after, task } => {
            let (items, next_cursor) = match task {
                Some(task) => (q.dead_letters_by_task(&task, limit, 0).await?, None),
                None => {
                    let page = q.dead_letters_after(limit, after.as_deref()).await?;
                    (page.items, page.next_cursor)
                }
            };
            let view = PageView { items: items.iter().map(DeadView::from).collect(), next_cursor };
            out.emit(&view, || {
                outln!("{}", dead_table(&view.items));
                match &view.next_cursor {
                    Some(c) => outln!("{} dead letters; next page: --after {c}", view.items.len()),
                    None => outln!("{} dead letters; last page", view.items.len()),
                }
            })
        }
        DlqCmd::Retry { id } => {
            let job_id = q.retry_dead(&id).await?;
            out.emit(&json!({ "dead_id": id, "job_id": job_id.as_str() }), || {
                outln!("dead letter {id} re-enqueued as job {job_id}");
            })
        }
        DlqCmd::Delete { id } => {
            if !q.delete_dead(&id).await? {
                return Err(CliError::not_found(format!("dead letter {id} not found")));
            }
            out.emit(&json!({ "deleted": id }), || outln!("dead letter {id} deleted"))
        }
        DlqCmd::Purge { older_than, task } => {
            let deleted = match (older_than, task) {
                (Some(secs), None) => q.purge_dead(secs).await?,
                (None, Some(task)) => q.purge_dead_by_task(&task).await?,
                _ => return Err(CliError::invalid("give either --older-than or --task")),
            };
            out.emit(&json!({ "deleted": deleted }), || outln!("{deleted} dead letters deleted"))
        }
    }
}
