//! Removing jobs with everything kept about them, inside the caller's write.
//!
//! Every administrative removal ends here, so a removed job leaves nothing behind: its row
//! (and with it every index entry, its unique key hold and its workflow stage), the dedup
//! record it holds, its partials, errors, logs, metric rows, the replay records of it, its
//! dead-letter entry, its dependency edges both ways and its counter. The row itself goes
//! through `control::delete_job`, the path `purge_completed` and `delete_stages` share. A job
//! that waited on a removed one drops the edge and is re-evaluated with `flows::standing` over
//! the edges it has left, exactly as if the removed job had never been one of them: none left
//! or all settled starts it, a failed one whose edge's policy ends it cancels or fails it
//! through the state machine.
//!
//! Callers queue their write with `needs_counts`, so the batch's buffered metric rows are
//! written before the rows naming a removed job are deleted.

use std::collections::HashSet;

use flexiq_core::transition::Event;
use flexiq_core::{JobStatus, Result};
use rusqlite::Connection;

use crate::apply::{fire, Extras};
use crate::control::delete_job;
use crate::dedup;
use crate::error::SqlResultExt;
use crate::flows::{self, Standing};
use crate::row::{deps_of, load_state, Loaded};
use crate::writer::WriteCtx;

/// The history of one job that no other job shares: errors, logs, metric rows and the records
/// of its replays.
pub(crate) const HISTORY: [&str; 4] = [
    "DELETE FROM job_errors WHERE job_id = ?1",
    "DELETE FROM task_logs WHERE job_id = ?1",
    "DELETE FROM task_metrics WHERE job_id = ?1",
    "DELETE FROM replays WHERE original_job_id = ?1",
];

/// Deletes the history of job `id` (see [`HISTORY`]); its row, partials and edges are left to
/// the caller.
pub(crate) fn delete_history(conn: &Connection, id: &str) -> Result<()> {
    for sql in HISTORY {
        conn.prepare_cached(sql).db()?.execute([id]).db()?;
    }
    Ok(())
}

/// The removal of a job's dead-letter entry.
pub(crate) const DEAD_LETTER_OF_JOB: &str = "DELETE FROM dead_letters WHERE original_job_id = ?1 AND ns = ?2";

/// Deletes the dead-letter entry of job `id` of `ns`, if it has one.
pub(crate) fn delete_dead_letter(conn: &Connection, ns: &str, id: &str) -> Result<()> {
    conn.prepare_cached(DEAD_LETTER_OF_JOB).db()?.execute((id, ns)).db()?;
    Ok(())
}

/// The dependents of job `?1`.
pub(crate) const DEPENDENTS: &str = "SELECT job_id FROM job_deps WHERE dep_id = ?1";

/// The jobs that depend on `id` (the dependent side of its edges).
pub(crate) fn dependents_of(conn: &Connection, id: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(DEPENDENTS).db()?;
    let rows = stmt.query_map([id], |r| r.get(0)).db()?;
    rows.collect::<rusqlite::Result<_>>().db()
}

/// Removes the hot rows `gone` of `ns` (states read in this write) with everything kept about
/// them, then re-evaluates the jobs outside `gone` that waited on one of them.
pub(crate) fn remove_jobs(ctx: &mut WriteCtx<'_>, ns: &str, gone: &[Loaded], now: i64) -> Result<()> {
    let removed: HashSet<&str> = gone.iter().map(|g| g.id.as_str()).collect();
    let mut freed: Vec<String> = Vec::new();
    let mut former_deps: Vec<String> = Vec::new();
    for g in gone {
        let conn = ctx.conn;
        for d in deps_of(conn, &g.id)? {
            if !removed.contains(d.as_str()) && !former_deps.iter().any(|f| f == d.as_str()) {
                former_deps.push(d.to_string());
            }
        }
        for d in dependents_of(conn, &g.id)? {
            if !removed.contains(d.as_str()) && !freed.contains(&d) {
                freed.push(d);
            }
        }
        delete_history(conn, &g.id)?;
        delete_dead_letter(conn, ns, &g.id)?;
        conn.prepare_cached("DELETE FROM job_deps WHERE dep_id = ?1").db()?.execute([&g.id]).db()?;
        delete_job(ctx, ns, &g.id, &g.queue, g.status)?;
    }
    for d in &former_deps {
        unflag_dependents(ctx.conn, d)?;
    }
    for d in &freed {
        reevaluate(ctx, ns, d, now)?;
    }
    Ok(())
}

/// Clears the dependents flag of `id` once no edge names it, so its claims and completions
/// take the plain path again.
pub(crate) fn unflag_dependents(conn: &Connection, id: &str) -> Result<()> {
    conn.prepare_cached(
        "UPDATE jobs SET has_dependents = 0 WHERE id = ?1 AND has_dependents = 1
           AND NOT EXISTS (SELECT 1 FROM job_deps WHERE dep_id = ?1)",
    )
    .db()?
    .execute([id])
    .db()?;
    Ok(())
}

/// Decides again where job `id` of `ns` stands after it lost a dependency edge: a waiting job
/// starts when its remaining edges allow (none left, all settled, or a failed
/// `continue_parent` one), is cancelled or failed when a dependency failed under a policy that
/// ends it, and otherwise keeps waiting. A dependency that no longer exists anywhere counts as
/// no dependency.
pub(crate) fn reevaluate(ctx: &mut WriteCtx<'_>, ns: &str, id: &str, now: i64) -> Result<()> {
    let conn = ctx.conn;
    let edges = flows::edges_of(conn, id)?;
    if edges.is_empty() {
        conn.prepare_cached("UPDATE jobs SET has_deps = 0 WHERE id = ?1 AND has_deps = 1")
            .db()?
            .execute([id])
            .db()?;
    }
    let Some(st) = load_state(conn, ns, id)? else { return Ok(()) };
    if st.status != JobStatus::Waiting {
        return Ok(());
    }
    let event = match flows::standing(conn, ns, &edges)? {
        Standing::Ready => Event::DependenciesMet,
        Standing::Waiting => return Ok(()),
        Standing::Fails(event) => event,
    };
    fire(ctx, ns, &st, &event, now, Extras::default())?;
    Ok(())
}

/// Removes the archived copies `ids` of `ns` with their history and edges (archived rows have
/// no counters); a job that waited on one is re-evaluated as after [`remove_jobs`].
pub(crate) fn remove_archived(ctx: &mut WriteCtx<'_>, ns: &str, ids: &[String], now: i64) -> Result<()> {
    let mut freed: Vec<String> = Vec::new();
    for id in ids {
        let conn = ctx.conn;
        for d in dependents_of(conn, id)? {
            if !freed.contains(&d) {
                freed.push(d);
            }
        }
        delete_history(conn, id)?;
        delete_dead_letter(conn, ns, id)?;
        for sql in [
            "DELETE FROM job_partials WHERE job_id = ?1",
            "DELETE FROM job_deps WHERE job_id = ?1",
            "DELETE FROM job_deps WHERE dep_id = ?1",
        ] {
            conn.prepare_cached(sql).db()?.execute([id]).db()?;
        }
        dedup::release_held(conn, ns, id)?;
        conn.prepare_cached("DELETE FROM archived_jobs WHERE id = ?1 AND ns = ?2")
            .db()?
            .execute((id, ns))
            .db()?;
    }
    for d in freed.iter().filter(|d| !ids.contains(d)) {
        reevaluate(ctx, ns, d, now)?;
    }
    Ok(())
}
