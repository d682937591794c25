//! `flexiq jobs deps | detach`: a job's dependencies (a flow parent's children, or what a job
//! names in `depends_on`) by outcome, and detaching a child from the jobs waiting on it.
//!
//! `deps` prints one keyset page of children ordered by child id, each with its outcome as
//! the parent sees it (processed, unprocessed, ignored, failed), and the cursor of the next
//! page; the cursor is the last child's id, so a garbage one is an invalid argument (exit 2).
//! `detach` reports whether an edge was removed: a finished child, or one nothing waits on,
//! is left alone (exit 0, `detached: false`), since nothing is then holding a parent back.

use flexiq::{ChildDependency, Dependencies, EdgePolicy, JobStatus};
use serde::Serialize;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::commands::view::Bytes;
use crate::connect::{open, Open};
use crate::error::CliResult;
use crate::output::{opt_text, short, table, Output};

/// Children one `jobs deps` page shows unless `--limit` says otherwise.
pub const DEFAULT_DEPS_LIMIT: i64 = 100;

/// One child as printed.
#[derive(Debug, Clone, Serialize)]
pub struct ChildView {
    /// Child job id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// Its task.
    pub task: String,
    /// Its status.
    pub status: JobStatus,
    /// What its failure does to the parent.
    pub policy: EdgePolicy,
    /// The result of a completed child.
    pub result: Option<Bytes>,
    /// The last error of a failed child.
    pub error: Option<String>,
}

impl From<&ChildDependency> for ChildView {
    fn from(c: &ChildDependency) -> Self {
        ChildView {
            id: c.id.to_string(),
            queue: c.queue.clone(),
            task: c.task.clone(),
            status: c.status,
            policy: c.policy,
            result: c.result.as_deref().map(Bytes::of),
            error: c.error.clone(),
        }
    }
}

/// One page as printed with `--json`.
#[derive(Debug, Serialize)]
struct DepsView {
    job_id: String,
    processed: Vec<ChildView>,
    unprocessed: Vec<ChildView>,
    ignored: Vec<ChildView>,
    failed: Vec<ChildView>,
    next_after: Option<String>,
}

impl DepsView {
    fn of(job_id: &str, d: &Dependencies) -> Self {
        let views = |v: &[ChildDependency]| v.iter().map(ChildView::from).collect();
        DepsView {
            job_id: job_id.to_string(),
            processed: views(&d.processed),
            unprocessed: views(&d.unprocessed),
            ignored: views(&d.ignored),
            failed: views(&d.failed),
            next_after: d.next_after.as_ref().map(|id| id.to_string()),
        }
    }

    /// Every child with its outcome, in the order the outcomes are listed.
    fn rows(&self) -> impl Iterator<Item = (&'static str, &ChildView)> {
        self.processed
            .iter()
            .map(|c| ("processed", c))
            .chain(self.unprocessed.iter().map(|c| ("unprocessed", c)))
            .chain(self.ignored.iter().map(|c| ("ignored", c)))
            .chain(self.failed.iter().map(|c| ("failed", c)))
    }
}

/// `flexiq jobs deps ID [--after CHILD_ID] [--limit N]`.
pub async fn deps(g: &GlobalArgs, id: &str, after: Option<&str>, limit: i64, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    let page = q.get_dependencies(id, after, limit).await?;
    let view = DepsView::of(id, &page);
    out.emit(&view, || print_deps(&view))
}

fn print_deps(v: &DepsView) {
    let mut t = table(["outcome", "id", "queue", "task", "status", "policy", "result", "error"]);
    let mut n = 0;
    for (outcome, c) in v.rows() {
        n += 1;
        t.add_row(vec![
            outcome.to_string(),
            c.id.clone(),
            c.queue.clone(),
            c.task.clone(),
            c.status.to_string(),
            c.policy.to_string(),
            short(&c.result.as_ref().map_or_else(|| "-".to_string(), Bytes::display), 30),
            short(&opt_text(c.error.as_deref()), 40),
        ]);
    }
    outln!("{t}");
    match &v.next_after {
        Some(c) => outln!("{n} dependencies of job {}; next page: --after {c}", v.job_id),
        None => outln!("{n} dependencies of job {}; last page", v.job_id),
    }
}

/// `flexiq jobs detach CHILD_ID`.
pub async fn detach(g: &GlobalArgs, child_id: &str, out: Output) -> CliResult {
    let q = open(g, Open::Existing).await?;
    let detached = q.remove_child_dependency(child_id).await?;
    out.emit(&json!({ "child_id": child_id, "detached": detached }), || {
        if detached {
            outln!("detached job {child_id} from the jobs waiting on it");
        } else {
            outln!("job {child_id} was not detached: it has finished, or no job waits on it");
        }
    })
}
