//! `remove_orphans`: the rows of side tables whose job is gone from both the hot table and the
//! archive, left by removals that bypassed the store (or by builds before every removal took
//! a job's history with it).
//!
//! Each sweep walks one side table (the namespace's rows where the table has a namespace
//! column; all rows of `job_partials` and `job_deps`, which have none, since a job id is unique
//! across namespaces) and probes the jobs and the archive by id. A dedup record whose holder
//! is gone holds nothing and goes too. An edge whose dependency is
//! gone is removed and its dependent, when it is a live job of this namespace, re-evaluated as
//! if the edge had never been ([`reevaluate`]). Dead letters are not orphans: an entry outlives
//! its job by design, and retrying it enqueues the job anew.

use flexiq_core::Result;

use crate::error::SqlResultExt;
use crate::removal::reevaluate;
use crate::writer::WriteCtx;

/// `NOT EXISTS` in the hot table and the archive for the job id in column `col`.
macro_rules! gone {
    ($col:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = ",
            $col,
            ") AND NOT EXISTS (SELECT 1 FROM archived_jobs a WHERE a.id = ",
            $col,
            ")"
        )
    };
}

/// The sweeps that delete orphans outright: (table, DELETE, whether `?1` is the namespace).
pub(crate) const SWEEPS: [(&str, &str, bool); 7] = [
    ("job_errors", concat!("DELETE FROM job_errors WHERE ns = ?1 AND ", gone!("job_errors.job_id")), true),
    ("task_logs", concat!("DELETE FROM task_logs WHERE ns = ?1 AND ", gone!("task_logs.job_id")), true),
    (
        "task_metrics",
        concat!("DELETE FROM task_metrics WHERE ns = ?1 AND ", gone!("task_metrics.job_id")),
        true,
    ),
    ("replays", concat!("DELETE FROM replays WHERE ns = ?1 AND ", gone!("replays.original_job_id")), true),
    ("job_partials", concat!("DELETE FROM job_partials WHERE ", gone!("job_partials.job_id")), false),
    ("job_deps", concat!("DELETE FROM job_deps WHERE ", gone!("job_deps.job_id")), false),
    ("dedup_keys", concat!("DELETE FROM dedup_keys WHERE ns = ?1 AND ", gone!("dedup_keys.job_id")), true),
];

/// Edges whose dependency is gone while their dependent is a live job of `?1`. The cross join
/// keeps the edges the outer loop: a file holds far fewer of them than jobs.
pub(crate) const DANGLING_EDGES: &str = concat!(
    "SELECT d.job_id, d.dep_id FROM job_deps d CROSS JOIN jobs w ON w.id = d.job_id AND w.ns = ?1 WHERE ",
    gone!("d.dep_id")
);

/// Removes every orphan of `ns` (see the module docs); returns how many rows went.
pub(crate) fn remove(ctx: &mut WriteCtx<'_>, ns: &str, now: i64) -> Result<u64> {
    let mut n = 0;
    for (_, sql, by_ns) in SWEEPS {
        let mut stmt = ctx.conn.prepare_cached(sql).db()?;
        let removed = if by_ns { stmt.execute([ns]) } else { stmt.execute([]) };
        n += removed.db()? as u64;
    }
    let dangling: Vec<(String, String)> = {
        let mut stmt = ctx.conn.prepare_cached(DANGLING_EDGES).db()?;
        let rows = stmt.query_map([ns], |r| Ok((r.get(0)?, r.get(1)?))).db()?;
        rows.collect::<rusqlite::Result<_>>().db()?
    };
    for (job, dep) in &dangling {
        ctx.conn
            .prepare_cached("DELETE FROM job_deps WHERE job_id = ?1 AND dep_id = ?2")
            .db()?
            .execute((job, dep))
            .db()?;
        n += 1;
    }
    let mut freed: Vec<&str> = dangling.iter().map(|(job, _)| job.as_str()).collect();
    freed.sort_unstable();
    freed.dedup();
    for job in freed {
        reevaluate(ctx, ns, job, now)?;
    }
    Ok(n)
}
